# lit configuration for kiln's golden text tests.
import os
import sys

import lit.formats

config.name = "kiln"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".test"]
config.excludes = ["Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.kiln_binary_dir, "tests", "lit")

config.substitutions.append(("%kiln", config.kiln_bin))
config.substitutions.append(("%python", sys.executable))
config.substitutions.append(("%examples", os.path.join(config.kiln_source_dir, "examples")))
config.substitutions.append(("%configs", os.path.join(config.kiln_source_dir, "configs")))
config.substitutions.append(("%bench", os.path.join(config.kiln_source_dir, "bench")))
config.substitutions.append(("%inputs", os.path.join(config.test_source_root, "Inputs")))
config.substitutions.append(("%test_plugins", config.kiln_test_plugin_dir))
config.substitutions.append(("%plugins", config.kiln_plugin_dir))
config.substitutions.append(("%conformance", config.conformance))
config.substitutions.append(("%cpu_codegen", config.cpu_codegen))
config.substitutions.append(("%ptx_codegen", config.ptx_codegen))
config.substitutions.append(("%amdgpu_codegen", config.amdgpu_codegen))
config.substitutions.append(
    ("%check_hsaco", os.path.join(config.kiln_source_dir, "tests", "tools", "check_hsaco.py")))
config.substitutions.append(("FileCheck", config.filecheck))
# llvm-readobj reads AMDGPU code objects' notes (kernel descriptors, register counts).
config.substitutions.append(
    ("%readobj", os.path.join(os.path.dirname(config.filecheck), "llvm-readobj")))

# GPU code generation is built when LLVM 19 is; ptxas and libdevice come with a CUDA toolkit,
# which may be absent: tests that need them say REQUIRES and are reported UNSUPPORTED then.
if os.path.exists(config.ptx_codegen):
    config.available_features.add("ptx-codegen")
# The AMDGPU code generator is built when lld is there too; it needs no ROCm and no AMD GPU.
if os.path.exists(config.amdgpu_codegen):
    config.available_features.add("amdgpu-codegen")
cuda_home = os.environ.get("CUDA_HOME", "/usr/local/cuda")
ptxas = os.path.join(cuda_home, "bin", "ptxas")
if os.path.exists(ptxas):
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))
if os.path.exists(os.path.join(cuda_home, "nvvm", "libdevice", "libdevice.10.bc")):
    config.available_features.add("libdevice")
config.substitutions.append(("%not", config.not_tool))
# The sanitizer build (ASan + UBSan), for tests whose subject the sanitizer takes over.
if getattr(config, "kiln_sanitized", False):
    config.available_features.add("sanitized")
# Seconds a test that proves a step linear gives it: the sanitizers slow everything about
# thirtyfold, and a quadratic step would still blow far past the longer bound.
config.substitutions.append(
    ("%linear_timeout", "300" if getattr(config, "kiln_sanitized", False) else "60"))

# Tests see no KILN_* settings from the caller's environment, and a cache of their own.
for name in ["KILN_CONFIG", "KILN_CACHE_DIR", "KILN_LOG", "KILN_DEBUG_DIR", "KILN_PLUGIN_PATH"]:
    config.environment.pop(name, None)
config.environment["HOME"] = config.test_exec_root
# The Python package (kiln.bench_reference, kiln.export_model...) from this source tree, not
# whichever checkout an editable install last pointed at.
config.environment["PYTHONPATH"] = os.path.join(config.kiln_source_dir, "python")
config.substitutions.append(("%py_package", config.environment["PYTHONPATH"]))
for name in ["ASAN_OPTIONS", "UBSAN_OPTIONS"]:
    if name in os.environ:
        config.environment[name] = os.environ[name]
