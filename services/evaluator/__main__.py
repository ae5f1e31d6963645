"""Entry point.

``python -m services.evaluator`` consumes kv.work.eval.<platform> until SIGTERM.
``python -m services.evaluator eval SPEC.py CANDIDATE.py --platform cpu [--json]`` runs the
same checks once and prints the verdict (exit status 0 only for a pass).
"""

from __future__ import annotations

import asyncio
import sys


from kevolve import runtime, subjects
from kevolve.config import EXIT_CONFIG, CommonSettings, load_settings
from kevolve.objstore import open_store
from kevolve.platforms import UnknownPlatform, get_platform
from kevolve.v1 import evaluation_pb2

from .config import EvaluatorSettings
from .handlers import EvaluateHandler
from .harness import Harness


async def serve() -> None:
    common = load_settings("evaluator", CommonSettings)
    settings = load_settings("evaluator", EvaluatorSettings)
    runtime.configure_logging(common.log_json, common.log_level)
    try:
        platform = get_platform(common.kb_dir, settings.platform)  # unknown platform: fail before connecting
    except UnknownPlatform as exc:
        print(f"evaluator: invalid setting KEVOLVE_EVALUATOR_PLATFORM: {exc}", file=sys.stderr)
        raise SystemExit(EXIT_CONFIG) from None
    store = open_store(common)
    harness = Harness(settings, common.kb_dir, store)
    try:
        await runtime.serve_work(
            common, service="evaluator", instance=f"evaluator-{platform.name}",
            subject=subjects.eval_subject(platform.name), message_type=evaluation_pb2.EvaluationRequest,
            make_handler=lambda bus: EvaluateHandler(bus, store, harness, platform, settings),
            concurrency=settings.slots, metrics_port=settings.metrics_port, platform=platform.name)
    finally:
        harness.close()


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "eval":
        from .cli import eval_main

        sys.exit(eval_main(sys.argv[2:]))
    asyncio.run(serve())


if __name__ == "__main__":
    main()
