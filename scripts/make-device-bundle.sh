#!/usr/bin/env bash
# Builds kiln here and packs what a GPU machine without our build dependencies needs to run
# it: the CLI, the test suite and the benchmark (stripped), the ptx plugin (LLVM linked in
# statically) and the cpp_openmp plugin (with OpenBLAS, and Sleef's header and library for
# the kernels it compiles there), the KIR interpreter plugin (some unit tests load it), the
# shared libraries they use that such a machine lacks, the
# examples and configs. Programs find their libraries through RPATH ($ORIGIN); plugins sit in
# lib/kiln. The folder is packed into OUT.tar.xz, which must stay under 64 MiB.
#   scripts/make-device-bundle.sh [OUT]   (default: device-bundle/ and device-bundle.tar.xz)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/device-bundle}
build=$root/build/default
cmake --preset default >/dev/null
cmake --build --preset default
rm -rf "$out"
mkdir -p "$out/bin" "$out/lib/kiln"
for tool in kiln kiln_unit_tests kiln_runtime_api_tests kiln-bench kiln-conformance; do strip -o "$out/bin/$tool" "$build/bin/$tool"; done
strip -o "$out/lib/libkiln.so.1" "$build/lib/libkiln.so.1"
# The Python bridge's C call path (CPython's limited API: the target's Python 3.12 loads it).
strip -o "$out/lib/_kiln_call.abi3.so" "$build/lib/_kiln_call.abi3.so"
ln -sf libkiln.so.1 "$out/lib/libkiln.so"
for plugin in ptx cpp_openmp kir_interpreter; do
  strip -o "$out/lib/kiln/kiln_$plugin.so" "$build/lib/kiln/kiln_$plugin.so"
done
mkdir -p "$out/include" && cp "$(dpkg -L libsleef-dev | grep '/sleef\.h$')" "$out/include/"
cp -r "$root/examples" "$root/configs" "$out/"
mkdir -p "$out/share/kiln/conformance" && cp -r "$root/conformance/graphs" "$out/share/kiln/conformance/"
mkdir -p "$out/bench" && cp "$root"/bench/*.py "$root"/bench/*.sh "$out/bench/" && cp -r "$root/bench/graphs" "$root/bench/suites" "$root/bench/models" "$out/bench/"
mkdir -p "$out/scripts" && cp "$root/scripts/ptx-suite.sh" "$out/scripts/"
# The Python bridge (pure Python over lib/libkiln.so) and the models it is measured on.
mkdir -p "$out/python" "$out/tests/python"
cp -r "$root/python/kiln" "$root/python/pyproject.toml" "$out/python/"
cp "$root"/tests/python/*.py "$out/tests/python/"
find "$out/python" -name __pycache__ -prune -exec rm -rf {} +
# Libraries the target has itself (glibc, the C++ runtime, which is newer there) stay behind.
keep_out='^(linux-vdso|libc\.so|libm\.so|libdl\.so|libpthread\.so|librt\.so|ld-linux|libstdc\+\+\.so|libgcc_s\.so)'
for f in "$out"/bin/* "$out"/lib/kiln/*.so "$out"/lib/libkiln.so.1; do
  ldd "$f" | awk '$3 ~ /^\// {print $1, $3}' | while read -r name path; do
    if ! [[ $name =~ $keep_out ]] && [ ! -e "$out/lib/$name" ]; then cp -L "$path" "$out/lib/$name"; fi
  done
done
for f in "$out"/bin/*; do patchelf --set-rpath '$ORIGIN/../lib' "$f"; done
for f in "$out"/lib/kiln/*.so; do patchelf --set-rpath '$ORIGIN/..' "$f"; done
for f in "$out"/lib/*.so*; do [ -L "$f" ] || patchelf --set-rpath '$ORIGIN' "$f"; done
# The kernels cpp_openmp compiles there link -lsleef from here.
cp -L "$(g++ -print-file-name=libsleef.so.3)" "$out/lib/libsleef.so.3"
ln -sf libsleef.so.3 "$out/lib/libsleef.so"
tar -C "$(dirname "$out")" -cJf "$out.tar.xz" "$(basename "$out")"
size=$(stat -c %s "$out.tar.xz")
echo "bundle: $out ($(($(du -sb "$out" | cut -f1) / 1024 / 1024)) MiB), packed $out.tar.xz ($((size / 1024 / 1024)) MiB)"
if [ "$size" -gt $((64 * 1024 * 1024)) ]; then
  echo "packed bundle is over 64 MiB" >&2
  exit 1
fi
