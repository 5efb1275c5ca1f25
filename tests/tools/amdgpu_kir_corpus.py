"""Compiles every KIR file under DIR (the differential suite's graphs, written with
KILN_TEST_KIR_DIR) to AMDGPU code objects for each target and checks each with check_hsaco:
the suite's graphs cannot run without an AMD GPU, but every one of them must compile, link and
describe its kernels correctly for gfx90a, gfx942 and gfx1100.

    amdgpu_kir_corpus.py --codegen kiln-amdgpu-codegen --readobj llvm-readobj DIR
"""
import argparse
import concurrent.futures
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_hsaco  # noqa: E402

TARGETS = [("gfx90a", 64, []), ("gfx942", 64, []), ("gfx1100", 32, [])]


def check(args, path, arch, wave, extra):
    """'' when `path` compiles for `arch` and its code object passes, else the reason."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "k.hsaco")
        built = subprocess.run([args.codegen, "--emit", "hsaco", "--arch", arch, *extra, path,
                                "-o", out], capture_output=True, text=True)
        if built.returncode != 0:
            return "%s %s: %s" % (path, arch, built.stderr.strip()[-400:])
        notes = subprocess.run([args.readobj, "--file-headers", "--notes", out],
                               capture_output=True, text=True)
        found, _ = check_hsaco.problems(notes.stdout, arch, wave)
        return "%s %s: %s" % (path, arch, "; ".join(found)) if found else ""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--codegen", required=True)
    parser.add_argument("--readobj", required=True)
    parser.add_argument("dir")
    args = parser.parse_args()
    files, kernels = [], 0
    for root, _, names in os.walk(args.dir):
        for name in sorted(names):
            if not name.endswith(".kir"):
                continue
            path = os.path.join(root, name)
            with open(path) as f:
                generated = len(re.findall(r"^kernel \S+ (pointwise|reduction)$", f.read(), re.M))
            if generated:  # graphs made only of library calls have no code to generate
                files.append(path)
                kernels += generated
    if not files:
        print("no KIR files under %s: run the differential suite with KILN_TEST_KIR_DIR" %
              args.dir)
        return 1
    jobs = [(path, *target) for path in files for target in TARGETS]
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        failures = [r for r in pool.map(lambda j: check(args, *j), jobs) if r]
    print("%d KIR files, %d generated kernels, compiled for %s: %d failures" %
          (len(files), kernels, ", ".join("%s wave%d" % (a, w) for a, w, _ in TARGETS),
           len(failures)))
    for f in failures[:50]:
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
