"""Computerized adaptive testing (CAT) on a calibrated bank and the adaptive what-if walk-through.

After each prompt the posterior of theta is updated on the quadrature grid (prior N(0, 1); with
posterior draws of the items the likelihood is averaged over the weighted draws) and the adaptive
strategy (:mod:`lib.selection.strategies`) picks the next prompt among those the comparison can be
asked.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from lib.errors import SettingsError
from lib.irt.readouts import (
    DEFAULT_GRID,
    category_probs,
    grid_moments,
    item_information,
    posterior_on_grid,
)
from lib.selection.bank import ItemParams
from lib.selection.strategies import STRATEGIES, Ask, Random, Strategy

INTERVAL = 0.94
"""Probability of the equal-tailed credible interval shown in the what-if (as arviz's HDI default)."""


@dataclass(frozen=True)
class Path:
    """Prompts in the order asked, with the posterior mean and SD of theta after each.

    order : (n,) int prompt indices; mean, sd : (n,) float; post : (n, G) posterior weights.
    """

    order: np.ndarray
    mean: np.ndarray
    sd: np.ndarray
    post: np.ndarray


def grid_tables(params: ItemParams, grid: np.ndarray = DEFAULT_GRID) -> tuple[np.ndarray, np.ndarray]:
    """Category probabilities (G, J, K) and item information (G, J) of the bank's mean items."""
    alpha, b = params.mean()
    return category_probs(grid, alpha, b), item_information(grid, alpha, b)


def cat_path(
    strategy: Strategy,
    loglik: np.ndarray,
    params: ItemParams,
    available: np.ndarray,
    n_steps: int,
    *,
    theta0: float = 0.0,
    grid: np.ndarray = DEFAULT_GRID,
    rng: np.random.Generator | None = None,
    tables: tuple[np.ndarray, np.ndarray] | None = None,
) -> Path:
    """Ask up to ``n_steps`` prompts of one comparison in a strategy's order.

    An adaptive strategy ranks the remaining prompts again after every answer; a static one orders
    them once.

    Parameters
    ----------
    strategy : Strategy
        From :data:`lib.selection.strategies.STRATEGIES`.
    loglik : ndarray, shape (S, J, G)
        The comparison's log-likelihood per prompt and grid point for each item draw
        (:func:`lib.irt.readouts.item_loglik`).
    params : ItemParams
        The calibrated bank; its weighted mean drives the strategy, its draws the posterior.
    available : ndarray of bool, shape (J,)
        Prompts the comparison has a rating for.
    n_steps : int
        Number of prompts to ask (capped at the number available).
    theta0 : float
        Where ``max_info`` evaluates the information.
    grid : ndarray, shape (G,)
    rng : numpy Generator, needed for a random order.
    tables : (probs (G, J, K), info (G, J)), optional
        :func:`grid_tables` of ``params``, when the caller already has them.

    Returns
    -------
    Path
    """
    n_steps = min(int(n_steps), int(available.sum()))
    alpha, b = params.mean()
    probs, info = (tables if tables is not None else grid_tables(params, grid)) if strategy.adaptive else (None, None)
    remaining = available.copy()
    cum = np.zeros((loglik.shape[0], len(grid)))
    post = posterior_on_grid(cum, grid, params.log_weights)
    fixed = None if strategy.adaptive else strategy.select(Ask(alpha, b, available, theta0, rng))[0]
    order = np.empty(n_steps, dtype=np.int64)
    posts = np.empty((n_steps, len(grid)))
    for step in range(n_steps):
        if fixed is None:
            j = strategy.select(Ask(alpha, b, remaining, theta0, post=post, grid=grid, probs=probs, info=info))[0, 0]
        else:
            j = fixed[step]
        remaining[j] = False
        cum += loglik[:, j, :]
        post = posterior_on_grid(cum, grid, params.log_weights)
        order[step], posts[step] = j, post
    mean, sd = grid_moments(posts, grid)
    return Path(order, mean, sd, posts)


def _interval(posts: np.ndarray, grid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Equal-tailed credible interval of probability INTERVAL from grid posteriors (n, G)."""
    cdf = posts.cumsum(axis=1)
    tail = (1.0 - INTERVAL) / 2.0
    lo = grid[np.minimum((cdf < tail).sum(axis=1), len(grid) - 1)]
    hi = grid[np.minimum((cdf < 1.0 - tail).sum(axis=1), len(grid) - 1)]
    return lo, hi


@dataclass(frozen=True)
class WhatIf:
    """Adaptive versus random order for one comparison.

    Attributes
    ----------
    path : DataFrame
        Columns ``order`` (rule name or ``random``), ``step`` (1-based), ``prompt_id``,
        ``rating`` (the observed or simulated net rating), ``theta_mean``, ``theta_sd``,
        ``theta_lo``, ``theta_hi`` (94% equal-tailed interval).
    stop : dict
        ``order -> first step with theta_sd <= target_se`` (None if never reached).
    full_theta : float
        EAP with every available prompt: where both orders end.
    true_theta : float or None
        The chosen true ability of a hypothetical comparison.
    """

    path: pd.DataFrame
    stop: dict[str, int | None]
    full_theta: float
    true_theta: float | None


def what_if(
    params: ItemParams,
    rule: str,
    *,
    prompt_ids: np.ndarray,
    categories: np.ndarray,
    codes_row: np.ndarray | None = None,
    true_theta: float | None = None,
    target_se: float,
    n_steps: int | None = None,
    seed: int = 0,
    grid: np.ndarray = DEFAULT_GRID,
) -> WhatIf:
    """Step through adaptive selection prompt by prompt, next to a random order.

    Parameters
    ----------
    params : ItemParams
        Bank calibrated without this comparison (leave-one-out) or on all data (hypothetical).
    rule : {"cat_info", "cat_epv"}
    prompt_ids : ndarray of str, shape (J,)
    categories : ndarray of int, shape (K,)
        Net-rating value of each category index.
    codes_row : ndarray of int, shape (J,), optional
        The comparison's observed category indices (-1 missing). Give this or ``true_theta``.
    true_theta : float, optional
        Simulate a new comparison of this ability from the bank's (mean) item parameters.
    target_se : float
        Stopping rule: posterior SD at or below this.
    n_steps : int, optional
        Prompts to walk through (all available by default).
    seed : int
        Seeds the simulated ratings and the random order.

    Returns
    -------
    WhatIf

    Raises
    ------
    SettingsError
        For an unknown rule, neither or both of ``codes_row`` and ``true_theta``, a non-positive
        target, or a comparison without ratings.
    """
    if rule not in STRATEGIES or not STRATEGIES[rule].adaptive:
        raise SettingsError(f"'{rule}' is not an adaptive strategy")
    if (codes_row is None) == (true_theta is None):
        raise SettingsError("give either a comparison's ratings or a true ability, not both")
    if not target_se > 0:
        raise SettingsError(f"the target SE must be positive (got {target_se})")
    rng = np.random.default_rng(seed)
    if codes_row is None:
        alpha, b = params.mean()
        probs = category_probs(np.array([true_theta]), alpha, b)[0]  # (J, K)
        codes_row = (rng.random((len(alpha), 1)) > probs.cumsum(axis=1)).sum(axis=1)
        codes_row = np.minimum(codes_row, probs.shape[1] - 1)
    codes_row = np.asarray(codes_row, dtype=np.int64)
    available = codes_row >= 0
    if not available.any():
        raise SettingsError("this comparison has no ratings to select from")
    n_steps = int(available.sum()) if n_steps is None else int(n_steps)
    loglik = params.loglik(codes_row, grid)
    frames = []
    stop: dict[str, int | None] = {}
    for strategy in (STRATEGIES[rule], Random()):
        path = cat_path(strategy, loglik, params, available, n_steps, grid=grid, rng=rng)
        lo, hi = _interval(path.post, grid)
        frames.append(
            pd.DataFrame(
                {
                    "order": strategy.name,
                    "step": np.arange(1, len(path.order) + 1),
                    "prompt_id": np.asarray(prompt_ids)[path.order],
                    "rating": np.asarray(categories)[codes_row[path.order]],
                    "theta_mean": path.mean,
                    "theta_sd": path.sd,
                    "theta_lo": lo,
                    "theta_hi": hi,
                }
            )
        )
        reached = np.flatnonzero(path.sd <= target_se)
        stop[strategy.name] = int(reached[0]) + 1 if len(reached) else None
    full = posterior_on_grid(loglik.sum(axis=1), grid, params.log_weights)
    return WhatIf(
        path=pd.concat(frames, ignore_index=True),
        stop=stop,
        full_theta=float(grid_moments(full, grid)[0]),
        true_theta=None if true_theta is None else float(true_theta),
    )
