#!/usr/bin/env python3
"""Fits the polynomial of ridge's vector tanh (src/vec/math-template.h) on [0, T]:

    tanh(x) ~= x + x^3 P(x^2),  P of degree D,

minimizing the maximum relative error of tanh by iteratively reweighted least squares
(Lawson's method) on Chebyshev-spaced points. The coefficients are then rounded to float one at
a time, lowest first, each time refitting the higher ones to the rounded lower ones: rounding
them all at once tripled the error (0.27 against 0.11 units of 2^-24 at T = 1, D = 6).

    python3 scripts/fit-tanh.py 1.0 6     # prints the error and the coefficients, z^0 first

Needs numpy (Debian: python3-numpy). The error printed is the approximation's alone, in units
of 2^-24 relative; the kernel's measured error (test-vec --exhaustive) adds the rounding of
its float evaluation."""
import sys

import numpy as np


def fit(t, degree, points=40001, rounds=60):
    x = np.cos(np.linspace(0, np.pi, points)) * t / 2 + t / 2
    x = x[x > 1e-4]
    z = x * x
    target = (np.tanh(x) - x) / x**3
    weight = x**3 / np.tanh(x)  # an error in P, as a relative error of tanh
    fixed = []
    for j in range(degree + 1):
        rest = target - sum(c * z**k for k, c in enumerate(fixed))
        a = np.vstack([z**k for k in range(j, degree + 1)]).T
        lawson = np.ones_like(x)
        for _ in range(rounds):
            w = weight * lawson
            c, *_ = np.linalg.lstsq(a * w[:, None], rest * w, rcond=None)
            err = np.abs((a @ c - rest) * weight)
            lawson = lawson * err / err.max() + 1e-300
            lawson /= lawson.sum() / len(lawson)
        fixed.append(float(np.float32(c[0])))
    p = sum(c * z**k for k, c in enumerate(fixed))
    return np.abs((p - target) * weight).max() / 2**-24, fixed


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: fit-tanh.py T DEGREE   (e.g. 1.0 6)")
    t, degree = float(sys.argv[1]), int(sys.argv[2])
    if not (0 < t <= 4 and 1 <= degree <= 12):
        sys.exit("fit-tanh.py: T in (0, 4], DEGREE in 1..12")
    err, coeffs = fit(t, degree)
    print("max relative error with float coefficients: %.3f x 2^-24" % err)
    for k, c in enumerate(coeffs):
        print("z^%d  %.11e" % (k, c))


if __name__ == "__main__":
    main()
