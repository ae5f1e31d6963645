"""Runs inside the sandboxed child of the spec probe (never imported by the controller).

argv: <spec file> <sizes JSON>. Loads the spec at the screening sizes, builds
``Model(*get_init_inputs())`` and calls ``get_inputs()``; prints one JSON line: ``{"ok": true,
"inputs": N}`` or ``{"ok": false, "error": "<Type>: <message>", "where": "..."}``.
"""

import json
import sys
import traceback


def main() -> None:
    path, sizes_json = sys.argv[1], sys.argv[2]
    where = "import"
    try:
        from kevolve.specfile import load_module

        with open(path, encoding="utf-8") as fh:
            source = fh.read()
        module = load_module(source, "kevolve_spec_probe", json.loads(sizes_json) or None, filename=path)
        where = "Model(*get_init_inputs())"
        model = module.Model(*module.get_init_inputs())
        where = "get_inputs()"
        inputs = module.get_inputs()
        if not isinstance(inputs, (list, tuple)):
            raise TypeError(f"get_inputs() must return a list, got {type(inputs).__name__}")
        del model
        print(json.dumps({"ok": True, "inputs": len(inputs)}))
    except BaseException as exc:  # report anything the user's code raises, including SystemExit
        tb = traceback.format_exc(limit=-3)
        print(json.dumps({"ok": False, "where": where, "error": f"{type(exc).__name__}: {exc}", "traceback": tb}))


if __name__ == "__main__":
    main()
