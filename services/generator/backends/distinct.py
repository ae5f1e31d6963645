"""Propose code the job does not have yet.

Two tunable sets can render the same kernel: a knob that does not matter at the spec's shape
(the chunk size of a looped row kernel when every row fits in registers, a tile bound above
the whole problem). The controller judges such a repeat by its twin's verdict without
evaluating it, so the expansion is spent and the search learns nothing. A long search of a
small space ran into this most of the time (300 expansions, 45 distinct kernels). So the
offline backend renders its options in preference order and takes the first whose code is
neither one the job already has (``ExpandRequest.tried_code_keys``, content hashes as the
store computes them) nor one an expansion of the same parent still in flight is taking.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import TypeVar

from kevolve.objstore import content_key
from kevolve.v1 import work_pb2

T = TypeVar("T")

# Renders one expansion may try. A template renders in milliseconds; the general lowering
# writes a whole program per try (0.1-1 s), so it gets fewer tries and a time budget.
MAX_TEMPLATE_RENDERS = 64
MAX_GENERAL_RENDERS = 12
GENERAL_RENDER_BUDGET_S = 8.0


# Where the generator's handler stores a candidate's code (``kernels/<sha256>.py``): one place,
# so the keys compared here are the keys the job's nodes carry.
KERNEL_PREFIX, KERNEL_SUFFIX = "kernels", ".py"


def code_key(code: str) -> str:
    """The key the generator's handler stores ``code`` under."""
    return content_key(code.encode(), KERNEL_PREFIX, KERNEL_SUFFIX)


async def pick_new_code(options: Iterable[tuple[T, dict[str, str]]],
                        render: Callable[[T, dict[str, str]], Awaitable[str | None]],
                        expand: work_pb2.ExpandRequest, max_renders: int,
                        out_of_time: Callable[[], bool] = lambda: False) -> tuple[T, dict[str, str], str] | None:
    """The first option, in ``options``' order, whose rendered code is new to the job.

    ``render`` returns None for an option that cannot be rendered. Expansions of the same parent
    issued earlier and still in flight (``pending_siblings``) take the first new kernels, so
    this one skips that many. When the tries run out before a new kernel turns up, the last new
    one found is returned, else the first that rendered (a repeat the controller de-duplicates);
    None only when nothing rendered at all.
    """
    tried = set(expand.tried_code_keys)
    skip = max(0, expand.pending_siblings)
    fresh: list[tuple[T, dict[str, str], str]] = []
    first: tuple[T, dict[str, str], str] | None = None
    renders = 0
    for option, tunables in options:
        if renders >= max_renders or (renders and out_of_time()):
            break
        renders += 1
        code = await render(option, tunables)
        if code is None:
            continue
        if first is None:
            first = (option, tunables, code)
        key = code_key(code)
        if key in tried:
            continue
        tried.add(key)
        fresh.append((option, tunables, code))
        if len(fresh) > skip:
            break
    return fresh[-1] if fresh else first
