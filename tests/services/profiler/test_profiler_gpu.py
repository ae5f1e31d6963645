"""The cuda profiler path on a real GPU: torch.profiler times, ncu roofline where counters are readable."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from kevolve.config import REPO_ROOT, CommonSettings
from kevolve.platforms import get_platform
from kevolve.v1 import profile_pb2
from services.profiler.config import ProfilerSettings
from services.profiler.handlers import Profiler

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]

DATA = Path(__file__).parent / "data"


def test_fused_kernel_profile_on_the_gpu(tmp_path: Path) -> None:
    common = CommonSettings(kb_dir=REPO_ROOT / "kb")
    profiler = Profiler(ProfilerSettings(platform="cuda", scratch_dir=tmp_path), common,
                        get_platform(common.kb_dir, "cuda"))
    request = profile_pb2.ProfileRequest(job_id="g", node_id="fused", platform="cuda",
                                         sizes={"rows": 4096, "cols": 4096})
    result = profiler.profile(request, (REPO_ROOT / "examples" / "gelu_scale_add.py").read_text(),
                              (DATA / "gelu_fused.py").read_text())
    assert result.tools[0] == "torch.profiler"
    assert result.metrics["launches"] == 1 and result.metrics["kernel_time_us"] > 0
    assert result.details["torch_profiler"]["kernels"][0]["name"] == "gelu_scale_add_kernel"
    if "ncu" in result.tools:
        # 3 x 64 MiB through DRAM in one pass: a memory-bound kernel.
        assert result.bottleneck == "memory_bound" and result.metrics["dram_bw_frac"] > 0.3
        assert "memory-bound at" in result.summary
    else:
        assert any(u.startswith("ncu") for u in result.unavailable)
