"""Special functions numpy lacks, vectorized and accurate to float64 rounding."""

from __future__ import annotations

import numpy as np

_TAYLOR_TERMS = 40
_CONTINUED_FRACTION_TERMS = 60
_SERIES_LIMIT = 2.5


def erf(x: np.ndarray) -> np.ndarray:
    """The error function: a Maclaurin series near 0, erfc's continued fraction beyond."""
    x = np.asarray(x, dtype=np.float64)
    ax = np.abs(x)
    result = np.empty_like(x)

    near = ax < _SERIES_LIMIT
    xs = x[near]
    term = xs.copy()
    total = xs.copy()
    square = xs * xs
    for n in range(1, _TAYLOR_TERMS):
        term = term * (-square) / n
        total = total + term / (2 * n + 1)
    result[near] = total * (2.0 / np.sqrt(np.pi))

    far = ~near
    af = ax[far]
    # erfc(x) = exp(-x^2)/sqrt(pi) * 1/(x + (1/2)/(x + 1/(x + (3/2)/(x + ...)))), evaluated backwards.
    tail = np.zeros_like(af)
    for k in range(_CONTINUED_FRACTION_TERMS, 0, -1):
        tail = (k / 2.0) / (af + tail)
    erfc = np.exp(-af * af) / np.sqrt(np.pi) / (af + tail)
    result[far] = np.sign(x[far]) * (1.0 - erfc)
    return result
