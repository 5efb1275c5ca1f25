"""Reads `llvm-readobj --file-headers --notes` of an AMDGPU code object (stdin) and checks what
a loader and a fast kernel need: the ISA in the ELF flags, every kernel's descriptor, its wave
width, no scratch (private segment: spills), registers and LDS within the ISA's limits.
Prints one line per code object: `ok NAME ARCH waveW kernels=N`, or `bad ...` with the reason."""
import re
import sys

name, arch, wave = sys.argv[1], sys.argv[2], int(sys.argv[3])
text = sys.stdin.read()
problems = []
machine = re.search(r"EF_AMDGPU_MACH_AMDGCN_(GFX[0-9A-F]+)", text)
if not machine or machine.group(1).lower() != arch:
    problems.append("ELF flags name %s" % (machine.group(1) if machine else "no ISA"))
kernels = re.split(r"\n  - \.", text.split("amdhsa.kernels:", 1)[-1])[1:] if "amdhsa.kernels:" in text else []
if not kernels:
    problems.append("no kernel metadata")
for k in kernels:
    field = lambda key: int(re.search(r"\.%s:\s+(\d+)" % key, k).group(1))
    kname = re.search(r"\n    \.name:\s+(\S+)", k).group(1)
    if field("wavefront_size") != wave:
        problems.append("%s: wave %d" % (kname, field("wavefront_size")))
    if field("private_segment_fixed_size") != 0:
        problems.append("%s: %d bytes of scratch" % (kname, field("private_segment_fixed_size")))
    if field("vgpr_count") > 512 or field("sgpr_count") > 112:
        problems.append("%s: %d VGPRs, %d SGPRs" % (kname, field("vgpr_count"), field("sgpr_count")))
    if field("group_segment_fixed_size") > 65536:
        problems.append("%s: %d bytes of LDS" % (kname, field("group_segment_fixed_size")))
    if ".symbol:" not in k or ".kd" not in k:
        problems.append("%s: no kernel descriptor" % kname)
print(("ok %s %s wave%d kernels=%d" % (name, arch, wave, len(kernels))) if not problems
      else "bad %s %s: %s" % (name, arch, "; ".join(problems)))
