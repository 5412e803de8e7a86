"""Redundancy grouping: time and peak memory, the old dense rule against the blocked one.

Two matrices per size J (prompts): "1 vote" (3 comparisons, each prompt judged once, the 230 KB
upload that took 6.5 GB) and "dense" (20 comparisons, every cell observed, random net ratings).
Peak memory is tracemalloc's peak over the call (numpy reports its buffers to tracemalloc); time
is a separate untraced run. The old rule builds several J x J float64 matrices, so it is run only
up to ``OLD_MAX`` prompts. Run: ``.venv/bin/python bench/bench_grouping.py``.
"""

from __future__ import annotations

import time
import tracemalloc

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from lib.judgments.ratings import redundancy_groups

SIZES = [1_000, 5_000, 10_000]
OLD_MAX = 5_000
"""The old rule at 10,000 prompts needs about 6.5 GB: not run on a shared machine."""


def old_dense_groups(u: np.ndarray, threshold: float = 0.6) -> np.ndarray:
    """The rule before issue 9 item 4: dense J x J correlations, r > 0.6 over >= 5 shared comparisons,
    connected components. Kept here only as the benchmark's baseline."""
    centred = u - np.nanmean(u, axis=1, keepdims=True)
    obs = ~np.isnan(centred)
    x = np.where(obs, centred, 0.0)
    shared = obs.T.astype(float) @ obs.astype(float)
    sx = x.T @ obs
    sxx = (x**2).T @ obs
    sxy = x.T @ x
    with np.errstate(invalid="ignore", divide="ignore"):
        cov = sxy - sx * sx.T / shared
        var = (sxx - sx**2 / shared) * (sxx - sx**2 / shared).T
        corr = cov / np.sqrt(var)
    linked = (corr > threshold) & (shared >= 5)
    np.fill_diagonal(linked, False)
    return connected_components(csr_matrix(linked), directed=False)[1]


def one_vote(n_prompts: int) -> np.ndarray:
    u = np.full((3, n_prompts), np.nan)
    u[np.arange(n_prompts) % 3, np.arange(n_prompts)] = np.where(np.arange(n_prompts) % 2, 1.0, -1.0)
    return u


def dense(n_prompts: int) -> np.ndarray:
    return np.random.default_rng(0).integers(-3, 4, size=(20, n_prompts)).astype(float)


def measure(fn, u: np.ndarray) -> tuple[float, float, int]:
    """Wall seconds, peak MB and number of groups of ``fn(u)``."""
    start = time.perf_counter()
    labels = fn(u)
    wall = time.perf_counter() - start
    tracemalloc.start()
    fn(u)
    peak = tracemalloc.get_traced_memory()[1] / 1e6
    tracemalloc.stop()
    return wall, peak, len(np.unique(labels))


def main() -> None:
    print(
        f"{'matrix':8s} {'prompts':>8s} {'old s':>8s} {'old MB':>9s} {'new s':>8s} {'new MB':>8s} "
        f"{'MB ratio':>9s} {'groups old/new':>15s}"
    )
    for name, make in (("1 vote", one_vote), ("dense", dense)):
        for n in SIZES:
            u = make(n)
            new_s, new_mb, new_g = measure(redundancy_groups, u)
            if n <= OLD_MAX:
                old_s, old_mb, old_g = measure(old_dense_groups, u)
                old = f"{old_s:8.2f} {old_mb:9.0f}"
                ratio, groups = f"{old_mb / new_mb:9.0f}", f"{old_g:>7d}/{new_g:<7d}"
            else:
                old, ratio, groups = f"{'not run':>8s} {'':>9s}", f"{'':>9s}", f"{'':>7s}/{new_g:<7d}"
            print(f"{name:8s} {n:8d} {old} {new_s:8.2f} {new_mb:8.1f} {ratio} {groups}")


if __name__ == "__main__":
    main()
