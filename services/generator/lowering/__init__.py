"""The general lowering: any captured PyTorch program to a Triton kernel program.

``capture`` (run in the sandbox) exports the spec's ``Model`` per case and decomposes it to
PyTorch's primitive operators; ``lower`` turns each case into kernels; ``emit`` writes the
candidate module. :func:`program_source` runs the last two.
"""

from __future__ import annotations

from services.generator.lowering.emit import render
from services.generator.lowering.ir import Unsupported
from services.generator.lowering.lower import lower_case
from services.generator.lowering.schema import Capture
from services.generator.lowering.specinit import spec_init
from services.generator.lowering.tunables import Tunables, using

__all__ = ["Unsupported", "program_source"]


def program_source(spec_source: str, spec_name: str, capture: Capture, tuned: Tunables | None = None) -> str:
    """The candidate module for ``capture``, lowered under ``tuned`` (defaults when None);
    raises Unsupported naming what cannot be lowered."""
    if not capture.ok:
        raise Unsupported(capture.error)
    init = spec_init(spec_source)
    with using(tuned or Tunables()):
        lowered = [lower_case(case, str(i), init.input_code) for i, case in enumerate(capture.cases)]
        return render(spec_name, init, capture, lowered)
