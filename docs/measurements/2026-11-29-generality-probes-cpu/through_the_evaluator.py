import asyncio, sys, tempfile, json
from pathlib import Path
sys.path.insert(0, ".")
from kevolve.config import REPO_ROOT
from kevolve.platforms import get_platform
from kevolve.v1 import common_pb2, work_pb2
from services.evaluator.config import EvaluatorSettings
from services.evaluator.harness import Harness
from services.evaluator.plan import EvalJob
from services.generator.backends.offline import OfflineBackend

async def main(paths):
    h = Harness(EvaluatorSettings(platform="cpu", scratch_dir=Path(tempfile.mkdtemp()), timeout_s=300, memory_mb=4096), REPO_ROOT / "kb")
    b = OfflineBackend(REPO_ROOT / "kb" / "templates", trace_timeout_s=120, scratch_dir=Path(tempfile.mkdtemp()))
    try:
        for p in paths:
            spec = Path(p)
            req = work_pb2.GenerateRequest(); req.expand.tenant = "t"; req.expand.spec_name = spec.stem
            gen = await b.generate(req, "", spec.read_text(), None)
            if not gen.code:
                print(json.dumps({"spec": spec.name, "gen": gen.error[:300]}), flush=True); continue
            out = h.evaluate(EvalJob(spec_source=spec.read_text(), candidate_source=gen.code,
                                     platform=get_platform(REPO_ROOT / "kb", "cpu"), seed=11, tenant="t"))
            r = out.result
            print(json.dumps({"spec": spec.name, "template": gen.tunables.get("template"), "verdict": common_pb2.Verdict.Name(r.verdict), "why": (r.decided_by + " " + r.reason)[:300]}), flush=True)
    finally:
        await b.aclose(); h.close()

asyncio.run(main(sys.argv[1:]))
