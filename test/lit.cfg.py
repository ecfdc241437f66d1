# -*- Python -*-
# lit configuration for attn-mlir.

import os
import subprocess

import lit.formats
import lit.util
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "ATTN"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs", "lib", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]

config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.attn_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

tool_dirs = [config.attn_tools_dir, config.llvm_tools_dir]
tools = ["attn-opt", "attn-capi-test", "mlir-runner", "mlir-translate", "not", "llvm-nm", "llvm-readelf"]

# Sanitizer builds (cmake -DATTN_ENABLE_SANITIZERS=ON, `make check-asan`; see
# docs/reliability.md). The project's executables carry the ASan/UBSan
# runtime; an uninstrumented host that loads an instrumented project library
# (Debian's mlir-opt with the plugin, python3 with the ctypes package) needs
# the runtime preloaded: %host_env (for `env`) says so, and is empty in a
# normal build. Leak checking stays on for the project's executables and is
# off in preloaded hosts, whose interpreters leak by design.
host_env = ""
# Coverage builds (cmake -DATTN_ENABLE_COVERAGE=ON, scripts/coverage.sh):
# the profile runtime in the project's libraries changes their symbols.
if lit.util.pythonize_bool(getattr(config, "attn_coverage", "")):
    config.available_features.add("coverage")
if lit.util.pythonize_bool(getattr(config, "attn_sanitizers", "")):
    config.available_features.add("asan")
    config.available_features.add("ubsan")
    common = "abort_on_error=0:halt_on_error=1:print_stacktrace=1"
    config.environment["ASAN_OPTIONS"] = (
        common + ":detect_leaks=1:detect_stack_use_after_return=1"
        ":strict_string_checks=1:check_initialization_order=1")
    config.environment["UBSAN_OPTIONS"] = common
    runtime = subprocess.run(
        [config.cxx_compiler, "-print-file-name=libclang_rt.asan-x86_64.so"],
        capture_output=True, text=True, check=True).stdout.strip()
    host_env = (f"LD_PRELOAD={runtime} "
                f"ASAN_OPTIONS={common}:detect_leaks=0")
    tools.append(ToolSubst("mlir-opt", command=f"env {host_env} "
                           + os.path.join(config.llvm_tools_dir, "mlir-opt")))
else:
    tools.append("mlir-opt")
config.substitutions.append(("%host_env", host_env))
if lit.util.pythonize_bool(getattr(config, "attn_fuzzer", "")):
    config.available_features.add("attn-fuzz")
    tools.append("attn-fuzz")
llvm_config.add_tool_substitutions(tools, tool_dirs)

runner_libs = ",".join(
    os.path.join(config.mlir_lib_dir, lib)
    for lib in ["libmlir_runner_utils.so", "libmlir_c_runner_utils.so"]
)
config.substitutions.append(("%mlir_runner_libs", runner_libs))
# The OpenMP runtime, for programs lowered with --attn-cpu-pipeline=threads=true.
config.substitutions.append(
    ("%openmp_runner_libs",
     runner_libs + "," + os.path.join(config.mlir_lib_dir, "libomp.so")))

python = config.python_executable
test_lib = os.path.join(config.attn_src_root, "test", "lib")
config.substitutions.append(("%python", python))
config.substitutions.append(
    (
        "%attn-check",
        f"{python} {os.path.join(test_lib, 'attn_check.py')}"
        f" --attn-opt {os.path.join(config.attn_tools_dir, 'attn-opt')}"
        f" --mlir-runner {os.path.join(config.llvm_tools_dir, 'mlir-runner')}"
        f" --shared-libs {runner_libs}",
    )
)
config.substitutions.append(
    (
        "%raise-compare",
        f"{python} {os.path.join(test_lib, 'raise_compare.py')}"
        f" --attn-opt {os.path.join(config.attn_tools_dir, 'attn-opt')}"
        f" --mlir-runner {os.path.join(config.llvm_tools_dir, 'mlir-runner')}"
        f" --shared-libs {runner_libs}",
    )
)
# The GPU kernels' per-block program emulated on the CPU (--attn-to-gpu=emulate).
config.substitutions.append(
    (
        "%gpu-emulation-check",
        f"{python} {os.path.join(test_lib, 'attn_check.py')}"
        f" --attn-opt {os.path.join(config.attn_tools_dir, 'attn-opt')}"
        f" --mlir-runner {os.path.join(config.llvm_tools_dir, 'mlir-runner')}"
        f" --shared-libs {runner_libs}"
        " --pipeline=--attn-gpu-emulation-pipeline",
    )
)
# The split-KV count rule's host code against an exact model of it.
config.substitutions.append(
    (
        "%split-count-check",
        f"{python} {os.path.join(test_lib, 'split_count_check.py')}"
        f" --attn-opt {os.path.join(config.attn_tools_dir, 'attn-opt')}"
        f" --mlir-runner {os.path.join(config.llvm_tools_dir, 'mlir-runner')}"
        f" --shared-libs {runner_libs}",
    )
)
# --attn-approximate-exp2 against float64 exp2.
config.substitutions.append(
    (
        "%exp2-check",
        f"{python} {os.path.join(test_lib, 'exp2_check.py')}"
        f" --attn-opt {os.path.join(config.attn_tools_dir, 'attn-opt')}"
        f" --mlir-runner {os.path.join(config.llvm_tools_dir, 'mlir-runner')}"
        f" --shared-libs {runner_libs}",
    )
)
config.substitutions.append(
    ("%gpu-binary", f"{python} {os.path.join(test_lib, 'gpu_binary.py')}"))
config.substitutions.append(
    (
        "%attn-random",
        f"{python} {os.path.join(test_lib, 'attn_random.py')}"
        f" --attn-opt {os.path.join(config.attn_tools_dir, 'attn-opt')}"
        f" --mlir-runner {os.path.join(config.llvm_tools_dir, 'mlir-runner')}"
        f" --shared-libs {runner_libs}"
        f" --openmp-shared-libs {runner_libs},"
        f"{os.path.join(config.mlir_lib_dir, 'libomp.so')}",
    )
)
config.substitutions.append(("%attn_src_root", config.attn_src_root))
config.substitutions.append(("%attn_obj_root", config.attn_obj_root))

# Integration: the installed CMake package, the mlir-opt plugin.
config.substitutions.append(("%cmake", config.cmake_command))
config.substitutions.append(("%cxx", config.cxx_compiler))
config.substitutions.append(
    ("%attn_plugin", os.path.join(config.attn_lib_dir, "AttnMLIRPlugin.so"))
)

# Python: the attn_mlir package in the build tree.
config.substitutions.append(
    ("%attn_python_packages", os.path.join(config.attn_obj_root, "python_packages"))
)

# The CUDA runtime library (lib/Runtime): built when cuda.h was found.
cuda_include = getattr(config, "cuda_include_dir", "")
if cuda_include and os.path.exists(os.path.join(cuda_include, "cuda.h")):
    config.available_features.add("cuda-toolkit")
    config.substitutions.append(("%cuda_include", cuda_include))
    cuda_root = os.path.dirname(cuda_include)
    ptxas = os.path.join(cuda_root, "bin", "ptxas")
    if os.path.exists(ptxas):
        config.available_features.add("ptxas")
        config.substitutions.append(("%ptxas", ptxas))
    for stubs in ["lib64/stubs", "lib/stubs", "lib/x64/stubs"]:
        stub = os.path.join(cuda_root, stubs, "libcuda.so")
        if os.path.exists(stub):
            config.available_features.add("cuda-stub-libcuda")
            config.substitutions.append(("%cuda_stub_libcuda", stub))
            break
# C programs that link an instrumented project library carry the runtime.
sanitize_cc = (" -fsanitize=address,undefined"
               if "asan" in config.available_features else "")
config.substitutions.append(("%cc", config.c_compiler + sanitize_cc))
config.substitutions.append(
    (
        "%attn_cuda_runtime",
        os.path.join(config.attn_lib_dir, "libattn_cuda_runtime.so"),
    )
)
