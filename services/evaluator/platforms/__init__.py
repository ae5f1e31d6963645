"""Registry of timing platforms, keyed by the ``runner`` of kb/platforms.toml.

A runner maps to a module of this package that defines ``create(platform) -> TimingPlatform``:

| runner        | module     | speed                         |
|---------------|------------|-------------------------------|
| interpreter   | cpu        | none (correctness only)       |
| cuda          | cuda       | measured (CUDA events)        |
| simulated     | mtia_sim   | simulated (machine model)     |

``mtia_sim`` is written separately; it is imported only if the module exists, so this
package works without it (a simulated pool then fails at start with a clear message).
"""

from __future__ import annotations

import importlib
import importlib.util

from kevolve.platforms import Platform

from .base import CaseTiming, KernelLaunch, Speed, TimingContext, TimingPlatform

__all__ = ["CaseTiming", "KernelLaunch", "Speed", "TimingContext", "TimingPlatform", "create_timing_platform"]

_RUNNER_MODULES = {"interpreter": "cpu", "cuda": "cuda", "simulated": "mtia_sim"}


class PlatformUnavailable(RuntimeError):
    """The platform's timing backend cannot run here (module missing, no GPU...)."""


def create_timing_platform(platform: Platform) -> TimingPlatform:
    module_name = _RUNNER_MODULES.get(platform.runner)
    if module_name is None:
        raise PlatformUnavailable(
            f"no timing backend for runner {platform.runner!r} (platform {platform.name!r})"
        )
    qualified = f"{__name__}.{module_name}"
    if importlib.util.find_spec(qualified) is None:
        raise PlatformUnavailable(
            f"platform {platform.name!r} needs {qualified.replace('.', '/')}.py, which is not installed"
        )
    module = importlib.import_module(qualified)
    backend = module.create(platform)
    if not isinstance(backend, TimingPlatform):
        raise PlatformUnavailable(f"{qualified}.create() did not return a TimingPlatform")
    return backend
