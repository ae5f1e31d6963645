"""A stratified sample of the corpus: ``--per-class`` specs of every operator class of levels
1-3 and ``--random-per-class`` of the random specs' classes, drawn with a fixed seed, written
as a list ``kevolve bench`` and ``bench/run_*.sh`` take (paths relative to bench/corpus).

    python bench/corpus/stratified_sample.py > bench/corpus/gpu_sample.txt

The list goes round the strata: first one spec of every class of every level, then a second,
so a run cut short still covers every class and level. The draw looks at nothing but the
manifests (file and class): no spec is picked for how kevolve does on it.
"""

from __future__ import annotations

import argparse
import random
from collections import defaultdict
from pathlib import Path

CORPUS = Path(__file__).resolve().parent
LEVELS = ("level1", "level2", "level3")


def manifest(level: str) -> dict[str, list[str]]:
    """Files of one level by class, in manifest order."""
    by_class: dict[str, list[str]] = defaultdict(list)
    for line in (CORPUS / level / "classes.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, op_class = line.split()
            by_class[op_class].append(name)
    return by_class


def sample(per_class: dict[str, int], seed: int) -> list[str]:
    """``per_class[level]`` files of each class of each level, round by round."""
    rng = random.Random(seed)
    rounds: list[list[str]] = []
    for level, count in per_class.items():
        for _, names in sorted(manifest(level).items()):
            for k, name in enumerate(rng.sample(names, min(count, len(names)))):
                while len(rounds) <= k:
                    rounds.append([])
                rounds[k].append(f"{level}/{name}")
    return [entry for picked in rounds for entry in picked]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-class", type=int, default=2, help="of each class of levels 1-3")
    parser.add_argument("--random-per-class", type=int, default=1, help="of each class of the random specs")
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    counts = {**dict.fromkeys(LEVELS, args.per_class), "random": args.random_per_class}
    print(f"# A stratified sample of the corpus: {args.per_class} specs per class of levels 1-3, "
          f"{args.random_per_class} per class of the random specs, seed {args.seed}, round by round.")
    print(f"# Made by: python bench/corpus/stratified_sample.py --per-class {args.per_class} "
          f"--random-per-class {args.random_per_class} --seed {args.seed}")
    for entry in sample(counts, args.seed):
        print(entry)


if __name__ == "__main__":
    main()
