"""Rank-normalised split R-hat and bulk and tail ESS of many parameters at once (numpy, vectorised).

The same numbers as arviz's ``rhat`` (``method="rank"``) and ``ess`` (``method="bulk"`` and ``"tail"``),
to rounding (``tests/inference/test_chain_stats.py`` compares them), from one pass over an array of
every parameter instead of arviz's Python loop over parameters: 1,400 parameters of 4 x 500 draws took
arviz about 10 s a check on a 2-core machine, so a fit sampled to a target ESS (checked after every few
chunks) and every convergence check spent more time on its diagnostics than on sampling.

Source: Vehtari, Gelman, Simpson, Carpenter & Bürkner (2021), "Rank-normalization, folding, and
localization: an improved R-hat for assessing convergence of MCMC", Bayesian Analysis 16(2), 667-718
(rank normalisation, folding, split chains; Geyer's initial monotone sequence for the ESS), as arviz
0.23 (``arviz.stats.diagnostics``) computes them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.fft import next_fast_len
from scipy.special import ndtri
from scipy.stats import rankdata

MIN_DRAWS = 4
"""Draws per chain below which R-hat and ESS are undefined (NaN), as arviz."""

TAIL_PROBS = (0.05, 0.95)
"""The quantiles whose indicators give the tail ESS (the smaller of the two)."""


def _split(x: np.ndarray) -> np.ndarray:
    """(chain, draw, n) -> (2 chain, draw // 2, n): each chain's first and last halves (a middle draw of an
    odd count left out)."""
    half = x.shape[1] // 2
    return np.concatenate([x[:, :half], x[:, x.shape[1] - half :]], axis=0)


def _z_scale(x: np.ndarray) -> np.ndarray:
    """Normal scores of the ranks of each parameter's draws over all chains (Blom's offset 3/8)."""
    chains, draws, n = x.shape
    ranks = rankdata(x.reshape(chains * draws, n), method="average", axis=0)
    return ndtri((ranks - 3 / 8) / (chains * draws + 1 / 4)).reshape(x.shape)


def _autocov(x: np.ndarray) -> np.ndarray:
    """Autocovariance of every chain and parameter at every lag (chain, lag, n), biased (divided by the draws)."""
    draws = x.shape[1]
    centred = x - x.mean(axis=1, keepdims=True)
    padded = next_fast_len(2 * draws, real=True)
    f = np.fft.rfft(centred, n=padded, axis=1)
    return np.fft.irfft(f * np.conjugate(f), n=padded, axis=1)[:, :draws] / draws


def _ess(x: np.ndarray) -> np.ndarray:
    """ESS of each parameter of (chain, draw, n) draws: Geyer's initial positive, then monotone, sequence of
    the chains' autocorrelations (Vehtari et al. 2021, Eq. 10 on; arviz's ``_ess``); NaN where a draw is NaN,
    chains x draws where the draws do not vary."""
    chains, draws, n = x.shape
    acov = _autocov(x)
    mean_var = acov[:, 0].mean(axis=0) * draws / (draws - 1.0)
    var_plus = mean_var * (draws - 1.0) / draws
    if chains > 1:
        var_plus = var_plus + x.mean(axis=1).var(axis=0, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = 1.0 - (mean_var - acov.mean(axis=0)) / var_plus  # (lag, n)
    kept = np.zeros((draws, n))
    kept[0] = 1.0
    kept[1] = rho[1]
    even, odd = np.ones(n), rho[1].copy()
    stop = np.ones(n, dtype=np.int64)  # each parameter's t when its positive sequence ended
    running = np.ones(n, dtype=bool)
    t = 1
    while t < draws - 3:
        running &= even + odd > 0.0
        if not running.any():
            break
        even = np.where(running, rho[t + 1], even)
        odd = np.where(running, rho[t + 2], odd)
        positive = running & (even + odd >= 0)
        kept[t + 1] = np.where(positive, even, kept[t + 1])
        kept[t + 2] = np.where(positive, odd, kept[t + 2])
        t += 2
        stop = np.where(running, t, stop)
    max_t = stop - 2
    columns = np.arange(n)
    last = np.where(even > 0, even, kept[max_t + 1, columns])
    kept[max_t + 1, columns] = last
    for t in range(1, int(max_t.max(initial=0)) - 1, 2):  # initial monotone sequence
        at = (t <= max_t - 2) & (kept[t + 1] + kept[t + 2] > kept[t - 1] + kept[t])
        pair = (kept[t - 1] + kept[t]) / 2.0
        kept[t + 1] = np.where(at, pair, kept[t + 1])
        kept[t + 2] = np.where(at, pair, kept[t + 2])
    total = chains * draws
    summed = np.cumsum(kept, axis=0)
    head = np.where(max_t >= 0, summed[np.maximum(max_t, 0), columns], 0.0)
    tau = np.maximum(-1.0 + 2.0 * head + kept[max_t + 1, columns], 1 / np.log10(total))
    ess = total / tau
    ess[np.isnan(kept).any(axis=0)] = np.nan
    constant = np.ptp(x, axis=(0, 1)) < np.finfo(float).resolution
    ess[constant] = total
    ess[np.isnan(x).any(axis=(0, 1))] = np.nan
    return ess


def _rhat(x: np.ndarray) -> np.ndarray:
    """Split R-hat (arviz's ``_rhat``) of already split (chain, draw, n) draws."""
    draws = x.shape[1]
    between = draws * x.mean(axis=1).var(axis=0, ddof=1)
    within = x.var(axis=1, ddof=1).mean(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.sqrt((between / within + draws - 1) / draws)


@dataclass(frozen=True)
class ChainStats:
    """R-hat and ESS of each parameter (:func:`chain_stats`), shape (n,) each."""

    rhat: np.ndarray
    ess_bulk: np.ndarray
    ess_tail: np.ndarray

    def take(self, columns: np.ndarray) -> ChainStats:
        """The numbers of the parameters ``columns`` (integer indices), in their order."""
        return ChainStats(self.rhat[columns], self.ess_bulk[columns], self.ess_tail[columns])


def chain_stats(x: np.ndarray) -> ChainStats:
    """Rank-normalised split R-hat and bulk and tail ESS of each parameter, as arviz's
    ``rhat(method="rank")``, ``ess(method="bulk")`` and ``ess(method="tail")``.

    - bulk ESS: the ESS of the rank-normalised split chains;
    - tail ESS: the smaller ESS of the split-chain indicators of the draws at or below the 5% and 95%
      quantiles (:data:`TAIL_PROBS`);
    - R-hat: the larger split R-hat of the rank-normalised draws and of their distances from the median
      (folded).

    Parameters
    ----------
    x : ndarray, shape (chain, draw, n)
        Draws of n parameters.

    Returns
    -------
    ChainStats
        NaN where a parameter has a NaN draw or there are fewer than :data:`MIN_DRAWS` draws per chain;
        R-hat also with one chain, or draws that do not vary (their ESS is chains x draws, as arviz's).

    Raises
    ------
    ValueError
        ``x`` does not have 3 dimensions.
    """
    x = np.asarray(x, dtype=float)
    if x.ndim != 3:
        raise ValueError(f"draws must be (chain, draw, parameter), got {x.ndim} dimensions")
    chains, draws, n = x.shape
    nan = np.full(n, np.nan)
    if draws < MIN_DRAWS:
        return ChainStats(nan, nan, nan.copy())
    split = _split(x)
    flat = x.reshape(chains * draws, n)
    missing = np.isnan(flat).any(axis=0)
    z = _z_scale(split)  # shared by the bulk ESS and R-hat
    bulk = _ess(z)
    tail = np.minimum(*[_ess((split <= np.quantile(flat, p, axis=0)).astype(float)) for p in TAIL_PROBS])
    if chains < 2:
        r = nan
    else:
        folded = _rhat(_z_scale(np.abs(split - np.median(split.reshape(-1, n), axis=0))))
        r = _rhat(z)
        r = np.where(folded > r, folded, r)  # arviz's max(bulk, folded): a NaN bulk R-hat stays NaN
    for values in (bulk, tail, r):
        values[missing] = np.nan
    return ChainStats(r, bulk, tail)


def stacked(post, names: list[str] | None = None) -> np.ndarray:
    """Every element of the variables ``names`` (default: all) of a posterior ``xarray.Dataset`` with dims
    (chain, draw, ...) as one (chain, draw, n) float array, in the variables' order then row-major."""
    names = list(post.data_vars) if names is None else names
    parts = []
    for name in names:
        da = post[name].transpose("chain", "draw", ...)
        parts.append(da.to_numpy().reshape(da.sizes["chain"], da.sizes["draw"], -1).astype(float))
    return np.concatenate(parts, axis=2)


def stacked_columns(post, names: list[str], drop: dict[str, list] | None = None) -> np.ndarray:
    """Where the elements of ``stacked(post[names].drop_sel(drop), names)`` are in ``stacked(post)`` (every
    variable): integer column indices, in the former's order. Each parameter's R-hat and ESS depend on its own
    draws alone, so ``chain_stats(stacked(post)).take(columns)`` are the numbers of the selection."""
    index, start = {}, 0
    for name in post.data_vars:
        one = post[name].isel(chain=0, draw=0, drop=True)
        index[name] = one.copy(data=np.arange(start, start + one.size).reshape(one.shape))
        start += one.size
    kept = [index[name].drop_sel({d: v for d, v in (drop or {}).items() if d in index[name].dims}) for name in names]
    return np.concatenate([k.to_numpy().ravel() for k in kept]).astype(np.int64)
