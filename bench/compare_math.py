"""What the comparison scripts compute the same way: a workload's minimal bytes, the largest
difference from eager, and geometric means."""
import math


def nbytes(tensors):
    """Bytes of `tensors`: inputs read once plus outputs written once, the workload's floor."""
    return sum(t.numel() * t.element_size() for t in tensors)


def rel_diff(got, expected):
    """Largest |got - expected| over expected's largest magnitude, over every output."""
    if isinstance(expected, (tuple, list)):
        return max(rel_diff(g, e) for g, e in zip(got, expected))
    e = expected.double()
    return ((got.double() - e).abs().max() / e.abs().max().clamp_min(1e-30)).item()


def geomean(values):
    return math.exp(sum(math.log(x) for x in values) / len(values))
