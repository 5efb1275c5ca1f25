"""Checks an AMDGPU code object from `llvm-readobj --file-headers --notes` (its text on stdin):
the ISA in the ELF flags, every kernel's descriptor, its wave width, no scratch (private segment:
register spills), registers and LDS within the ISA's limits. Prints one line per code object:
`ok NAME ARCH waveW kernels=N`, or `bad NAME ARCH: reasons`.

    llvm-readobj --file-headers --notes k.hsaco | check_hsaco.py NAME ARCH WAVE
"""
import re
import sys


def problems(text, arch, wave):
    """The reasons `text` (readobj's output) fails the checks, and its kernel count."""
    found = []
    machine = re.search(r"EF_AMDGPU_MACH_AMDGCN_(GFX[0-9A-F]+)", text)
    if not machine or machine.group(1).lower() != arch:
        found.append("ELF flags name %s" % (machine.group(1) if machine else "no ISA"))
    listing = text.split("amdhsa.kernels:", 1)
    kernels = re.split(r"\n  - \.", listing[1])[1:] if len(listing) == 2 else []
    if not kernels:
        found.append("no kernel metadata")
    for k in kernels:
        field = lambda key: int(re.search(r"\.%s:\s+(\d+)" % key, k).group(1))
        name = re.search(r"\n    \.name:\s+(\S+)", k).group(1)
        if field("wavefront_size") != wave:
            found.append("%s: wave %d" % (name, field("wavefront_size")))
        if field("private_segment_fixed_size") != 0:
            found.append("%s: %d bytes of scratch" % (name, field("private_segment_fixed_size")))
        if field("vgpr_count") > 512 or field("sgpr_count") > 112:
            found.append("%s: %d VGPRs, %d SGPRs" % (name, field("vgpr_count"), field("sgpr_count")))
        if field("group_segment_fixed_size") > 65536:
            found.append("%s: %d bytes of LDS" % (name, field("group_segment_fixed_size")))
        if not re.search(r"\.symbol:\s+\S+\.kd", k):
            found.append("%s: no kernel descriptor" % name)
    return found, len(kernels)


def main():
    name, arch, wave = sys.argv[1], sys.argv[2], int(sys.argv[3])
    found, count = problems(sys.stdin.read(), arch, wave)
    print("ok %s %s wave%d kernels=%d" % (name, arch, wave, count) if not found
          else "bad %s %s: %s" % (name, arch, "; ".join(found)))


if __name__ == "__main__":
    main()
