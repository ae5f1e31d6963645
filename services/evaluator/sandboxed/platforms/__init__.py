"""Timing platforms, one per ``runner`` of kb/platforms.toml:

| runner        | module     | speed                         |
|---------------|------------|-------------------------------|
| interpreter   | cpu        | none (correctness only)       |
| cuda          | cuda       | measured (CUDA events)        |
| simulated     | mtia_sim   | simulated (machine model)     |

Each module defines ``create(platform) -> TimingPlatform`` (``base.py`` holds the contract).
A module is imported only for its runner: the cpu pool never loads the CUDA timer.
"""

from __future__ import annotations

from kevolve.platforms import Platform

from .base import CaseTiming, KernelLaunch, Speed, TimingContext, TimingPlatform

__all__ = ["CaseTiming", "KernelLaunch", "PlatformUnavailable", "Speed", "TimingContext", "TimingPlatform",
           "create_timing_platform"]


class PlatformUnavailable(RuntimeError):
    """No timing platform exists for the platform's runner."""


def create_timing_platform(platform: Platform) -> TimingPlatform:
    if platform.runner == "interpreter":
        from . import cpu

        return cpu.create(platform)
    if platform.runner == "cuda":
        from . import cuda

        return cuda.create(platform)
    if platform.runner == "simulated":
        from . import mtia_sim

        return mtia_sim.create(platform)
    raise PlatformUnavailable(f"no timing backend for runner {platform.runner!r} (platform {platform.name!r})")
