"""Does a contender's cold-L2 GPU time depend on the lead spin, or on being interleaved with
other contenders? Times a torch.compile'd fp16 RMSNorm (8192 x 4096) with the evaluator's
sampling primitive, alone and after an eager sample each time, at several leads.

    python3 docs/measurements/2026-11-27-job-baselines/lead_probe.py
"""

import statistics

import torch

from kevolve.exec import gputiming

torch.manual_seed(0)
x = torch.randn(8192, 4096, device="cuda", dtype=torch.float16)
w = torch.randn(4096, device="cuda", dtype=torch.float16)


def rms(t: torch.Tensor) -> torch.Tensor:
    tf = t.float()
    return (tf * torch.rsqrt(tf.pow(2).mean(-1, keepdim=True) + 1e-6) * w.float()).half()


compiled = torch.compile(rms, dynamic=False)
flush = gputiming.L2Flush()
for fn in (rms, compiled):
    for _ in range(20):
        fn(x)
torch.cuda.synchronize()
N = 300
print("order  lead_us  compile_ms(median)  p10  p90")
for rep in range(2):
    for lead in (300.0, 500.0, 1000.0):
        alone = [gputiming.sample(lambda: compiled(x), flush, lead).gpu_ms for _ in range(N)]
        after_eager = []
        for _ in range(N):
            gputiming.sample(lambda: rms(x), flush, lead)
            after_eager.append(gputiming.sample(lambda: compiled(x), flush, lead).gpu_ms)
        for name, values in (("alone", alone), ("after-eager", after_eager)):
            q = statistics.quantiles(values, n=10)
            print(f"{name:12s} {lead:6.0f}  {statistics.median(values):.4f}  {q[0]:.4f}  {q[-1]:.4f}")
