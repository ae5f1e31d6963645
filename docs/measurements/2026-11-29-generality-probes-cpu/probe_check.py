import sys, json, signal
from pathlib import Path
sys.path.insert(0, "tests/services/generator/lowering"); sys.path.insert(0, ".")
from kevolve.exec import interp_compat; interp_compat.apply()
from lowering_check import check
form = sys.argv[1]
for p in sys.argv[2:]:
    src = Path(p).read_text()
    signal.alarm(300)
    try:
        tol = 1e-2 if "float16" in p else 1e-4
        check(src, trials=1, form=form, atol=tol, rtol=tol)
        print(json.dumps({"spec": Path(p).name, "form": form, "ok": True}), flush=True)
    except Exception as e:
        print(json.dumps({"spec": Path(p).name, "form": form, "ok": False, "err": f"{type(e).__name__}: {e}"[:600]}), flush=True)
    signal.alarm(0)
