import importlib.util, os, re, sys, tempfile, json
import torch
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
out = {}
# 1. the helper on tiles
try:
    import helper_kernels as h
    torch.manual_seed(5)
    special = torch.tensor([0.0, -0.0, 1.0, -1.0, float("inf"), float("-inf"), float("nan"), 3.4e38, -3.4e38,
                            1e-40, -1e-40, 1.00390625, 1.01171875, 65504.0], device="cuda")
    ties = (torch.randint(-2 ** 15, 2 ** 15, (512,), device="cuda", dtype=torch.int32) * 65536 + 32768).view(torch.float32)
    pool = torch.cat([special, ties, torch.randn(1 << 16, device="cuda") * 10.0 ** torch.randint(-30, 30, (1 << 16,), device="cuda").float()])
    def diff(got, x):
        want = x.to(torch.bfloat16).to(torch.float32)
        nan = torch.isnan(want)
        bad = int((torch.isnan(got) != nan).sum()) + int((got[~nan].view(torch.int32) != want[~nan].view(torch.int32)).sum())
        return bad
    for r, c in [(16, 16), (1, 64), (32, 64), (64, 128), (128, 128), (64, 64)]:
        x = pool[torch.randint(0, pool.numel(), (r * c,), device="cuda")].contiguous(); y = torch.empty_like(x)
        h.rows[(1,)](x, y, R=r, C=c); out[f"rows_{r}x{c}"] = diff(y, x)
    for n in (2, 64, 1024, 1 << 16):
        x = pool[:n].contiguous(); y = torch.empty_like(x)
        h.flat[(1,)](x, y, N=n); out[f"flat_{n}"] = diff(y, x)
    for r in (1, 2, 16, 64):
        try:
            x = torch.randn(r * 32, device="cuda"); raw, y = torch.empty(r, device="cuda"), torch.empty(r, device="cuda")
            h.reduced[(1,)](x, raw, y, R=r, C=32); out[f"reduced_{r}"] = diff(y, raw)
        except Exception as e:
            out[f"reduced_{r}"] = str(e)[:100]
    for m, n, k in [(16, 16, 16), (64, 64, 32), (128, 64, 64), (64, 64, 64)]:
        for w in (4, 8):
            a = (torch.randn(m, k, device="cuda") * 3).to(torch.bfloat16); b = torch.randn(k, n, device="cuda").to(torch.bfloat16)
            c = torch.randn(m, n, device="cuda").to(torch.bfloat16)
            y = torch.empty(2, m, n, device="cuda")
            h.product[(1,)](a, b, c, y, M=m, N=n, K=k, num_warps=w); out[f"product_{m}x{n}x{k}_w{w}"] = diff(y[1], y[0])
except Exception as e:
    out["helper_error"] = repr(e)[:500]
print(json.dumps(out), flush=True)

# 2. programs: PTX at chosen sites
HELPER = open(os.path.join(here, "helper_kernels.py")).read().split("@triton.jit\ndef rows")[0].split("import triton.language as tl\n")[1]
def sites(code):
    k0 = code.index("def _k0_0_attention("); k1 = code.index("def _k0_0_attention_i(")
    body = code[k0:k1]
    found = []
    for m in re.finditer(r"(\w+) = (\w+)\.to\(tl\.bfloat16\)\.to\(tl\.float32\)\n", body):
        if m.group(2) != "p": found.append((m.start() + k0, m.end() + k0, f"{m.group(1)} = _kv_round_bf16({m.group(2)}, True)\n", m.group(1)))
    for m in re.finditer(r"(\w+) = (\w+)\.to\(tl\.bfloat16\)\n(\s+)(\w+) = \1\.to\(tl\.float32\)\n", body):
        rep = f"{m.group(1)} = {m.group(2)}.to(tl.bfloat16)\n{m.group(3)}{m.group(4)} = _kv_round_bf16({m.group(2)}, True)\n"
        found.append((m.start() + k0, m.end() + k0, rep, m.group(4)))
    return sorted(found)
def apply(code, chosen):
    for s, e, rep, _ in sorted(chosen, reverse=True):
        code = code[:s] + rep + code[e:]
    return code.replace("import triton.language as tl\n", "import triton.language as tl\n" + HELPER, 1)
def load(code, name):
    path = os.path.join(tempfile.mkdtemp(), name + ".py"); open(path, "w").write(code)
    s = importlib.util.spec_from_file_location(name, path); m = importlib.util.module_from_spec(s); s.loader.exec_module(m); return m
import triton.testing
for name in ("attn", "biased"):
    spec = load(open(os.path.join(here, f"{name}_spec.py")).read(), name + "_spec")
    code = open(os.path.join(here, f"{name}_prog.py")).read()
    ss = sites(code)
    variants = {"none": [], "all": ss}
    for site in ss: variants["only_" + site[3]] = [site]
    torch.manual_seed(3); init = spec.get_init_inputs()
    res = {}
    base = None
    for vname, chosen in variants.items():
        try:
            model = load(apply(code, chosen), f"{name}_{vname}").ModelNew(*init).cuda()
            model.load_state_dict(spec.Model(*init).state_dict(), strict=False)
            torch.manual_seed(9); inputs = [x.cuda() for x in spec.get_inputs()]
            with torch.no_grad():
                o = model(*inputs).float()
            if base is None: base = o
            res[vname] = {"max_diff": float((o - base).abs().max()), "n_diff": int((o != base).sum()),
                          "ms": triton.testing.do_bench(lambda: model(*inputs))}
        except Exception as e:
            res[vname] = repr(e)[:300]
    print(name, [s[3] for s in ss], json.dumps(res), flush=True)
