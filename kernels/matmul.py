"""(M, K) @ (K, N) through tl.dot under `@triton.autotune`; fp32 in and out, no backward.

tl.dot uses input_precision="ieee": its default for fp32 is TF32 on GPUs that have it, which
would not match torch.matmul's fp32 result within fp32 tolerances.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from harness.domain.spec import KernelSpec

K_DIM = 64
N_DIM = 48  # not a multiple of every BLOCK_N: the column blocks are masked


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_M": 16, "BLOCK_N": 16, "BLOCK_K": 16}, num_warps=2),
        triton.Config({"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32}, num_warps=4),
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 32, "BLOCK_K": 32}, num_warps=4),
    ],
    key=["M", "N", "K"],
)
@triton.jit
def matmul_kernel(
    a_ptr, b_ptr, c_ptr, M, N, K,
    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    pid_m = tl.program_id(axis=0)
    pid_n = tl.program_id(axis=1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        ks = k * BLOCK_K + offs_k
        a = tl.load(
            a_ptr + offs_m[:, None] * stride_am + ks[None, :] * stride_ak,
            mask=(offs_m[:, None] < M) & (ks[None, :] < K), other=0.0,
        )
        b = tl.load(
            b_ptr + ks[:, None] * stride_bk + offs_n[None, :] * stride_bn,
            mask=(ks[:, None] < K) & (offs_n[None, :] < N), other=0.0,
        )
        acc = tl.dot(a, b, acc, input_precision="ieee")
    c_mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn, acc, mask=c_mask)


def launch(wrap, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), device=a.device, dtype=torch.float32)
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]), triton.cdiv(N, meta["BLOCK_N"]))  # noqa: E731
    wrap(matmul_kernel)[grid](
        a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1)
    )
    return c


def make_inputs(size: int, device: torch.device, generator: torch.Generator):
    a = torch.randn((size, K_DIM), generator=generator)
    b = torch.randn((K_DIM, N_DIM), generator=generator)
    return a.to(device), b.to(device)


SPEC = KernelSpec(
    name="matmul",
    kernels=(matmul_kernel,),
    arguments=(("a", torch.Tensor), ("b", torch.Tensor)),
    launch=launch,
    reference=torch.matmul,
    make_inputs=make_inputs,
    sizes=(100, 257),
    dynamic_dims={"a": (0,)},
    flops=lambda a_shape, b_shape: 2 * a_shape[0] * a_shape[1] * b_shape[1],
    accepts_noncontiguous=True,  # every stride is passed to the kernel
    features=("tl.dot", "autotune", "grid-lambda"),
    description=f"(size, {K_DIM}) @ ({K_DIM}, {N_DIM}), fp32, tl.dot with input_precision='ieee', "
    "@triton.autotune over block sizes; no backward",
)
