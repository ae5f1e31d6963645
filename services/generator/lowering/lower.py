"""Lower one captured case to a kernel program: the kernels to launch, in order, and the
buffers they write.

The graph's nodes are lowered in order (``registry.LOWERINGS``). Pointwise work and views
stay lazy and are computed inside whichever kernel reads them; reductions and the operators
kept whole become kernels at once. A lazy value read by several consumers is stored once
when recomputing it would cost more than reading it back. Outputs always end in buffers of
their own.
"""

from __future__ import annotations

import dataclasses
import itertools
import keyword
import math
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import sympy

from services.generator.lowering import ops_pointwise, ops_reduce, ops_views, rows  # noqa: F401
from services.generator.lowering.ops_reduce import ROW_REDUCTIONS
from services.generator.lowering.rows import ReductionValue
from services.generator.lowering import attention_masks, tunables
from services.generator.lowering.indexing import linear
from services.generator.lowering.ir import Buffer, Lazy, RuntimeScalar, Stored, Unsupported, Value
from services.generator.lowering.kernels import Kernel, pointwise_kernel
from services.generator.lowering.registry import LOWERINGS
from services.generator.lowering.schema import CapturedCase, Node, TensorMeta

from services.generator.lowering import (ops_attention, ops_conv, ops_diag, ops_heavy, ops_index,  # noqa: F401,E402
                                         ops_pool, ops_rnn, ops_scan)

# A lazy value read by more than one consumer is stored when it inlines more operators than
# the tunable FUSE_LIMIT (tunables.py).


def attr_path(path: str) -> str:
    """``layers.0.conv`` -> ``.layers[0].conv``: attribute access code for a module path."""
    out = ""
    for part in path.split("."):
        if part.isdigit():
            out += f"[{part}]"
        elif part.isidentifier() and not keyword.iskeyword(part):
            out += f".{part}"
        else:
            raise Unsupported(f"module attribute {path!r} has a part ({part!r}) that is not a Python name")
    return out


@dataclass
class Source:
    """How the wrapper obtains a graph input buffer."""

    buffer: Buffer
    kind: str            # "input", "parameter", "buffer", "attribute", "constant"
    code: str            # expression in the wrapper: "x", "self.lin.weight"
    values: list[Any] = field(default_factory=list)  # a constant's elements
    target: str = ""     # a parameter's, buffer's or attribute's module path: "lin.weight"


@dataclass
class LoweredCase:
    case: CapturedCase
    sources: list[Source]
    kernels: list[Kernel]  # launch order
    temporaries: list[Buffer]
    outputs: list[Buffer]
    scalars: list[RuntimeScalar]
    # The shape forward returns each output in: where it is not its buffer's own, the output
    # is a reshape of the buffer (a view the wrapper returns, not a copy a kernel makes).
    output_shapes: list[tuple[int, ...]]


class CaseLowerer:
    def __init__(self, case: CapturedCase, tag: str, input_code: Callable[[int], str]) -> None:
        self.case = case
        self.tag = tag
        self.input_code = input_code
        self.env: dict[str, Any] = {}
        self.kernels: list[Kernel] = []
        self.temporaries: list[Buffer] = []
        self.sources: list[Source] = []
        self.scalars: list[RuntimeScalar] = []
        self._names = itertools.count()
        self._kernel_ids = itertools.count()
        # A check that produces nothing (``aten._assert_tensor_metadata``, written for every
        # ``.to(dtype)``) reads no element: counted as a reader it would make a value look shared.
        readers = [node for node in case.nodes if any(out is not None for out in node.outputs)]
        self.users = Counter(ref for node in readers for ref in _refs(node.args) + _refs(node.kwargs))
        self.users.update(_refs(case.outputs))
        self.readers: dict[str, list[str]] = defaultdict(list)  # value -> the nodes reading it, once each
        for node in readers:
            for ref in dict.fromkeys(_refs(node.args) + _refs(node.kwargs)):
                self.readers[ref].append(node.name)
        self.graph_outputs = set(_refs(case.outputs))
        self.attr_uses = {(u.node, tuple(u.path)): u.attr for u in case.attr_uses}
        self.nodes = {n.name: n for n in case.nodes}
        # Attention written as two products around a softmax: one streaming kernel.
        self.attention = ops_attention.find(case)
        self.scores = {m.scores for m in self.attention.values()}
        self.attention_interior = self._between_scores_and_outputs()
        self._metas: dict[str, TensorMeta | None] = {ph.name: ph.meta for ph in case.placeholders}
        self._metas.update({n.name: n.outputs[0] if len(n.outputs) == 1 else None for n in case.nodes})

    # -- Builder protocol ------------------------------------------------------------------
    def meta(self, ref: Any) -> TensorMeta | None:
        """The captured metadata of an argument given as ``{"ref": name}``."""
        if not isinstance(ref, dict) or "ref" not in ref:
            return None
        return self._metas.get(ref["ref"])

    def reads_output(self, name: str, item: int) -> bool:
        """Whether anything reads output ``item`` of the multi-output node ``name``: a
        ``getitem`` of it, or any other use of the node (taken as reading every output)."""
        if name in self.graph_outputs:
            return True
        for reader in self.readers.get(name, []):
            node = self.nodes[reader]
            if node.target != "getitem" or node.args[1:2] == [item]:
                return True
        return False

    def new_buffer(self, shape: tuple[int, ...], dtype: str, hint: str = "", zeroed: bool = False) -> Buffer:
        buf = Buffer(f"buf{next(self._names)}", tuple(int(s) for s in shape), dtype, zeroed)
        self.temporaries.append(buf)
        return buf

    def kernel_name(self, hint: str) -> str:
        return f"_k{self.tag}_{next(self._kernel_ids)}_{hint}"

    def emit(self, kernel: Kernel) -> None:
        self.kernels.append(kernel)

    def keep(self, buffer: Buffer) -> None:
        """Allocate ``buffer`` after all (a kernel's optional output turned out to be read)."""
        if buffer not in self.temporaries:
            self.temporaries.append(buffer)

    def realize(self, value: Value, hint: str = "") -> Stored:
        if isinstance(value, Stored):
            return value
        if isinstance(value, (ReductionValue, ops_heavy.FusedHost)):
            return value.realize()
        out = self.new_buffer(value.shape, value.dtype, hint)
        self.fill(out, value)
        return Stored(out)

    def share(self, value: Value) -> Value:
        """``value`` stored once for its several readers. A 16-bit float value widened to
        float32 (a half-precision norm or softmax reads its input as float32) is stored at 16
        bits and widened as each reader loads it: exact, and half the bytes written and read."""
        narrow = value.widens if isinstance(value, Lazy) else None
        if narrow is None:
            return self.realize(value, "shared")
        return ops_pointwise.widened(self.realize(narrow, "shared"))

    def _row_plan(self, value: Value) -> tuple[RowPlan | None, RowPlan | None, list[ReductionValue]]:
        """What ``value``'s own kernel computes: the dims and reductions of its row program
        (``rows.plan``), or else of the row program that stores it as one element per row
        (``rows.epilogue_plan``), None where it is neither; and the reductions it reads that
        are computed elsewhere."""
        found = rows.reads(value)
        fused = rows.plan(self, value, found)
        epilogue = rows.epilogue_plan(value, found) if fused is None else None
        served = {id(r) for r in (fused or epilogue or ([], []))[1]}
        return fused, epilogue, [r for r, _ in found if id(r) not in served]

    def fill(self, buffer: Buffer, value: Value) -> None:
        if buffer.numel == 0:
            return
        fused, epilogue, others = self._row_plan(value)
        # Reductions the value reads that its own kernel does not compute: those over the same
        # rows of one shape are computed together, in one walk.
        if len(others) > 1:
            rows.realize_together(self, others)
        if fused is not None:
            # The value reads reductions over its own rows: one kernel computes them and it.
            dims, reductions = fused
            self.emit(rows.row_kernel(self.kernel_name("row"), value.shape, dims, reductions, buffer, value))
            return
        if epilogue is not None:
            # One element per row of the reductions it reads: their kernel stores it.
            dims, reductions = epilogue
            rows.chain_inputs(self, reductions)
            name = self.kernel_name("_".join(sorted({r.kind for r in reductions})))
            # Each reduction's buffer is allocated only if a later reader asks for it.
            stores = [(r, Buffer(f"{buffer.name}_{r.kind}{i}", r.shape, r.dtype)) for i, r in enumerate(reductions)]
            self.emit(rows.row_kernel(name, reductions[0].src.shape, dims, reductions, buffer, None,
                                      stores, epilogue=value))
            return
        product = _epilogue_of(value)
        if product is not None:
            # The value reads a matrix product element for element: the product's kernel stores it.
            self.emit(product.fuse(value, buffer))
            return
        self.emit(pointwise_kernel(self.kernel_name("pointwise"), value, buffer))

    # -- lowering ----------------------------------------------------------------------------
    def run(self) -> LoweredCase:
        for i, ph in enumerate(self.case.placeholders):
            self.env[ph.name] = self._placeholder(i, ph)
        for node in self.case.nodes:
            fn = LOWERINGS.get(node.target)
            if fn is None:
                raise Unsupported(f"operator {node.target} has no kernel lowering")
            args = self._decode(node.args, node.name, [0])
            kwargs = {k: self._decode(v, node.name, [1, k]) for k, v in node.kwargs.items()}
            if node.name in self.scores:
                value = self._scores(node, args)
            elif node.name in self.attention:
                value = self._attention(node, args) or fn(self, node, args, kwargs)
            else:
                value = fn(self, node, args, kwargs)
            if (isinstance(value, Value) and self.users[node.name] > 1 and value.cost > tunables.current().fuse_limit
                    and not self._read_in_one_kernel(node.name) and not self._read_in_one_row_program(node.name)
                    and not self._read_only_by_attention(node.name)):
                value = self.share(value)
            self.env[node.name] = value
        outputs, shapes = self._outputs()
        return LoweredCase(self.case, self.sources, self.kernels, self.temporaries, outputs, self.scalars, shapes)

    def _read_in_one_kernel(self, name: str) -> bool:
        """Whether every reader of ``name`` is elementwise at its shape and their results meet,
        through sole readers that are elementwise too, in one node. Inlined, the value is then
        computed once, in that node's kernel (the kernel writer shares identical expressions):
        storing it to share it would only add a pass over memory (``relu(a + b)`` reads
        ``a + b`` twice, ``x * sigmoid(x)`` reads ``x`` twice)."""
        meta = self._metas.get(name)
        if meta is None or name in self.graph_outputs:
            return False
        chains: list[list[str]] = []
        for reader in self.readers.get(name, []):
            chain = self._chain(reader, meta.shape)
            if not chain:
                return False
            chains.append(chain)
        return bool(chains) and bool(set(chains[0]).intersection(*chains[1:]))

    def _read_in_one_row_program(self, name: str) -> bool:
        """Whether every reader of ``name`` is elementwise at its shape or reduces its trailing
        dims, and all of them meet in one elementwise node at that shape: a residual add read by
        a layer norm's mean, variance and normalisation, a scaled input read by a softmax's max,
        exponentials and sum. That node's kernel is then a row program (``rows.py``) that keeps
        each row in registers, so the value, inlined, is computed once per element there: storing
        it to share it would only add a pass over memory. Rows too long for registers are walked
        once per reduction; the value is then shared as before, not recomputed per walk."""
        meta = self._metas.get(name)
        if meta is None or name in self.graph_outputs or not meta.shape:
            return False
        rank = len(meta.shape)
        row_dims: set[tuple[int, ...]] = set()
        chains: list[list[str]] = []
        for reader in self.readers.get(name, []):
            start: str | None = reader
            node = self.nodes.get(reader)
            if node is not None and node.target in ROW_REDUCTIONS:
                dims = tuple(sorted(int(d) % rank for d in node.args[1])) if len(node.args) > 1 else ()
                if not dims or dims != tuple(range(rank - len(dims), rank)):
                    return False
                row_dims.add(dims)
                start = self._back_at(reader, meta.shape)
            chain = self._chain(start, meta.shape) if start is not None else []
            if not chain:
                return False
            chains.append(chain)
        if len(row_dims) != 1:
            return False  # no reduction (the elementwise rule's case), or rows of several shapes
        row = math.prod(meta.shape[d] for d in next(iter(row_dims)))
        return row <= tunables.current().whole_row_max and bool(set(chains[0]).intersection(*chains[1:]))

    def _between_scores_and_outputs(self) -> set[str]:
        """The nodes on a path from an attention's first product to its second: the logits,
        their softmax and its guards, all computed inside the streaming kernel."""
        inside: set[str] = set()
        for second, match in self.attention.items():
            after: set[str] = set()
            stack = [match.scores]
            while stack:
                name = stack.pop()
                if name not in after:
                    after.add(name)
                    stack.extend(self.readers.get(name, []))
            before: set[str] = set()
            stack = [second]
            while stack:
                name = stack.pop()
                node = self.nodes.get(name)
                if name not in before and node is not None:
                    before.add(name)
                    stack.extend(_refs(node.args) + _refs(node.kwargs))
            inside |= (after & before) - {second}
        return inside

    def _read_only_by_attention(self, name: str) -> bool:
        """Whether ``name`` lies between an attention's two products and only they read it: the
        streaming kernel computes it per tile, so storing it to share it would write (and
        compute) a whole score-sized tensor no kernel reads."""
        if name not in self.attention_interior or name in self.graph_outputs:
            return False
        return all(r in self.attention_interior or r in self.attention for r in self.readers.get(name, []))

    def _chain(self, start: str, shape: list[int]) -> list[str]:
        """``start`` and its sole readers after it, as long as each is elementwise at ``shape``."""
        chain: list[str] = []
        current = start
        while len(chain) < 16 and self._elementwise_at(current, shape):
            chain.append(current)
            after = self.readers.get(current, [])
            if len(after) != 1 or current in self.graph_outputs:
                break
            current = after[0]
        return chain

    def _back_at(self, reduction: str, shape: list[int]) -> str | None:
        """The first node at ``shape`` that a reduction's result reaches through sole readers
        that are elementwise at the reduced shape or broadcasts (a mean's division, a
        variance's epsilon and rsqrt, the broadcast back over the row); None when there is none."""
        current = reduction
        for _ in range(16):
            after = self.readers.get(current, [])
            if len(after) != 1 or current in self.graph_outputs:
                return None
            current = after[0]
            node = self.nodes.get(current)
            if node is None or len(node.outputs) != 1 or node.outputs[0] is None:
                return None
            if self._elementwise_at(current, shape):
                return current
            if node.target != "prims.broadcast_in_dim.default" and node.target not in ops_pointwise.ELEMENTWISE:
                return None
        return None

    def _elementwise_at(self, name: str, shape: list[int]) -> bool:
        node = self.nodes.get(name)
        if node is None or node.target not in ops_pointwise.ELEMENTWISE or len(node.outputs) != 1:
            return False
        out = node.outputs[0]
        return out is not None and out.shape == shape

    def _scores(self, node: Node, args: list[Any]) -> Value:
        """The first product of an attention: lazy, stored only if read outside the kernel.

        Operands that are 16-bit values widened to float32 (and scaled by constants), as a
        16-bit SDPA's decomposition writes them, are multiplied narrow with the constants
        applied to the product: exact products summed in float32 as before (the constants
        applied once to the sum differ from per-input scaling only by float32 rounding), half
        the bytes, on tensor cores in one pass."""
        meta = node.outputs[0]
        assert meta is not None
        bmm = LOWERINGS["aten.bmm.default"]
        narrow = [ops_heavy.narrow_operand(v) if isinstance(v, Value) else None for v in args[:2]]
        wide: list[Value] | None = None  # the operands the kernel multiplies, where they are the spec's
        if narrow[0] is not None and narrow[1] is not None and narrow[0][0].dtype == narrow[1][0].dtype \
                and meta.dtype == "float32":
            (a, fa), (b, fb) = narrow[0], narrow[1]
            a, b, scale = ops_heavy.operand(self, a), ops_heavy.operand(self, b), fa * fb
        else:
            a, b, scale = ops_heavy.operand(self, args[0]), ops_heavy.operand(self, args[1]), 1.0
            wide = [a, b]

        def stored() -> Stored:
            """The product as the spec computes it, for a reader outside the kernel."""
            operands = wide or [ops_heavy.operand(self, v) for v in args[:2]]
            return self.realize(bmm(self, node, operands, {}))

        return ops_attention.ScoresValue(self, meta.shape, meta.dtype, a, b, stored, scale=scale)

    def _attention(self, node: Node, args: list[Any]) -> Value | None:
        """The second product of an attention as one streaming kernel; None when it does not fit."""
        match = self.attention[node.name]
        scores = self.env.get(match.scores)
        if not isinstance(scores, ops_attention.ScoresValue):
            return None
        logits = self.env[match.logits]
        p_dtype = logits.dtype
        for name in reversed(match.chain):  # the reshapes the probabilities went through, applied to g
            step = self.nodes[name]
            meta = step.outputs[0]
            if step.target == "prims.convert_element_type.default":
                p_dtype = meta.dtype if meta else p_dtype
                continue
            rest = self._decode(step.args[1:], step.name, [0])
            logits = LOWERINGS[step.target](self, step, [logits, *rest], {})
        out_meta = node.outputs[0]
        assert out_meta is not None
        _, lq, lk = logits.shape
        bounds = attention_masks.key_bounds(self.nodes, match.logits) \
            if ops_attention.rows_and_keys_kept(self.nodes, match, lq, lk) else []
        how = ops_attention.Flash(p_dtype, match.zero_empty_rows, tuple(bounds))
        out_dtype = out_meta.dtype
        narrow = ops_heavy.narrow_operand(args[1]) if isinstance(args[1], Value) else None
        if narrow is not None and p_dtype == "float32" and out_meta.dtype == "float32" and \
                ops_attention.read_only_narrowed(self.nodes, self.readers, self.graph_outputs, node.name,
                                                 narrow[0].dtype):
            # 16-bit values widened, an output every reader rounds back to 16 bits: the
            # probabilities are multiplied in the values' 16-bit type (as a fused 16-bit
            # attention does), the values as loaded, and the output is stored narrow.
            v, out_dtype = ops_heavy.operand(self, narrow[0]), narrow[0].dtype
            how = dataclasses.replace(how, p_mul=out_dtype, v_scale=narrow[1])
        else:
            v = ops_heavy.operand(self, args[1])
        out = self.new_buffer(tuple(out_meta.shape), out_dtype, "attention")
        kernel = ops_attention.flash_kernel(self.kernel_name("attention"), scores, logits, v, out, how)
        if kernel is None:
            self.temporaries.remove(out)
            return None
        self.emit(kernel)
        return Stored(out) if out_dtype == out_meta.dtype else ops_pointwise.widened(Stored(out))

    def _placeholder(self, i: int, ph: Any) -> Any:
        if ph.meta is None:
            return ph.value  # a non-tensor forward argument: the graph specialised on it
        shape, dtype = tuple(ph.meta.shape), ph.meta.dtype
        if ph.kind == "input":
            buf = Buffer(f"in{ph.position}", shape, dtype)
            self.sources.append(Source(buf, "input", self.input_code(ph.position)))
        elif ph.kind in ("parameter", "buffer", "attribute"):
            buf = Buffer(f"p{i}", shape, dtype)
            self.sources.append(Source(buf, ph.kind, "self" + attr_path(ph.target), target=ph.target))
        else:
            buf = Buffer(f"c{i}", shape, dtype)
            self.sources.append(Source(buf, "constant", "", self.case.constants[ph.name]))
        return Stored(buf)

    def _decode(self, value: Any, node: str, path: list[Any]) -> Any:
        if isinstance(value, list):
            return [self._decode(v, node, [*path, i]) for i, v in enumerate(value)]
        if isinstance(value, dict):
            if "ref" in value:
                return self.env[value["ref"]]
            if "dtype" in value:
                return value["dtype"]
            if "float" in value:
                return float(value["float"])
            if "dict" in value:
                return {k: self._decode(v, node, [*path, k]) for k, v in value["dict"].items()}
            return None  # devices, layouts, memory formats: nothing to lower
        if isinstance(value, float):
            attr = self.attr_uses.get((node, tuple(path)))
            if attr is not None:
                scalar = RuntimeScalar(attr, value)
                if scalar not in self.scalars:
                    self.scalars.append(scalar)
                return scalar
        return value

    def _outputs(self) -> tuple[list[Buffer], list[tuple[int, ...]]]:
        inputs = {id(s.buffer) for s in self.sources}
        seen: set[int] = set()
        outs: list[Buffer] = []
        shapes: list[tuple[int, ...]] = []
        values = [self._decode(enc, "", [0]) for enc in self.case.outputs]
        if any(not isinstance(value, Value) for value in values):
            raise Unsupported("forward returns a value that is not a tensor")
        self._reduce_outputs_together(values)
        for value in values:
            if isinstance(value, ReductionValue) or (isinstance(value, ops_heavy.FusedHost) and value.realized):
                # Computed already (a product or scan whose epilogue kernel an earlier output
                # stored): that kernel stores it as well, not a copy of it.
                value = value.realize()
            # A reshape of a value (a Linear's 2-D product returned as 3-D) is stored in the
            # value's own shape and returned as a view: a copy into the output's shape cost a
            # kernel and the bytes twice, and kept the product from writing the output itself.
            base = _reshape_of(value)
            if isinstance(base, Stored) and id(base.buffer) not in inputs and id(base.buffer) not in seen:
                buf = base.buffer
            elif base is not None and not isinstance(base, (Stored, ReductionValue)):
                buf = self.new_buffer(base.shape, base.dtype, "out")
                self.fill(buf, base)
            else:
                buf = self.new_buffer(value.shape, value.dtype, "out")
                self.fill(buf, value)
            seen.add(id(buf))
            outs.append(buf)
            shapes.append(tuple(value.shape))
        return outs, shapes


    def _reduce_outputs_together(self, values: list[Value]) -> None:
        """Reductions the outputs need over the same rows, computed in one walk: a
        ``var_mean``'s variance and mean, a loss and the statistic returned beside it. Each
        output's kernel would otherwise compute (or read) its own, walking the rows again. A
        reduction an output's own row program computes stays there."""
        pending: list[ReductionValue] = []
        for value in values:
            if isinstance(value, ReductionValue):
                pending.append(value)
                continue
            if isinstance(value, Stored):
                continue
            base = _reshape_of(value)  # what the output's kernel will store (as _outputs does)
            if base is not None and not isinstance(base, (Stored, ReductionValue)):
                value = base
            pending += self._row_plan(value)[2]
        if len(pending) > 1:
            rows.realize_together(self, pending)

RowPlan = tuple[list[int], list[ReductionValue]]


def _reshape_of(value: Value) -> Value | None:
    """The value ``value`` reshapes: ``value`` itself, or the base of a chain of index changes
    (``ir.view``) that reads the base whole, in its own row-major order; None otherwise."""
    syms = list(rows.probe_symbols(value.shape))
    index: list[Any] = syms
    base: Value = value
    while isinstance(base, Lazy) and base.view_of is not None:
        if base.remap is None:   # an index change given only as a loader (as_strided)
            return None
        index = list(base.remap(index))
        base = base.view_of
    if base is value:
        return value
    if base.dtype != value.dtype or base.numel != value.numel:
        return None
    same = sympy.expand(sympy.sympify(linear(index, base.shape)) - linear(syms, value.shape)) == 0
    return base if same else None


def _epilogue_of(value: Value) -> ops_heavy.FusedHost | None:
    """The product or convolution (not yet computed) that ``value`` reads element for element,
    when it reads exactly one and only that way."""
    found = rows.probe_products(value)
    if not found or len({id(p) for p, _ in found}) != 1:
        return None
    product = found[0][0]
    if product.realized or not product.fusable or tuple(product.shape) != tuple(value.shape):
        return None
    syms = rows.probe_symbols(value.shape)
    if not all(rows.same_index(index, syms) for _, index in found):
        return None
    return product


def _refs(value: Any) -> list[str]:
    if isinstance(value, list):
        return [r for v in value for r in _refs(v)]
    if isinstance(value, dict):
        if "ref" in value:
            return [value["ref"]]
        return [r for v in value.values() for r in _refs(v)]
    return []


def lower_case(case: CapturedCase, tag: str, input_code: Callable[[int], str]) -> LoweredCase:
    """``input_code(i)`` names forward's i-th positional argument in the wrapper."""
    return CaseLowerer(case, tag, input_code).run()


__all__ = ["LoweredCase", "Node", "RuntimeScalar", "Source", "Unsupported", "lower_case"]
