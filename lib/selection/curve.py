"""Leave-one-comparison-out standard-error curve (Sedoc & Ungar 2020, Fig. 2) and prompts needed.

For each held-out comparison: calibrate the prompts on the others (:mod:`.calibration`), let each
strategy pick k prompts among those the comparison has ratings for, and estimate the held-out theta
by EAP from its own ratings on those k prompts (quadrature on a fine grid, prior N(0, 1)). The SE is
the posterior SD; the error is the distance to the same comparison's EAP with all of its prompts
under the global leave-one-out calibration (the reference shared by all strategies).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from lib.errors import SettingsError
from lib.io.typed import whole_numbers
from lib.irt.readouts import DEFAULT_GRID, grid_moments, posterior_on_grid
from lib.selection.adaptive import cat_path, grid_tables
from lib.selection.settings import DEFAULT_RANDOM_DRAWS
from lib.selection.strategies import STRATEGIES, Ask, check_strategies

if TYPE_CHECKING:
    from lib.selection.calibration import Calibration

BAND = (0.1, 0.9)
"""Quantiles of the per-comparison SE (and per random draw) shown as the band."""

SUMMARY_COLUMNS = ["strategy", "k", "se_mean", "se_lo", "se_hi", "abs_err_mean"]

_MASK_CELLS = 4_000_000
"""Masks x draws x grid points evaluated per matrix product (memory bound)."""


def default_k_grid(n_prompts: int, n_points: int = 12) -> np.ndarray:
    """Roughly geometric k grid from a handful of prompts (5, or fewer for tiny banks) to all."""
    if n_prompts < 1:
        raise SettingsError("there are no prompts to select from")
    low = min(5, n_prompts)
    return np.unique(np.round(np.geomspace(low, n_prompts, n_points)).astype(int))


def check_k_grid(k_grid, n_prompts: int) -> np.ndarray:
    """Sorted unique k values in 1..J; raises SettingsError otherwise."""
    ks = np.unique(np.asarray(list(k_grid), dtype=int))
    if len(ks) == 0 or ks[0] < 1 or ks[-1] > n_prompts:
        raise SettingsError(f"k values must lie between 1 and the number of prompts ({n_prompts})")
    return ks


def parse_k_grid(text: str, n_prompts: int) -> np.ndarray:
    """The k values typed as comma-separated whole numbers (e.g. ``"5, 10, 25"``), sorted and unique.

    Raises
    ------
    SettingsError
        For text that is not whole numbers, or k outside 1..J (``n_prompts``).
    """
    return check_k_grid(whole_numbers(text, "k values"), n_prompts)


def _subset_moments(loglik: np.ndarray, log_weights: np.ndarray, orders: np.ndarray, ks: np.ndarray, grid):
    """EAP mean and SD after the first k prompts of each order.

    loglik (S, J, G); orders (R, n) prompt indices; returns two (R, len(ks)) arrays.
    """
    n_draws, n_prompts, n_grid = loglik.shape
    position = np.full((len(orders), n_prompts), np.iinfo(np.int64).max)
    rows = np.repeat(np.arange(len(orders)), orders.shape[1])
    position[rows, orders.ravel()] = np.tile(np.arange(orders.shape[1]), len(orders))
    masks = (position[:, None, :] < ks[None, :, None]).reshape(-1, n_prompts).astype(float)
    flat = loglik.transpose(1, 0, 2).reshape(n_prompts, -1)  # (J, S*G)
    step = max(1, _MASK_CELLS // (n_draws * n_grid))
    means, sds = [], []
    for start in range(0, len(masks), step):
        summed = (masks[start : start + step] @ flat).reshape(-1, n_draws, n_grid)
        m, s = grid_moments(posterior_on_grid(summed, grid, log_weights), grid)
        means.append(m)
        sds.append(s)
    shape = (len(orders), len(ks))
    return np.concatenate(means).reshape(shape), np.concatenate(sds).reshape(shape)


@dataclass(frozen=True)
class LooCurve:
    """Result of :func:`loo_curve`.

    Attributes
    ----------
    estimates : DataFrame
        One row per strategy, k, held-out comparison and random draw: ``strategy, k, comparison
        (row index), draw, theta_mean, theta_sd, reference`` (the all-prompt EAP).
    summary : DataFrame
        ``strategy, k, se_mean, se_lo, se_hi, abs_err_mean`` (see :func:`summarize`).
    mode : str
        ``fast`` or ``full``.
    khat_max : float or None
        Worst Pareto k-hat of the leave-one-out weights (full mode).
    """

    estimates: pd.DataFrame
    summary: pd.DataFrame
    mode: str
    khat_max: float | None


def summarize(estimates: pd.DataFrame) -> pd.DataFrame:
    """Per strategy and k: mean SE, its 10-90% band over comparisons (and random draws), and the
    mean absolute distance of the EAP to the reference."""
    est = estimates.assign(abs_err=(estimates["theta_mean"] - estimates["reference"]).abs())
    order = {name: n for n, name in enumerate(STRATEGIES)}
    out = (
        est.groupby(["strategy", "k"], sort=False)
        .agg(
            se_mean=("theta_sd", "mean"),
            se_lo=("theta_sd", lambda s: s.quantile(BAND[0])),
            se_hi=("theta_sd", lambda s: s.quantile(BAND[1])),
            abs_err_mean=("abs_err", "mean"),
        )
        .reset_index()
    )
    out = out.sort_values(["strategy", "k"], key=lambda c: c.map(order) if c.name == "strategy" else c)
    return out[SUMMARY_COLUMNS].reset_index(drop=True)


def _held_out(i, codes, calibration, strategies, ks_all, n_random, theta0, grid, rng) -> list[dict]:
    """Estimates for held-out comparison i under every strategy (rows of ``LooCurve.estimates``)."""
    rows = []
    available = codes[i] >= 0
    if not available.any():
        return []
    ks = np.minimum(ks_all, available.sum())
    params = calibration.loo(i)
    loglik = params.loglik(codes[i], grid)
    reference = grid_moments(posterior_on_grid(loglik.sum(axis=1), grid, params.log_weights), grid)[0]
    tables = grid_tables(params, grid) if any(s.adaptive for s in strategies) else None
    for strategy in strategies:
        if strategy.adaptive:
            path = cat_path(strategy, loglik, params, available, ks.max(), theta0=theta0, grid=grid, tables=tables)
            mean, sd = path.mean[None, ks - 1], path.sd[None, ks - 1]
        else:
            own = strategy.items(calibration, i)
            use, use_ll = (params, loglik) if own is None else (own, own.loglik(codes[i], grid))
            alpha, b = use.mean()
            orders = strategy.select(Ask(alpha, b, available, theta0, rng, n_random))
            mean, sd = _subset_moments(use_ll, use.log_weights, orders, ks, grid)
        n_draw, n_k = mean.shape
        rows.append(
            {
                "strategy": np.full(n_draw * n_k, strategy.name, dtype=object),
                "k": np.tile(ks_all, n_draw),
                "comparison": np.full(n_draw * n_k, i),
                "draw": np.repeat(np.arange(n_draw), n_k),
                "theta_mean": mean.ravel(),
                "theta_sd": sd.ravel(),
                "reference": np.full(n_draw * n_k, reference),
            }
        )
    return rows


def _held_out_task(task: tuple[int, np.random.Generator], **kw) -> tuple[list[dict], dict]:
    """:func:`_held_out` as an independent task: its rows and the Pareto k-hats it made (on a worker
    they are made on a copy of the calibration, so they travel back with the result)."""
    i, rng = task
    rows = _held_out(i, rng=rng, **kw)
    khat = getattr(kw["calibration"], "khat", {})
    return rows, {key: value for key, value in khat.items() if key[0] == i}


def _generators(codes, calibration, strategies, n_random, theta0, rng) -> list[np.random.Generator]:
    """The generator of each held-out comparison as a loop over i in order would hand it on, so that
    tasks run in any order, anywhere, draw the same random orders. Only the static strategies' orders
    draw from it, and how much they draw depends on the rated prompts, not on the items."""
    alpha, b = calibration.whole.mean()
    out = []
    for row in codes:
        out.append(copy.deepcopy(rng))
        if (row >= 0).any():
            for strategy in strategies:
                if not strategy.adaptive:
                    strategy.select(Ask(alpha, b, row >= 0, theta0, rng, n_random))
    return out


def loo_curve(
    codes: np.ndarray,
    calibration: Calibration,
    strategies: list[str] | tuple[str, ...],
    k_grid,
    *,
    n_random: int = DEFAULT_RANDOM_DRAWS,
    theta0: float = 0.0,
    seed: int = 0,
    grid: np.ndarray = DEFAULT_GRID,
    progress: Callable[[float, str], None] | None = None,
    engine=None,
) -> LooCurve:
    """SE of the held-out ability against the number of selected prompts, per strategy.

    Parameters
    ----------
    codes : ndarray of int, shape (I, J)
        Category index per comparison and prompt, -1 where missing.
    calibration : Calibration
        Gives the leave-one-out item parameters (:class:`lib.selection.calibration.Calibration`).
    strategies : list of str
        Names from :data:`lib.selection.strategies.STRATEGIES`.
    k_grid : iterable of int
        Subset sizes; a comparison with fewer rated prompts uses all of them at larger k.
    n_random : int
        Random orders per held-out comparison for ``random``.
    theta0 : float
        Where ``max_info`` evaluates the information.
    seed : int
        Seeds the random orders.
    grid : ndarray
        Quadrature grid.
    progress : callable, optional
        Called as ``progress(fraction_done, message)`` after each held-out comparison.
    engine : lib.engine.cluster.Engine, optional
        Runs the held-out comparisons as independent tasks (``engine.map``), e.g. on a Dask
        cluster; None: one after the other here. The result is the same either way.

    Returns
    -------
    LooCurve

    Raises
    ------
    SettingsError
        Unknown strategy, bad k values, fewer than 2 comparisons, n_random < 1.
    """
    chosen = [STRATEGIES[name] for name in check_strategies(list(strategies))]
    codes = np.asarray(codes, dtype=np.int64)
    n_comp, n_prompts = codes.shape
    ks_all = check_k_grid(k_grid, n_prompts)
    if n_comp < 2:
        raise SettingsError("leave-one-out needs at least 2 comparisons")
    if n_random < 1:
        raise SettingsError("draw at least one random order")
    rngs = _generators(codes, calibration, chosen, n_random, theta0, np.random.default_rng(seed))
    task = partial(
        _held_out_task,
        codes=codes,
        calibration=calibration,
        strategies=chosen,
        ks_all=ks_all,
        n_random=n_random,
        theta0=theta0,
        grid=grid,
    )

    def report(done: int, total: int) -> None:
        if progress is not None:
            progress(done / total, f"held-out comparison {done} of {total}")

    if engine is None:
        results = {}
        for i, item in enumerate(zip(range(n_comp), rngs, strict=True)):
            results[i] = task(item)
            report(i + 1, n_comp)
    else:
        results = dict(engine.map(task, list(zip(range(n_comp), rngs, strict=True)), progress=report))
    rows = []
    for i in range(n_comp):
        part, khat = results[i]
        rows.extend(part)
        if khat:  # only a calibration that keeps k-hats (``FullCalibration.khat``) made some
            getattr(calibration, "khat", {}).update(khat)
    if not rows:
        raise SettingsError("no comparison has ratings to hold out")
    estimates = pd.DataFrame({col: np.concatenate([r[col] for r in rows]) for col in rows[0]})
    return LooCurve(
        estimates=estimates,
        summary=summarize(estimates),
        mode=calibration.mode,
        khat_max=calibration.khat_max(),
    )


def prompts_needed(summary: pd.DataFrame, target_se: float) -> pd.DataFrame:
    """Smallest k on the grid whose mean SE is at or below ``target_se``, per strategy.

    Returns
    -------
    DataFrame
        ``strategy, target_se, k_needed, se_best``; ``k_needed`` is a nullable Int64, missing when
        the strategy never reaches the target on the grid; ``se_best`` is the smallest mean SE the
        strategy reaches on the grid (how far a missed target is).

    Raises
    ------
    SettingsError
        If ``target_se`` is not positive.
    """
    if not target_se > 0:
        raise SettingsError(f"the target SE must be positive (got {target_se})")
    rows = []
    for name, part in summary.groupby("strategy", sort=False):
        reached = part.loc[part["se_mean"] <= target_se, "k"]
        rows.append(
            {
                "strategy": name,
                "target_se": float(target_se),
                "k_needed": int(reached.min()) if len(reached) else pd.NA,
                "se_best": float(part["se_mean"].min()),
            }
        )
    out = pd.DataFrame(rows, columns=["strategy", "target_se", "k_needed", "se_best"])
    out["k_needed"] = out["k_needed"].astype("Int64")
    return out
