"""kevolve.exec.interp_trace: exact counts of what small known kernels do under the interpreter."""

from __future__ import annotations

import os

import pytest
import torch
import triton
import triton.language as tl

from kevolve.exec.interp_trace import InterpTrace, TraceUnavailable

pytestmark = pytest.mark.skipif(os.environ.get("TRITON_INTERPRET") != "1", reason="needs TRITON_INTERPRET=1")


@triton.jit
def masked_copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


@triton.jit
def exp_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, tl.exp(x) + tl.sqrt(tl.abs(x)), mask=mask)


@triton.jit
def tile_dot(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    i = tl.arange(0, M)[:, None]
    j = tl.arange(0, N)[None, :]
    k = tl.arange(0, K)
    a = tl.load(a_ptr + i * K + k[None, :])
    b = tl.load(b_ptr + k[:, None] * N + j)
    tl.store(c_ptr + i * N + j, tl.dot(a, b))


def test_masked_copy_counts_exact_bytes_not_padded_lanes() -> None:
    n, block = 1000, 256
    x = torch.randn(n)
    y = torch.empty_like(x)
    with InterpTrace() as trace:
        masked_copy[(triton.cdiv(n, block),)](x, y, n, BLOCK=block)
    assert torch.equal(x, y)  # counting does not change what the kernel does
    (rec,) = trace.launches
    assert rec.name == "masked_copy"
    assert rec.grid == (4, 1, 1) and rec.programs == 4
    assert (rec.loads, rec.stores) == (4, 4)
    # 1000 fp32 values each way; the last block's 24 masked-off lanes move nothing.
    assert rec.bytes_loaded == 4000 and rec.bytes_stored == 4000
    assert rec.max_tile_bytes == 256 * 4  # the tile still spans the whole block
    assert rec.max_block_elems == 256
    assert rec.arg_bytes_in == 8000
    assert rec.sfu_total == 0 and rec.dot_flops == 0


@triton.jit
def descriptor_copy(x_desc, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, x_desc.load([tl.program_id(0) * BLOCK]), mask=offs < n)


def test_descriptor_loads_count_like_pointer_loads() -> None:
    # A TMA kernel must not look cheaper to the MTIA simulator than the same pointer kernel:
    # zero-filled lanes past the end move nothing, and the descriptor's tensor is an argument.
    from triton.tools.tensor_descriptor import TensorDescriptor

    n, block = 1000, 256
    x = torch.randn(n)
    y = torch.empty_like(x)
    with InterpTrace() as trace:
        descriptor_copy[(triton.cdiv(n, block),)](TensorDescriptor.from_tensor(x, [block]), y, n, BLOCK=block)
    assert torch.equal(x, y)
    (rec,) = trace.launches
    assert rec.bytes_loaded == 4000 and rec.bytes_stored == 4000
    assert rec.arg_bytes_in == 8000


def test_fp16_elements_are_two_bytes() -> None:
    x = torch.randn(512).half()
    y = torch.empty_like(x)
    with InterpTrace() as trace:
        masked_copy[(1,)](x, y, 300, BLOCK=512)
    assert trace.bytes_loaded == 600 and trace.bytes_stored == 600


def test_special_functions_are_counted_per_element_of_the_block() -> None:
    n, block = 100, 64
    x = torch.randn(n)
    y = torch.empty_like(x)
    with InterpTrace() as trace:
        exp_kernel[(2,)](x, y, n, BLOCK=block)
    torch.testing.assert_close(y, x.exp() + x.abs().sqrt())
    (rec,) = trace.launches
    # SFUs compute every lane of the block, masked or not: 2 programs x 64 lanes.
    assert dict(rec.sfu_elems) == {"exp": 128, "sqrt": 128}
    assert rec.sfu_ops == {64: 4}
    # exp's internal helper calls are not also counted as vector ops: the add and abs are.
    assert rec.vector_ops[64] >= 4


def test_dot_flops_and_launch_list() -> None:
    a, b = torch.randn(16, 32), torch.randn(32, 64)
    c = torch.empty(16, 64)
    with InterpTrace() as trace:
        tile_dot[(1,)](a, b, c, 16, 64, 32)
        tile_dot[(1,)](a, b, c, 16, 64, 32)
    torch.testing.assert_close(c, a @ b, atol=1e-3, rtol=1e-3)
    assert len(trace.launches) == 2
    assert all(r.dot_ops == 1 and r.dot_flops == 2 * 16 * 64 * 32 for r in trace.launches)
    (summary,) = trace.summaries()
    assert summary.launches == 2 and summary.dot_flops == 2 * 2 * 16 * 64 * 32


def test_hooks_are_removed_after_the_block() -> None:
    from triton.runtime import interpreter

    before = interpreter.InterpreterBuilder.create_exp
    x = torch.randn(64)
    y = torch.empty_like(x)
    with pytest.raises(ValueError), InterpTrace():
        raise ValueError("boom")
    assert interpreter.InterpreterBuilder.create_exp is before
    with InterpTrace() as trace:
        exp_kernel[(1,)](x, y, 64, BLOCK=64)
    exp_kernel[(1,)](x, y, 64, BLOCK=64)  # outside: not counted
    assert len(trace.launches) == 1


def test_a_missing_interpreter_internal_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    from triton.runtime import interpreter

    monkeypatch.delattr(interpreter.InterpreterBuilder, "create_masked_load")
    with pytest.raises(TraceUnavailable, match="InterpreterBuilder.create_masked_load"), InterpTrace():
        pass
