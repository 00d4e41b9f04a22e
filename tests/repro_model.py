"""The numpy model of the reproducible sum (triton_kernels/reproducible.py states the design):
the bit oracle on the CPU that the CUDA and Triton kernels are checked against, bit for bit."""

from __future__ import annotations

import numpy as np

from harness.core.repro_geometry import LANES, chunk_count, chunk_size


def _dd_add(ahi, alo, bhi, blo):
    """dd_add, vectorized. The same lines as the kernels' _dd_add_tl on purpose: this is the model
    they are checked against, written out, not shared with them."""
    s = ahi + bhi
    bp = s - ahi
    e = (ahi - (s - bp)) + (bhi - bp)
    e = e + (alo + blo)
    hi = s + e
    lo = e - (hi - s)
    fin = np.isfinite(s)
    return np.where(fin, hi, s), np.where(fin, lo, 0.0)


def _tree(hi: np.ndarray, lo: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Adjacent pairs along the last axis, level by level, down to one node."""
    while hi.shape[-1] > 1:
        h = hi.reshape(*hi.shape[:-1], -1, 2)
        lw = lo.reshape(*lo.shape[:-1], -1, 2)
        hi, lo = _dd_add(h[..., 0], lw[..., 0], h[..., 1], lw[..., 1])
    return hi[..., 0], lo[..., 0]


def reference_partials(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The M chunk partials (hi, lo) of x (flat, any float dtype numpy has; bfloat16 data passed
    as its exact float32 values), by the same operations as the kernels, vectorized."""
    x = np.ascontiguousarray(x).reshape(-1)
    n = x.size
    c, m = chunk_size(n), chunk_count(n)
    padded = np.zeros(m * c, dtype=np.float64)
    padded[:n] = x.astype(np.float64)
    xs = padded.reshape(m, c // LANES, LANES)
    hi = np.zeros((m, LANES))
    lo = np.zeros((m, LANES))
    with np.errstate(invalid="ignore", over="ignore"):
        for j in range(c // LANES):
            v = xs[:, j, :]
            s = hi + v
            bp = s - hi
            e = (hi - (s - bp)) + (v - bp)
            lo = lo + e
            hi = s
        return _tree(hi, lo)


def reference_final(phi: np.ndarray, plo: np.ndarray, out_dtype=np.float32):
    """Phase 2 over the partials: lane l adds partials l + LANES*j in j order, then the tree."""
    m = phi.size
    steps = -(-m // LANES)
    ph = np.zeros(steps * LANES)
    pl = np.zeros(steps * LANES)
    ph[:m], pl[:m] = phi, plo
    hi = np.zeros(LANES)
    lo = np.zeros(LANES)
    with np.errstate(invalid="ignore", over="ignore"):
        for j in range(steps):
            part = slice(j * LANES, (j + 1) * LANES)
            hi, lo = _dd_add(hi, lo, ph[part], pl[part])
        h, lw = _tree(hi, lo)
        h, lw = float(h), float(lw)
        return out_dtype(h + lw) if np.isfinite(h) else out_dtype(h)


def reference_sum(x: np.ndarray) -> np.float32 | np.float64:
    """The reproducible sum of x as the kernels compute it, bit for bit: numpy float32 (float64
    for float64 input). n = 0 sums to +0.0."""
    out_dtype = np.float64 if np.asarray(x).dtype == np.float64 else np.float32
    if np.asarray(x).size == 0:
        return out_dtype(0.0)
    return reference_final(*reference_partials(x), out_dtype=out_dtype)
