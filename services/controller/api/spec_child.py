"""Runs inside the sandboxed child of the spec probe (never imported by the controller).

argv: <spec file> <sizes JSON> [<seconds for deriving sizes>]. Without screening sizes, first
derives some (``screen_sizes``). Loads the spec at the screening sizes, builds
``Model(*get_init_inputs())`` and calls ``get_inputs()``; writes a ``ProbeChildResult``
(``probe_messages.RESULT_FILE``) next to the spec: ``ok`` with the number of inputs and the
derived sizes, or ``fail`` naming the step and the error.
"""

import json
import sys
import traceback
from pathlib import Path


def main() -> None:
    path, sizes_json = sys.argv[1], sys.argv[2]
    derive_s = float(sys.argv[3]) if len(sys.argv) > 3 else 0.0
    from kevolve.exec.childstatus import ChildFailure

    from .probe_messages import RESULT_FILE, ProbeChildResult

    where = "import"
    try:
        from kevolve.specfile import load_module

        with open(path, encoding="utf-8") as fh:
            source = fh.read()
        sizes = json.loads(sizes_json)
        derived: dict[str, int] = {}
        if not sizes and derive_s > 0:
            from kevolve.specfile import outline

            from .screen_sizes import deadline, derive

            derived = derive(source, path, outline(source).sizes, deadline(derive_s))
        module = load_module(source, "kevolve_spec_probe", sizes or derived or None, filename=path)
        where = "Model(*get_init_inputs())"
        model = module.Model(*module.get_init_inputs())
        where = "get_inputs()"
        inputs = module.get_inputs()
        if not isinstance(inputs, (list, tuple)):
            raise TypeError(f"get_inputs() must return a list, got {type(inputs).__name__}")
        del model
        result = ProbeChildResult(inputs=len(inputs), screening_sizes=derived)
    except BaseException as exc:  # report anything the user's code raises, including SystemExit
        result = ProbeChildResult(status="fail", failure=ChildFailure(
            where=where, reason=f"{type(exc).__name__}: {exc}", traceback=traceback.format_exc(limit=-3)))
    result.write(Path(path).parent / RESULT_FILE)


if __name__ == "__main__":
    main()
