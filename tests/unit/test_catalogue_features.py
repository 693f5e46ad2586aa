"""The built-in catalogue covers the Triton features PyTorch's own tests exercise, one tagged kernel at least each."""

from harness.domain.registry import load_specs

# The features issue 23 names, as tagged in KernelSpec.features (docs/triton-features.md maps them to PyTorch's tests).
COVERED_FEATURES = (
    "grid-tuple", "kernel-run", "launch-options", "optional-pointer", "constexpr-global", "libdevice",
    "jit-calls-jit", "block-pointer", "atomics", "random", "tensor-descriptor", "data-dependent-output",
    "do-not-specialize", "tuple-argument", "dtype-constexpr", "autotune-key-change", "storage-offset",
    "inline-asm", "fp8", "tensor-descriptor-device", "data-dependent-int",
)


def test_every_feature_is_tagged_by_a_catalogue_kernel():
    tagged = {feature for spec in load_specs().values() for feature in spec.features}
    assert [feature for feature in COVERED_FEATURES if feature not in tagged] == []


def test_the_catalogue_has_at_least_thirty_kernels():
    assert len(load_specs()) >= 30


def test_every_kernel_declares_what_it_shows():
    specs = load_specs().values()
    assert [spec.name for spec in specs if not spec.features or not spec.description] == []
