"""Entry point: `python -m services.profiler` consumes kv.work.profile.<platform> until SIGTERM."""
from __future__ import annotations

import asyncio
import sys


from kevolve import runtime, subjects
from kevolve.config import EXIT_CONFIG, CommonSettings, load_settings
from kevolve.objstore import open_store
from kevolve.platforms import UnknownPlatform, get_platform
from kevolve.v1 import profile_pb2
from services.profiler.config import ProfilerSettings
from services.profiler.handlers import ProfileHandler, Profiler


async def main() -> None:
    common = load_settings("profiler", CommonSettings)
    settings = load_settings("profiler", ProfilerSettings)
    runtime.configure_logging(common.log_json, common.log_level)
    # An unknown platform or a bad machine model fails here, before connecting.
    try:
        platform = get_platform(common.kb_dir, settings.platform)  # unknown platform: fail before connecting
    except UnknownPlatform as exc:
        print(f"profiler: invalid setting KEVOLVE_PROFILER_PLATFORM: {exc}", file=sys.stderr)
        raise SystemExit(EXIT_CONFIG) from None
    profiler = Profiler(settings, common, platform)
    store = open_store(common)
    await runtime.serve_work(
        common, service="profiler", instance=f"profiler-{platform.name}",
        subject=subjects.profile_subject(platform.name), message_type=profile_pb2.ProfileRequest,
        make_handler=lambda bus: ProfileHandler(bus, store, profiler), concurrency=settings.concurrency,
        metrics_port=settings.metrics_port, platform=platform.name, runner=platform.runner)


if __name__ == "__main__":
    asyncio.run(main())
