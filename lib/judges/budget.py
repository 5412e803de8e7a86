"""What to buy next: the cheapest numbers of human-voted and judge-only items for a target width or power, and
what a judge would be worth, predicted from a pilot of both.

From a pilot (items with human votes and judge verdicts) the per-item influence functions of the
centred Bradley–Terry skills give, for each target contrast c (a system's skill for a width, a pair's
difference for a power), the spread ``sigma_c`` of its human-only estimate and the **PPI correlation**
``rho_c`` between the influence of the human score and of the judges' (Broska, Howes & van Loon 2024,
"The Mixed Subjects Design"; ppi_py's ``_get_ppi_corr``). With several judges, ``rho_c^2`` is the share
of the variance their best weighted combination removes (:func:`lib.judges.ppi.optimal_weights`, the
multiple-control-variates R^2). Humans alone need ``n0_c = (z sigma_c / w)^2`` items; with the judges, n
human-voted items plus N judge-only ones are worth ``n_eff = n (n + N) / (n + (1 - rho^2) N)`` human-voted
items (the power-tuned PPI++ variance, Angelopoulos, Duchi & Zrnic 2023, sec. 6), and ``ppi_py.ppi_power``
gives the cheapest (n, N) reaching ``n_eff = n0`` for given costs. Every contrast must reach its
requirement: the pair planned for each is scaled up (n_eff is homogeneous in (n, N)) until every
requirement holds, and the cheapest of these is the plan.

A **width** target asks every system's 95% interval to be at most ``+- w`` (``z = z_{0.975}``); a
**power** target asks every two systems whose skills differ by ``delta`` logits to be told apart by a
two-sided test at ``1 - level`` with probability ``power``: ``sd(s_i - s_j) <= delta / (z_{1 - (1 -
level)/2} + z_power)`` for every pair (the normal power formula).

Before buying, :func:`predicted_worth` gives the effective human sample size a planned study of n
human-voted and N judge-only items would reach with each judge alone and with all of them, from the
same pilot: ``n tr(S_h) / min_w [tr(S_h) - 2 w'c + (1 + n / N) w'S w]`` with ``S_h`` the human influence
covariance, ``c`` its cross-covariance with each judge's and ``S`` the judges' (the trace the estimator
minimises, :mod:`lib.judges.ppi`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from ppi_py import ppi_power
from scipy.special import expit
from scipy.stats import norm

from lib.errors import DesignError, SettingsError
from lib.judges.ppi import optimal_weights, rectified_fit

if TYPE_CHECKING:
    from lib.judges.run import JudgeResult

MIN_PILOT_ITEMS = 20
"""Fewest items with human votes and a verdict that can measure the judge (a correlation per system)."""

PLAN_COLUMNS = ["design", "human_items", "judge_only_items", "human_votes", "judge_verdicts", "cost"]
"""Columns of :attr:`PurchasePlan.table`: one row for humans alone, one for humans and the judges; every
count a whole number."""

TARGET_COLUMNS = ["target", "sigma", "ppi_corr", "human_items_needed"]
"""Columns of :attr:`PurchasePlan.targets`."""

WORTH_COLUMNS = ["judges", "human_votes", "judge_only_items", "effective_human_n", "ratio"]
"""Columns of :func:`predicted_worth`."""


@dataclass
class PurchasePlan:
    """The cheapest designs for a target half-width or power.

    Attributes
    ----------
    table : DataFrame
        :data:`PLAN_COLUMNS`; ``design`` "humans only" or "humans + judge (PPI++)".
    targets : DataFrame
        :data:`TARGET_COLUMNS`: per system (width) or pair ``"a - b"`` (power), the per-item standard deviation
        of its influence (logits), the PPI correlation, and the human-voted items humans alone need.
    binding : str
        The target whose requirement decides the humans-only design.
    """

    table: pd.DataFrame
    targets: pd.DataFrame
    binding: str


@dataclass(frozen=True)
class _Influence:
    """Per-item influence of the pilot's items on the centred skills: human ``psi`` (n, K), judges' ``psi_hat``
    (n, K, J) (``A H^-1 x_i (mu_i - score)`` at the pilot's human-only fit)."""

    psi: np.ndarray
    psi_hat: np.ndarray

    def along(self, contrast: np.ndarray) -> tuple[float, float]:
        """``(sigma, rho)`` of ``contrast' s``: the human influence's spread and its PPI correlation with the
        judges' best combination (its variance share removed as N grows large)."""
        h, j = self.psi @ contrast, np.tensordot(self.psi_hat, contrast, axes=([1], [0]))
        n = len(h)
        hc, jc = h - h.mean(), j - j.mean(axis=0)
        var = float(hc @ hc) / n
        if var <= 0:
            return 0.0, 0.0
        cross, cov = hc @ jc / n, jc.T @ jc / n
        w = optimal_weights(cov, cross)
        share = (2 * w @ cross - w @ cov @ w) / var
        return math.sqrt(var), float(np.sqrt(np.clip(share, 0.0, 1 - 1 / n)))


def _influence(x: np.ndarray, y: np.ndarray, yhat: np.ndarray) -> _Influence:
    """The pilot's influence functions (``yhat`` (n,) or (n, J)).

    Raises
    ------
    DesignError
        Fewer than :data:`MIN_PILOT_ITEMS` items, or no finite human-only skills.
    """
    n = len(y)
    if n < MIN_PILOT_ITEMS:
        raise DesignError(
            f"the pilot has {n} items with human votes and a verdict: at least {MIN_PILOT_ITEMS} are needed to "
            "measure how the judge's errors relate to the humans'"
        )
    yhat = np.reshape(yhat, (n, -1))
    theta, _, _ = rectified_fit(
        x, y, yhat, np.zeros((0, x.shape[1])), np.zeros((0, yhat.shape[1])), lam=0.0, what="pilot's human votes"
    )
    mu = expit(x @ theta)
    h = (x.T * (mu * (1 - mu))) @ x / n
    k = x.shape[1] + 1
    to_skill = (np.eye(k) - 1.0 / k)[:, 1:] @ np.linalg.inv(h)  # influence on the centred skills: A H^-1 g
    psi = (x * (mu - y)[:, None]) @ to_skill.T
    psi_hat = np.einsum("nd,nj,kd->nkj", x, mu[:, None] - yhat, to_skill)
    return _Influence(psi, psi_hat)


def _n_eff(n: float, big_n: float, rho: np.ndarray) -> np.ndarray:
    """Human-voted items that n human-voted + N judge-only items are worth, per correlation."""
    return n * (n + big_n) / (n + (1 - rho**2) * big_n)


def _targets(systems: list[str], half_width, power, difference, level) -> tuple[np.ndarray, list[str], float]:
    """The contrasts (rows), their names and ``z / w`` of the target (module docstring).

    Raises
    ------
    SettingsError
        Neither or both targets, or one out of range.
    """
    k = len(systems)
    if (half_width is None) == (power is None and difference is None) or not 0 < level < 1:
        raise SettingsError("give either a target half-width, or a target power and the skill difference to detect")
    if half_width is not None:
        if not half_width > 0:
            raise SettingsError(f"the target half-width must be above 0 (got {half_width})")
        return np.eye(k), list(systems), float(norm.ppf(0.5 + level / 2)) / half_width
    if power is None or difference is None or not (0 < power < 1 and difference > 0):
        raise SettingsError(
            f"the target power must be between 0 and 1 and the skill difference above 0 (got {power}, {difference})"
        )
    i, j = np.triu_indices(k, 1)
    contrasts = np.eye(k)[i] - np.eye(k)[j]
    names = [f"{systems[a]} - {systems[b]}" for a, b in zip(i, j, strict=True)]
    return contrasts, names, float(norm.ppf(1 - (1 - level) / 2) + norm.ppf(power)) / difference


def purchase_plan(
    x: np.ndarray,
    y: np.ndarray,
    yhat: np.ndarray,
    systems: list[str],
    *,
    half_width: float | None = None,
    power: float | None = None,
    difference: float | None = None,
    human_item_cost: float,
    judge_item_cost: float,
    votes_per_item: float = 1.0,
    verdicts_per_item: float = 1.0,
    level: float = 0.95,
) -> PurchasePlan:
    """The cheapest humans-only and humans + judges designs reaching a target half-width or power.

    Parameters
    ----------
    x : ndarray (n, K - 1)
        Design rows of the pilot's items with human votes and a verdict (:func:`lib.judges.ppi.design`).
    y : ndarray (n,)
        Their mean human scores.
    yhat : ndarray (n,) or (n, J)
        Their judges' scores (one column per judge).
    systems : list of str
        The K systems, in the design's order.
    half_width : float, optional
        Target half-width of every system's interval (logits), > 0.
    power, difference : float, optional
        Instead: the probability of telling apart any two systems whose skills differ by ``difference`` logits
        (a two-sided test at ``1 - level``).
    human_item_cost, judge_item_cost : float
        Cost of the human votes of one item and of the judges' verdicts on one item (>= 0, the human
        one > 0); the cost of ``votes_per_item`` votes and ``verdicts_per_item`` verdicts.
    votes_per_item, verdicts_per_item : float
        For the counts of votes and verdicts in the table (rounded up to whole numbers).
    level : float
        Coverage of the intervals (width) or one minus the test's level (power).

    Returns
    -------
    PurchasePlan

    Raises
    ------
    SettingsError
        A target or a cost out of range, or not exactly one target.
    DesignError
        Fewer than :data:`MIN_PILOT_ITEMS` pilot items, or a pilot that gives no finite skills.
    """
    if not (human_item_cost > 0 and judge_item_cost >= 0):
        raise SettingsError(
            "a human item's cost must be above 0 and a judge item's at least 0 "
            f"(got {human_item_cost}, {judge_item_cost})"
        )
    contrasts, names, factor = _targets(systems, half_width, power, difference, level)
    influence = _influence(x, y, yhat)
    sigma, rho = np.array([influence.along(c) for c in contrasts]).T
    need = (factor * sigma) ** 2

    best = None
    for c in np.flatnonzero(need > 0):
        pair = ppi_power(float(rho[c]), 0.0, human_item_cost, judge_item_cost, effective_n=float(need[c]))
        small, big = max(float(pair["n"]), 1.0), max(float(pair["N"]), 0.0)
        scale = max(1.0, float(np.max(need / _n_eff(small, big, rho))))
        small, big = math.ceil(small * scale), math.ceil(big * scale)
        cost = small * (human_item_cost + judge_item_cost) + big * judge_item_cost
        if best is None or cost < best[2]:
            best = (small, big, cost)
    if best is None:
        raise DesignError("the pilot's human votes do not vary: nothing to plan from")
    alone = math.ceil(float(need.max()))
    rows = [
        ("humans only", alone, 0, math.ceil(alone * votes_per_item), 0, alone * human_item_cost),
        (
            "humans + judge (PPI++)",
            best[0],
            best[1],
            math.ceil(best[0] * votes_per_item),
            math.ceil((best[0] + best[1]) * verdicts_per_item),
            best[2],
        ),
    ]
    targets = pd.DataFrame(
        {"target": names, "sigma": sigma, "ppi_corr": rho, "human_items_needed": np.ceil(need).astype(int)}
    )
    return PurchasePlan(pd.DataFrame(rows, columns=PLAN_COLUMNS), targets, names[int(np.argmax(need))])


def predicted_worth(
    x: np.ndarray,
    y: np.ndarray,
    yhat: np.ndarray,
    judges: list[str],
    *,
    human_items: int,
    judge_only_items: int,
    votes_per_item: float = 1.0,
) -> pd.DataFrame:
    """The effective human sample size a planned study would reach, predicted from a pilot of both.

    Parameters
    ----------
    x, y, yhat
        The pilot's items with human votes and verdicts (as :func:`purchase_plan`; ``yhat`` one column per judge).
    judges : list of str
        The judges of ``yhat``'s columns.
    human_items, judge_only_items : int
        The planned study: n items with human votes (and verdicts), N with verdicts only (> 0 each).
    votes_per_item : float
        Human votes per item, to count votes.

    Returns
    -------
    DataFrame
        :data:`WORTH_COLUMNS`: one row with every judge ("all judges"), then one per judge alone;
        ``effective_human_n`` the human votes the study's prediction-powered intervals are worth (module
        docstring), ``ratio`` that over the study's human votes.

    Raises
    ------
    SettingsError
        A planned size not above 0.
    DesignError
        As :func:`purchase_plan`.
    """
    if human_items < 1 or judge_only_items < 1:
        raise SettingsError(
            "the planned study needs at least one human-voted and one judge-only item "
            f"(got {human_items}, {judge_only_items})"
        )
    influence = _influence(x, y, yhat)
    psi = influence.psi - influence.psi.mean(axis=0)
    psi_hat = influence.psi_hat - influence.psi_hat.mean(axis=0)
    m = len(psi)
    human = float(np.sum(psi**2)) / m  # tr(S_h)
    cross = np.einsum("nk,nkj->j", psi, psi_hat) / m
    cov = np.einsum("nkj,nkl->jl", psi_hat, psi_hat) / m
    grow = 1 + human_items / judge_only_items
    rows = []
    for name, cols in [("all judges", list(range(len(judges)))), *((j, [k]) for k, j in enumerate(judges))]:
        w = optimal_weights(cov[np.ix_(cols, cols)] * grow, cross[cols])
        left = human - 2 * w @ cross[cols] + grow * w @ cov[np.ix_(cols, cols)] @ w
        ratio = human / left if left > 0 else np.inf
        votes = human_items * votes_per_item
        rows.append((name, math.ceil(votes), judge_only_items, votes * ratio, ratio))
    return pd.DataFrame(rows, columns=WORTH_COLUMNS)


def plan_for_items(
    result: JudgeResult,
    *,
    half_width: float | None = None,
    power: float | None = None,
    difference: float | None = None,
    human_vote_cost: float,
    judge_verdict_cost: float,
    level: float = 0.95,
) -> PurchasePlan:
    """:func:`purchase_plan` with the matched items of a judge analysis as the pilot.

    Parameters
    ----------
    result : JudgeResult
        :func:`lib.judges.run.judge_leaderboard`'s result: its items with human votes and a verdict are the
        pilot, every judge's prediction one column.
    half_width, power, difference : float, optional
        The target (:func:`purchase_plan`).
    human_vote_cost, judge_verdict_cost : float
        Cost of one human vote and of one judge verdict; an item costs as many as the pilot's items
        had on average (e.g. 3 human votes, 2 verdicts: both orders).
    level : float
        Coverage of the intervals.
    """
    x, y, yhat, systems, votes, verdicts = _pilot(result)
    return purchase_plan(
        x,
        y,
        yhat,
        systems,
        half_width=half_width,
        power=power,
        difference=difference,
        human_item_cost=human_vote_cost * votes,
        judge_item_cost=judge_verdict_cost * verdicts,
        votes_per_item=votes,
        verdicts_per_item=verdicts,
        level=level,
    )


def worth_for_items(result: JudgeResult, *, human_items: int, judge_only_items: int) -> pd.DataFrame:
    """:func:`predicted_worth` with the matched items of a judge analysis as the pilot."""
    x, y, yhat, _, votes, _ = _pilot(result)
    judges = list(result.predictions.columns)
    return predicted_worth(
        x, y, yhat, judges, human_items=human_items, judge_only_items=judge_only_items, votes_per_item=votes
    )


def _pilot(result: JudgeResult):
    """``x, y, yhat (judges' predictions, a missing one filled as the fit does), systems, votes per item, verdicts
    per item`` of the items with human votes and a verdict."""
    from lib.judges.run import fill_missing, item_design

    items = result.items
    systems = sorted(set(items["system_low"]) | set(items["system_high"]))
    keep = ((items["n_human"] > 0) & (items["n_judge"] > 0)).to_numpy()
    pilot = items[keep]
    yhat, _ = fill_missing(result.predictions.to_numpy()[keep])
    votes, verdicts = float(pilot["n_human"].mean()), float(items.loc[items["n_judge"] > 0, "n_judge"].mean())
    return item_design(pilot, systems), pilot["human_score"].to_numpy(), yhat, systems, votes, verdicts
