"""The platform table (kb/platforms.toml): what each target name means to every service."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Literal

from kevolve.subjects import check_platform

Runner = Literal["interpreter", "cuda", "simulated"]
Speed = Literal["none", "measured", "simulated"]


@dataclass(frozen=True)
class Platform:
    name: str
    description: str
    kb_hardware: str
    runner: Runner
    speed: Speed
    screen_on: str
    machine_model: str

    @property
    def fitness_is_speed(self) -> bool:
        return self.speed != "none"


class UnknownPlatform(ValueError):
    pass


@lru_cache(maxsize=8)
def load_platforms(kb_dir: Path) -> dict[str, Platform]:
    path = kb_dir / "platforms.toml"
    raw = tomllib.loads(path.read_text())
    table: dict[str, Platform] = {}
    for name, entry in raw.items():
        check_platform(name)
        runner = entry.get("runner")
        speed = entry.get("speed")
        if runner not in ("interpreter", "cuda", "simulated"):
            raise ValueError(f"{path}: platform {name!r} has unknown runner {runner!r}")
        if speed not in ("none", "measured", "simulated"):
            raise ValueError(f"{path}: platform {name!r} has unknown speed {speed!r}")
        hw = entry.get("kb_hardware", "")
        if not (kb_dir / "hardware" / hw).is_dir():
            raise ValueError(f"{path}: platform {name!r} names kb/hardware/{hw}, which does not exist")
        table[name] = Platform(name=name, description=entry.get("description", ""), kb_hardware=hw,
                               runner=runner, speed=speed, screen_on=entry.get("screen_on", ""),
                               machine_model=entry.get("machine_model", ""))
    for p in table.values():
        if p.screen_on and p.screen_on not in table:
            raise ValueError(f"{path}: platform {p.name!r} screens on unknown platform {p.screen_on!r}")
    return table


def get_platform(kb_dir: Path, name: str) -> Platform:
    table = load_platforms(kb_dir)
    if name not in table:
        raise UnknownPlatform(f"unknown platform {name!r}; known: {', '.join(sorted(table))}")
    return table[name]
