"""Write the candidate module: kernels, and a ``ModelNew`` whose forward only allocates,
makes inputs contiguous and launches.

``ModelNew`` derives from the spec's own constructor (``specinit``) and, once built, checks
which captured case its attributes and parameter shapes belong to; a module built with
arguments no case was captured for refuses at construction, naming the attribute. Its
forward dispatches on the input shapes and dtypes to that case's launch sequence; a shape
no case was captured for raises an error listing the shapes it serves.
"""

from __future__ import annotations

from typing import Any

from services.generator.lowering.ir import Buffer, KernelWriter, RuntimeScalar
from services.generator.lowering.kernels import PTX, Kernel
from services.generator.lowering.lower import LoweredCase, attr_path
from services.generator.lowering.mathlib import helper_source
from services.generator.lowering.ops_heavy import BF16_DOT
from services.generator.lowering.schema import Capture
from services.generator.lowering.specinit import SpecInit

HEADER = '''"""Kernel program written by kevolve's offline generator for the spec {name!r}.

Each kernel below computes one stored value of the captured computation; ModelNew's forward
allocates the buffers and launches them in order for the shapes it was built for.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl
'''


def _binds_only(statement: str, names: set[str]) -> bool:
    """Whether an import statement binds nothing beyond ``names`` (the header has those)."""
    import ast

    node = ast.parse(statement).body[0]
    assert isinstance(node, (ast.Import, ast.ImportFrom))
    bound = {(a.asname or a.name).split(".")[0] for a in node.names}
    return bound <= names


def _torch_dtype(dtype: str) -> str:
    return f"torch.{dtype}"


def _launch(kernel: Kernel, names: dict[int, str], allocated: set[str]) -> list[str]:
    args = []
    for a in kernel.args:
        if isinstance(a, Buffer):
            # An optional output nobody reads was never allocated: the kernel does not write
            # it (its flag is off), so any valid pointer serves.
            args.append(a.name if a.name in allocated else kernel.outputs[0].name)
        else:
            args.append("self" + attr_path(a.attr))
    name = names[id(kernel)]
    stages = f", num_stages={kernel.gpu.num_stages}" if kernel.gpu.num_stages else ""
    if kernel.interpreter is not None:
        # Two sources: each launched with its own device's shape.
        gpu_meta = [f"{key}={value}" for key, value in kernel.gpu.meta.items()] + _target_flags(kernel.writer, True)
        cpu_meta = [f"{key}={value}" for key, value in kernel.cpu.meta.items()] \
            + _target_flags(kernel.interpreter, False)
        return ["if gpu:",
                f"    {name}[{kernel.gpu.grid}]({', '.join(args + gpu_meta)}, num_warps={kernel.gpu.num_warps}{stages})",
                "else:",
                f"    {names[id(kernel.interpreter)]}[{kernel.cpu.grid}]({', '.join(args + cpu_meta)}, num_warps=1)"]
    meta = []
    for key in kernel.gpu.meta:
        g, c = kernel.gpu.meta[key], kernel.cpu.meta[key]
        meta.append(f"{key}={g}" if g == c else f"{key}={g} if gpu else {c}")
    meta += _target_flags(kernel.writer, True)
    grid = f"{kernel.gpu.grid}" if kernel.gpu.grid == kernel.cpu.grid else f"({kernel.gpu.grid} if gpu else {kernel.cpu.grid})"
    return [f"{name}[{grid}]({', '.join(args + meta)}, num_warps={kernel.gpu.num_warps}{stages})"]


def _target_flags(writer: KernelWriter, launch_on_gpu: bool) -> list[str]:
    """The launch arguments that tell a kernel where it runs: ``BF16_DOT`` (ops_heavy: it
    multiplies bfloat16 tiles) and ``PTX`` (kernels.PTX: its helpers may use NVIDIA's PTX),
    each where the kernel has it. A launch that serves the GPU passes the run method's own
    ``gpu``/``ptx``; an interpreter-only launch passes False."""
    flags = {BF16_DOT: "gpu", PTX: "ptx"}
    used = {p.name for p in writer.params}
    return [f"{flag}={value if launch_on_gpu else False}" for flag, value in flags.items() if flag in used]


def _uses_ptx(kernels: list[Kernel]) -> bool:
    return any(PTX in {p.name for p in k.writer.params} for k in kernels)


def _case_method(index: int, lowered: LoweredCase, names: dict[int, str], signature: str) -> list[str]:
    lines = [f"    def _kv_run{index}(self, {signature}):" if signature else f"    def _kv_run{index}(self):"]
    body: list[str] = []
    first_input = next((s for s in lowered.sources if s.kind == "input"), None)
    device = f"{first_input.code}.device" if first_input else "next(self.parameters()).device"
    body.append(f"dev = {device}")
    body.append('gpu = dev.type == "cuda"')
    if _uses_ptx(lowered.kernels):
        # ROCm builds of torch call their GPUs "cuda" too: PTX only where CUDA is NVIDIA's.
        body.append("ptx = gpu and torch.version.hip is None")
    constants = [src for src in lowered.sources if src.kind == "constant"]
    if constants:
        # Built once per device: a tensor made from a Python list costs a host-to-device
        # copy on every call otherwise.
        body.append(f"consts = self._kv_consts.get(({index}, dev))")
        body.append("if consts is None:")
        built = []
        for src in constants:
            shape = ", ".join(str(s) for s in src.buffer.shape)
            built.append(f"torch.tensor({src.values!r}, dtype={_torch_dtype(src.buffer.dtype)}, "
                         f"device=dev).view(({shape}{',' if len(src.buffer.shape) == 1 else ''}))")
        body.append(f"    consts = ({', '.join(built)},)")
        body.append(f"    self._kv_consts[({index}, dev)] = consts")
        body.append(f"{', '.join(src.buffer.name for src in constants)}, = consts")
    # Parameters and buffers no kernel reads (a batch norm's num_batches_tracked) cost a
    # call each per forward for nothing: left out.
    read = {a.name for k in lowered.kernels for a in k.args if isinstance(a, Buffer)}
    read |= {b.name for b in lowered.outputs}
    kept = [src for src in lowered.sources if src.kind in ("input", "constant") or src.buffer.name in read]
    for src in kept:
        if src.kind == "attribute":
            # A tensor the spec keeps as a plain attribute and moves in its own forward (which
            # this one does not run): ModelNew holds it as a buffer, which moving the module
            # moves, so this is a no-op unless the module was left where it was built.
            body.append(f"{src.buffer.name} = {src.code}.to(dev).contiguous()")
        elif src.kind != "constant":
            body.append(f"{src.buffer.name} = {src.code}.contiguous()")
    for buf in lowered.temporaries:
        shape = ", ".join(str(s) for s in buf.shape)
        alloc = "torch.zeros" if buf.zeroed else "torch.empty"
        body.append(f"{buf.name} = {alloc}(({shape}{',' if len(buf.shape) == 1 else ''}), "
                    f"dtype={_torch_dtype(buf.dtype)}, device=dev)")
    allocated = {b.name for b in lowered.temporaries} | {src.buffer.name for src in kept}
    body.extend(_steps(lowered.kernels, names, allocated))
    outs = [b.name for b in lowered.outputs]
    for i, (buf, shape) in enumerate(zip(lowered.outputs, lowered.output_shapes, strict=True)):
        if tuple(shape) != tuple(buf.shape):   # a reshape of the buffer: returned as a view
            dims = ", ".join(str(s) for s in shape)
            outs[i] = f"{buf.name}.view(({dims}{',' if len(shape) == 1 else ''}))"
    structure = lowered.case.out_structure
    if structure == "single":
        body.append(f"return {outs[0]}")
    elif structure == "tuple":
        body.append(f"return ({', '.join(outs)}{',' if len(outs) == 1 else ''})")
    else:
        body.append(f"return [{', '.join(outs)}]")
    return lines + ["        " + line for line in body]


def _steps(steps: list[Kernel], names: dict[int, str], allocated: set[str]) -> list[str]:
    return [line for step in steps for line in _launch(step, names, allocated)]


def _case_test(lowered: LoweredCase, spec: SpecInit) -> str:
    conds = []
    n_inputs = sum(1 for ph in lowered.case.placeholders if ph.kind == "input")
    if spec.forward_vararg:
        conds.append(f"len({spec.forward_vararg}) == {n_inputs - len(spec.forward_params)}")
    for ph in lowered.case.placeholders:
        if ph.kind != "input":
            continue
        name = spec.input_code(ph.position)
        if ph.meta is None:
            conds.append(f"{name} == {ph.value!r}")
        else:
            conds.append(f"tuple({name}.shape) == {tuple(ph.meta.shape)!r}")
            conds.append(f"{name}.dtype == {_torch_dtype(ph.meta.dtype)}")
    return " and ".join(conds) or "True"


def render(spec_name: str, spec: SpecInit, capture: Capture, lowered: list[LoweredCase]) -> str:
    out = [HEADER.format(name=spec_name)]
    out += [line for line in spec.imports if not _binds_only(line, {"torch", "nn", "triton", "tl"})]
    helpers: set[str] = set()
    sources: dict[str, str] = {}
    names: dict[int, str] = {}
    for case in lowered:
        for kernel in case.kernels:
            for key_of, writer in ((kernel, kernel.writer), (kernel.interpreter, kernel.interpreter)):
                if writer is None:
                    continue
                helpers |= writer.helpers
                text = writer.source({})
                # Identical kernels (the same shapes in two cases) are written once.
                key = text.replace(writer.name, "@")
                if key not in sources:
                    sources[key] = text
                    names[id(key_of)] = writer.name
                else:
                    names[id(key_of)] = sources[key].split("def ", 1)[1].split("(", 1)[0]
    out.append(helper_source(helpers))
    out.extend("\n" + text for text in sources.values())
    out.append("\n" + spec.definitions + "\n")
    out.append(_model_class(spec, capture, lowered, names))
    return "\n".join(out)


def _call_args(spec: SpecInit) -> str:
    names = list(spec.forward_params)
    if spec.forward_vararg:
        names.append("*" + spec.forward_vararg)
    return ", ".join(names)


ABSENT = "<absent>"  # a signature key a case's module does not have


def _signature_code(keys: list[str], signatures: list[dict[str, Any]]) -> list[str]:
    """The method reading each signature key off the module; a key below a submodule slot
    that is empty (None) in some case reads ``ABSENT`` where the slot is empty."""
    optional = {k for sig in signatures for k, v in sig.items() if v is None}
    lines = ["    def _kv_signature(self):", "        return {"]
    for key in keys:
        parts = key.split(".")
        guards = [f"self{attr_path(p)} is not None" for p in (".".join(parts[:i]) for i in range(1, len(parts)))
                  if p in optional]
        read = f"_kv_plain(self{attr_path(key)})"
        if guards:
            read = f"({read} if {' and '.join(guards)} else {ABSENT!r})"
        lines.append(f"            {key!r}: {read},")
    lines.append("        }")
    return lines


def _model_class(spec: SpecInit, capture: Capture, lowered: list[LoweredCase], names: dict[int, str]) -> str:
    params = spec.forward_params
    keys = sorted({k for case in lowered for k in case.case.signature})
    signatures = [{k: case.case.signature.get(k, ABSENT) for k in keys} for case in lowered]
    param_shapes = [{s.code: list(s.buffer.shape) for s in case.sources
                     if s.kind in ("parameter", "buffer", "attribute")}
                    for case in lowered]
    # Tensors the spec's constructors keep as plain attributes become buffers (not saved with
    # the weights), so that moving the module moves them once, not on every call. Written
    # out per attribute: a candidate names the attributes it touches.
    held: list[str] = []
    for target in sorted({s.target for case in lowered for s in case.sources if s.kind == "attribute"}):
        owner_path, _, name = target.rpartition(".")
        owner, code = "self" + (attr_path(owner_path) if owner_path else ""), "self" + attr_path(target)
        held += [f"        if isinstance({code}, torch.Tensor) and not isinstance({code}, nn.Parameter):",
                 f"            held = {code}",
                 f"            del {code}",
                 f"            {owner}.register_buffer({name!r}, held, persistent=False)"]
    lines = [
        "",
        "def _kv_plain(value):",
        "    if isinstance(value, nn.Module):",
        "        return '<module>'",
        "    return list(value) if isinstance(value, tuple) else value",
        "",
        f"_KV_SIGNATURES = {signatures!r}",
        "",
        "",
        f"class ModelNew({spec.base}):",
        "    def __init__(self, *args, **kwargs):",
        "        super().__init__(*args, **kwargs)",
        *held,
        "        # The cases (shapes) this module's attributes and parameters were captured for.",
        "        signature = self._kv_signature()",
        "        self._kv_cases = []",
        "        self._kv_consts = {}  # constant tensors per (case, device), built on first use",
        "        for case, expected in enumerate(_KV_SIGNATURES):",
        "            if all(signature[k] == v for k, v in expected.items()) and self._kv_shapes(case):",
        "                self._kv_cases.append(case)",
        "        if not self._kv_cases:",
        "            differ = [f'{k}={signature[k]!r} (built for {v!r})' for k, v in _KV_SIGNATURES[0].items()",
        "                      if signature[k] != v]",
        "            raise ValueError('ModelNew was generated for other constructor arguments: '",
        "                             + (', '.join(differ) or 'parameter shapes differ'))",
        "",
        *_signature_code(keys, signatures),
        "",
        "    def _kv_shapes(self, case):",
    ]
    for i, shapes in enumerate(param_shapes):
        checks = " and ".join(f"list({code}.shape) == {shape!r}" for code, shape in shapes.items()) or "True"
        lines.append(f"        if case == {i}:")
        lines.append(f"            return {checks}")
    lines.append("        return False")
    lines.append("")
    lines.append(f"    def forward(self, {spec.forward_signature}):" if spec.forward_signature else "    def forward(self):")
    served = []
    for i, case in enumerate(lowered):
        test = _case_test(case, spec)
        lines.append(f"        if {i} in self._kv_cases and {test}:")
        lines.append(f"            return self._kv_run{i}({_call_args(spec)})")
        served.append(", ".join(str(tuple(ph.meta.shape)) for ph in case.case.placeholders
                                if ph.kind == "input" and ph.meta is not None))
    lines.append(f"        raise ValueError('ModelNew was generated for input shapes ' + {' or '.join(served)!r})")
    for i, case in enumerate(lowered):
        lines.append("")
        lines.extend(_case_method(i, case, names, spec.forward_signature))
    return "\n".join(lines) + "\n"


__all__ = ["RuntimeScalar", "render", "Any"]
