#!/usr/bin/env python3
"""Fits the polynomials of the cpp_openmp kernels' inline f32 exp, erf and tanh
(plugins/cpp_openmp/runtime/kiln_cpu_runtime.h) and prints their coefficients as f32, so the
header's constants can be reproduced and changed with their reasons. Near-minimax fits:
least squares on Chebyshev nodes, reweighted by the error (Lawson's iteration), in f64.

  python3 scripts/fit-cpu-math.py        (numpy, pinned in python/requirements.txt)
"""
import math

import numpy as np

erf = np.vectorize(math.erf)
erfc = np.vectorize(math.erfc)


def chebyshev_nodes(lo, hi, n=6000):
    k = np.arange(n)
    return (lo + hi) / 2 + (hi - lo) / 2 * np.cos((2 * k + 1) * np.pi / (2 * n))


def fit(x, y, weight, degree, iterations=80):
    """Coefficients c (lowest first) minimizing max |(sum c_i x^i - y) * weight|."""
    v = np.vander(x, degree + 1, increasing=True)
    lawson = np.ones_like(x)
    for _ in range(iterations):
        w = weight * np.sqrt(lawson)
        c, *_ = np.linalg.lstsq(v * w[:, None], y * w, rcond=None)
        err = np.abs((v @ c - y) * weight)
        lawson = lawson * err / np.sum(lawson * err)
    return c, err.max()


def show(name, c, err):
    print(f"{name}: max weighted error {err:.3g}")
    print("  " + ", ".join(f"{np.float32(v):.9e}" for v in c))


# exp(r) = 1 + r + r^2 q(r) on |r| <= ln(2)/2, relative error.
r = chebyshev_nodes(-np.log(2) / 2, np.log(2) / 2)
r = r[np.abs(r) > 1e-9]
show("exp q(r)", *fit(r, (np.exp(r) - 1 - r) / r**2, r**2 / np.exp(r), 4))

# erf(x) = x + x A(x^2) for |x| < 1.25, absolute error of A (erf(x)/x - 1).
t = chebyshev_nodes(1e-12, 1.25**2)
show("erf A(t)", *fit(t, erf(np.sqrt(t)) / np.sqrt(t) - 1, np.ones_like(t), 7))
# erf(x) = 1 - exp(B(s)) for 1.25 <= |x| <= 3.93, s = (|x| - mid) / half in [-1, 1].
mid, half = (1.25 + 3.93) / 2, (3.93 - 1.25) / 2
s = chebyshev_nodes(-1, 1)
show("erf B(s)", *fit(s, np.log(erfc(mid + half * s)), np.ones_like(s), 8))
print(f"  s = |x| * {np.float32(1 / half):.8g} + {np.float32(-mid / half):.8g}")

# tanh(x) = x + x^3 P(x^2) for |x| < 0.875, relative error of tanh.
t = chebyshev_nodes(1e-12, 0.875**2)
x = np.sqrt(t)
show("tanh P(t)", *fit(t, (np.tanh(x) - x) / x**3, x**3 / np.tanh(x), 6))
