"""AOTInductor's precompiled wrapper header, built ahead in a child of the run's zygote (GPU tier).

Why: every AOTInductor build includes one large header (torch/csrc/inductor/aoti_include/<device>.h), which Inductor
precompiles once per machine, keyed by the compile's command line, into /tmp/torchinductor_<user>/precompiled_headers
under a file lock (`_precompile_header` in torch/_inductor/codecache.py), and torch never removes it. On a fresh
machine the first build of every worker waits for that one compile, and took about twice as long as the later ones
(docs/benchmarks.md, "How the GPU default got from 465 s to 284 s").
Started in a forked child once the zygote's warm-up is done (the CPU ISA,
part of the key, is known then), the compile runs while the workers start and collect; a worker that reaches the
header finds it, or waits on torch's own lock for less.

The recipe is torch's own (`AotCodeCompiler.compile`, torch 2.11 to 2.13): the header, command line and options a
package of a model without large weights is built with, so the file and its lock are the ones each build looks for
(tests/unit/test_aoti_header.py holds a real build to the header built ahead). Where torch's private names differ,
the child says so in the zygote's log and the first build makes the header as before.
"""

from __future__ import annotations

import os
import sys


def build_header(device_type: str) -> str:
    """Precompile the header an AOTInductor package for `device_type` includes (nothing to do where it exists, but
    the preprocessing that keys it); the precompiled header's path."""
    from torch._inductor import codecache, config
    from torch._inductor.cpp_builder import CppBuilder, CppTorchDeviceOptions
    from torch._inductor.cpu_vec_isa import pick_vec_isa
    from torch._inductor.utils import determine_aoti_mmap_flags

    vec_isa = pick_vec_isa()
    command_line = CppBuilder(name="o", sources="i",
                              BuildOption=CppTorchDeviceOptions(vec_isa=vec_isa, device_type=device_type, aot_mode=True))
    use_external_weights, use_mmap_weights = determine_aoti_mmap_flags(0)
    compile_command = {
        "aot_mode": True,
        "device_type": device_type,
        "use_mmap_weights": use_mmap_weights,
        "use_mmap_weights_external": use_external_weights,
        "use_relative_path": config.is_fbcode() and device_type == "cpu",
        "vec_isa": vec_isa,
    }
    return codecache._precompile_header(codecache._get_cpp_wrapper_header(device_type, aot_mode=True),
                                        repr(command_line.get_command_line()),
                                        min_optimize=not config.aot_inductor.package_cpp_only, **compile_command)


def start_building_header(device_type: str) -> int:
    """Fork a child that builds the header and ends; its pid (the caller reaps it). Call it with no other thread
    running: the child runs on what the fork copied."""
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid != 0:
        return pid
    code = 0
    try:
        build_header(device_type)
    except Exception as exc:  # torch's private recipe changed: the first build makes the header instead
        print(f"AOTInductor's {device_type} header was not built ahead ({type(exc).__name__}: {exc}); "
              "the first build makes it", flush=True)
        code = 1
    sys.stdout.flush()
    os._exit(code)
