"""Peak memory bandwidth and arithmetic throughput of the GPUs the performance report knows, by name.

From NVIDIA's data sheets (dense, no sparsity; SXM boards unless named): H100 SXM 3.35 TB/s HBM3,
67 TFLOP/s fp32, 989 TFLOP/s bf16/fp16 tensor cores; H100 PCIe 2.0 TB/s, 51, 756; H100 NVL 3.9 TB/s,
60, 835; H200 4.8 TB/s, 67, 989; A100 80GB SXM 2.039 TB/s, 19.5, 312; A100 40GB 1.555 TB/s, 19.5, 312.
A peak is what the vendor states, not what this machine reaches; the report says which row it used.
"""

from __future__ import annotations

from dataclasses import dataclass

SOURCE = "NVIDIA data sheet (dense)"


@dataclass(frozen=True)
class GpuPeak:
    label: str
    bytes_per_s: float
    flops_fp32: float  # without tensor cores
    flops_16bit: float  # bf16/fp16 on tensor cores, dense


# (substring of the name nvidia-smi reports, peak); the first match wins, so specific names come first.
PEAKS: tuple[tuple[str, GpuPeak], ...] = (
    ("H100 PCIe", GpuPeak("H100 PCIe", 2.0e12, 51e12, 756e12)),
    ("H100 NVL", GpuPeak("H100 NVL", 3.9e12, 60e12, 835e12)),
    ("H100", GpuPeak("H100 SXM (HBM3)", 3.35e12, 67e12, 989e12)),
    ("H200", GpuPeak("H200", 4.8e12, 67e12, 989e12)),
    ("A100-SXM4-80GB", GpuPeak("A100 80GB SXM", 2.039e12, 19.5e12, 312e12)),
    ("A100", GpuPeak("A100 40GB", 1.555e12, 19.5e12, 312e12)),
)


def peak_for(gpu_name: str | None) -> GpuPeak | None:
    if not gpu_name:
        return None
    for fragment, peak in PEAKS:
        if fragment in gpu_name:
            return peak
    return None


def peak_flops(peak: GpuPeak, dtype: str | None) -> float:
    return peak.flops_16bit if dtype in ("bfloat16", "float16") else peak.flops_fp32
