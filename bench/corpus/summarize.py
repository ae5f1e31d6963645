"""Counts per level and operator class of a corpus run's results, from the folders' classes.txt.

    python bench/corpus/summarize.py bench/results/corpus_cpu.json > bench/results/corpus_cpu_classes.md

Prints a markdown table (level, class, specs, correct) and the specs without a verified
kernel program with the reason the run recorded.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

CORPUS = Path(__file__).resolve().parent


def classes() -> dict[str, tuple[str, str]]:
    """spec name -> (level folder, class) from every classes.txt of the corpus."""
    found: dict[str, tuple[str, str]] = {}
    for manifest in sorted(CORPUS.glob("*/classes.txt")):
        for line in manifest.read_text().splitlines():
            line = line.split("#", 1)[0].strip()
            if line:
                name, cls = line.split()
                found[Path(name).stem] = (manifest.parent.name, cls)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path)
    args = parser.parse_args()
    specs = json.loads(args.results.read_text())["specs"]
    where = classes()
    counts: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    levels: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for spec in specs:
        level, cls = where.get(spec["spec"], ("?", "?"))
        for bucket in (counts[(level, cls)], levels[level]):
            bucket[0] += 1
            bucket[1] += bool(spec["correct"])
    total = [len(specs), sum(bool(s["correct"]) for s in specs)]
    print(f"# {args.results.name}: verified kernel programs per level and class\n")
    print(f"{total[1]} of {total[0]} specs ({100 * total[1] / max(1, total[0]):.1f}%).\n")
    print("| level | specs | correct |\n|---|---:|---:|")
    for level, (n, ok) in sorted(levels.items()):
        print(f"| `{level}` | {n} | {ok} |")
    print("\n| level | class | specs | correct |\n|---|---|---:|---:|")
    for (level, cls), (n, ok) in sorted(counts.items()):
        print(f"| `{level}` | `{cls}` | {n} | {ok}{'' if ok == n else ' ⚠'} |")
    failed = [spec for spec in specs if not spec["correct"]]
    print("\n## Without a verified kernel program\n")
    if not failed:
        print("None: every spec ended with a verified kernel program.")
        return
    print("| spec | level / class | why |\n|---|---|---|")
    for spec in failed:
        level, cls = where.get(spec["spec"], ("?", "?"))
        why = (spec.get("error") or spec.get("failures") or spec.get("state", "")).replace("|", "/")
        print(f"| `{spec['spec']}` | {level} / {cls} | {why[:240]} |")


if __name__ == "__main__":
    main()
