"""Fingerprints of the offline generator's first draft for every spec of a folder.

    python tools/first_draft_hashes.py --suite bench/suite --platform cuda --out head.json

Run it in two checkouts (``git worktree add /tmp/base COMMIT``, then from that folder with
``PYTHONPATH=$PWD``) and compare the two files with ``--compare``: a spec whose fingerprint
is unchanged gets the same kernel program from both commits, so its timings cannot have
moved and need no GPU run to show it. Each spec is traced in the generator's sandbox as a job
would trace it (seed 0, no screening sizes: the draft the GPU pool times).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import sys
import tempfile
from pathlib import Path


async def fingerprints(suite: Path, platform: str) -> dict[str, str]:
    # Imported here so --compare runs without the generator's dependencies.
    from kevolve.config import REPO_ROOT
    from kevolve.v1 import work_pb2
    from services.generator.backends.offline import OfflineBackend

    backend = OfflineBackend(REPO_ROOT / "kb" / "templates", trace_timeout_s=120,
                             scratch_dir=Path(tempfile.mkdtemp(prefix="kevolve-drafts-")))
    found: dict[str, str] = {}
    try:
        for spec in sorted(suite.glob("*.py")):
            source = spec.read_text()
            if "class Model" not in source:
                continue  # helper modules beside the specs
            expand = work_pb2.ExpandRequest(platform=platform, spec_name=spec.stem, seed=0, tenant="drafts")
            gen = await backend.generate(work_pb2.GenerateRequest(expand=expand), "", source, None)
            text = gen.code if gen.code else f"no code: {gen.error}"
            found[spec.stem] = hashlib.sha256(text.encode()).hexdigest()[:16]
            print(f"{spec.stem} {found[spec.stem]}", flush=True)
    finally:
        await backend.aclose()
    return found


def compare(a: Path, b: Path) -> int:
    left, right = json.loads(a.read_text()), json.loads(b.read_text())
    changed = sorted(k for k in left.keys() | right.keys() if left.get(k) != right.get(k))
    same = len(left.keys() | right.keys()) - len(changed)
    print(f"{same} identical, {len(changed)} changed or missing{': ' + ', '.join(changed) if changed else ''}")
    return 1 if changed else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suite", type=Path, default=Path("bench/suite"))
    parser.add_argument("--platform", default="cuda")
    parser.add_argument("--out", type=Path, help="JSON file of spec -> fingerprint")
    parser.add_argument("--compare", type=Path, nargs=2, metavar=("A", "B"), help="compare two fingerprint files")
    args = parser.parse_args()
    if args.compare:
        return compare(*args.compare)
    found = asyncio.run(fingerprints(args.suite, args.platform))
    if args.out:
        args.out.write_text(json.dumps(found, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
