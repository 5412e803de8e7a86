"""What to buy next: the cheapest numbers of human-voted and judge-only items for a target interval width.

From a pilot (items with human votes and judge verdicts) the per-item influence functions of the
centred Bradley–Terry skills give, for each system k, the spread ``sigma_k`` of its human-only
estimate and the **PPI correlation** ``rho_k`` between the influence of the human score and of the
judge's (Broska, Howes & van Loon 2024, "The Mixed Subjects Design"; ppi_py's ``_get_ppi_corr``).
Humans alone need ``n0_k = (z sigma_k / w)^2`` items for a 95% half-width ``w``; with the judge, n
human-voted items plus N judge-only ones are worth ``n_eff = n (n + N) / (n + (1 - rho^2) N)``
human-voted items (the power-tuned PPI++ variance, Angelopoulos, Duchi & Zrnic 2023, sec. 6), and
``ppi_py.ppi_power`` gives the cheapest (n, N) reaching ``n_eff = n0`` for given costs. Every system
must reach the width: the pair planned for each system is scaled up (n_eff is homogeneous in (n, N))
until every system's requirement holds, and the cheapest of these is the plan.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from ppi_py import ppi_power
from scipy.special import expit
from scipy.stats import norm

from lib.errors import DesignError, SettingsError
from lib.judges.ppi import rectified_fit

MIN_PILOT_ITEMS = 20
"""Fewest items with human votes and a verdict that can measure the judge (a correlation per system)."""

PLAN_COLUMNS = ["design", "human_items", "judge_only_items", "human_votes", "judge_verdicts", "cost"]
"""Columns of :attr:`PurchasePlan.table`: one row for humans alone, one for humans and the judge."""


@dataclass
class PurchasePlan:
    """The cheapest designs for a target half-width.

    Attributes
    ----------
    table : DataFrame
        :data:`PLAN_COLUMNS`; ``design`` "humans only" or "humans + judge (PPI++)".
    systems : DataFrame
        ``system, sigma, ppi_corr, human_items_needed``: per system, the per-item standard deviation
        of its skill's influence (logits), the PPI correlation, and the human-voted items humans alone
        need for the width.
    binding : str
        The system whose requirement decides the humans-only design.
    """

    table: pd.DataFrame
    systems: pd.DataFrame
    binding: str


def _n_eff(n: float, big_n: float, rho: np.ndarray) -> np.ndarray:
    """Human-voted items that n human-voted + N judge-only items are worth, per correlation."""
    return n * (n + big_n) / (n + (1 - rho**2) * big_n)


def purchase_plan(
    x: np.ndarray,
    y: np.ndarray,
    yhat: np.ndarray,
    systems: list[str],
    *,
    half_width: float,
    human_item_cost: float,
    judge_item_cost: float,
    votes_per_item: float = 1.0,
    verdicts_per_item: float = 1.0,
    level: float = 0.95,
) -> PurchasePlan:
    """The cheapest humans-only and humans + judge designs reaching ``half_width`` on every skill.

    Parameters
    ----------
    x : ndarray (n, K - 1)
        Design rows of the pilot's items with human votes and a verdict (:func:`lib.judges.ppi.design`).
    y, yhat : ndarray (n,)
        Their mean human and judge scores.
    systems : list of str
        The K systems, in the design's order.
    half_width : float
        Target half-width of every system's interval (logits), > 0.
    human_item_cost, judge_item_cost : float
        Cost of the human votes of one item and of the judge's verdicts on one item (>= 0, the human
        one > 0); the cost of ``votes_per_item`` votes and ``verdicts_per_item`` verdicts.
    votes_per_item, verdicts_per_item : float
        For the counts of votes and verdicts in the table.
    level : float
        Coverage of the intervals.

    Returns
    -------
    PurchasePlan

    Raises
    ------
    SettingsError
        A width or a cost out of range.
    DesignError
        Fewer than :data:`MIN_PILOT_ITEMS` pilot items, or a pilot that gives no finite skills.
    """
    if not (half_width > 0 and human_item_cost > 0 and judge_item_cost >= 0 and 0 < level < 1):
        raise SettingsError(
            "the target half-width and a human item's cost must be above 0, a judge item's cost at least 0 "
            f"(got {half_width}, {human_item_cost}, {judge_item_cost})"
        )
    n = len(y)
    if n < MIN_PILOT_ITEMS:
        raise DesignError(
            f"the pilot has {n} items with human votes and a verdict: at least {MIN_PILOT_ITEMS} are needed to "
            "measure how the judge's errors relate to the humans'"
        )
    theta, _, _ = rectified_fit(x, y, yhat, np.zeros((0, x.shape[1])), np.zeros(0), lam=0.0, what="pilot's human votes")
    mu = expit(x @ theta)
    h = (x.T * (mu * (1 - mu))) @ x / n
    k = len(systems)
    a = (np.eye(k) - 1.0 / k)[:, 1:]
    to_skill = a @ np.linalg.inv(h)  # influence of an item on the centred skills: A H^-1 g
    psi, psi_hat = (x * (mu - y)[:, None]) @ to_skill.T, (x * (mu - yhat)[:, None]) @ to_skill.T
    sigma = psi.std(axis=0)
    spread = sigma * psi_hat.std(axis=0)
    cov = ((psi - psi.mean(axis=0)) * (psi_hat - psi_hat.mean(axis=0))).mean(axis=0)
    rho = np.clip(np.divide(cov, spread, out=np.zeros(k), where=spread > 0), -1 + 1 / n, 1 - 1 / n)
    need = (norm.ppf(0.5 + level / 2) * sigma / half_width) ** 2

    best = None
    for j in range(k):
        pair = ppi_power(float(rho[j]), 0.0, human_item_cost, judge_item_cost, effective_n=float(need[j]))
        small, big = max(float(pair["n"]), 1.0), max(float(pair["N"]), 0.0)
        scale = max(1.0, float(np.max(need / _n_eff(small, big, rho))))
        small, big = math.ceil(small * scale), math.ceil(big * scale)
        cost = small * (human_item_cost + judge_item_cost) + big * judge_item_cost
        if best is None or cost < best[2]:
            best = (small, big, cost)
    assert best is not None  # k >= 2 systems
    alone = math.ceil(float(need.max()))
    rows = [
        ("humans only", alone, 0, alone * votes_per_item, 0.0, alone * human_item_cost),
        (
            "humans + judge (PPI++)",
            best[0],
            best[1],
            best[0] * votes_per_item,
            (best[0] + best[1]) * verdicts_per_item,
            best[2],
        ),
    ]
    per_system = pd.DataFrame(
        {"system": systems, "sigma": sigma, "ppi_corr": rho, "human_items_needed": np.ceil(need).astype(int)}
    )
    return PurchasePlan(pd.DataFrame(rows, columns=PLAN_COLUMNS), per_system, systems[int(np.argmax(need))])


def plan_for_items(
    items: pd.DataFrame, *, half_width: float, human_vote_cost: float, judge_verdict_cost: float, level: float = 0.95
) -> PurchasePlan:
    """:func:`purchase_plan` with the matched items of a judge analysis as the pilot.

    Parameters
    ----------
    items : DataFrame
        :attr:`lib.judges.run.JudgeResult.items`.
    half_width : float
        Target half-width of every skill's interval (logits).
    human_vote_cost, judge_verdict_cost : float
        Cost of one human vote and of one judge verdict; an item costs as many as the pilot's items
        had on average (e.g. 3 human votes, 2 verdicts: both orders).
    level : float
        Coverage of the intervals.
    """
    from lib.judges.run import item_design

    systems = sorted(set(items["system_low"]) | set(items["system_high"]))
    pilot = items[(items["n_human"] > 0) & (items["n_judge"] > 0)]
    votes, verdicts = float(pilot["n_human"].mean()), float(items.loc[items["n_judge"] > 0, "n_judge"].mean())
    return purchase_plan(
        item_design(pilot, systems),
        pilot["human_score"].to_numpy(),
        pilot["judge_score"].to_numpy(),
        systems,
        half_width=half_width,
        human_item_cost=human_vote_cost * votes,
        judge_item_cost=judge_verdict_cost * verdicts,
        votes_per_item=votes,
        verdicts_per_item=verdicts,
        level=level,
    )
