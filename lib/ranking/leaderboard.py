"""Leaderboard read-outs from posterior draws of the systems' skills (numpy; no model code).

Ranks are computed per draw, so rank intervals and P(best) carry the joint uncertainty of all skills
(the posterior of a rank, as in Hall & Miller 2009, "Using the bootstrap to quantify the authority of
an empirical ranking", Ann. Statist. 37(6B); here over posterior draws instead of bootstrap fits).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy.stats import rankdata

from lib.errors import SettingsError

SKILL_COLUMNS = [
    "system",
    "skill_mean",
    "skill_sd",
    "skill_low",
    "skill_high",
    "rank_mean",
    "rank_low",
    "rank_high",
    "p_best",
    "n_votes",
]
"""The read-outs of a leaderboard's skills, in this order: ``leaderboard.csv``'s first columns and, per category,
``leaderboard_by_category.csv``'s."""
INTRANSITIVE_NOTE = "the data say {a} beats {b} directly more than their skills imply"
P_BEST_HELP = (
    "P(best): the share of posterior draws in which this system ranks first, given the model and all these "
    "votes. It is not robustness: a few votes can overturn it. In the issue-30 audit a P(best) of 0.915 was "
    "overturned by dropping 51 of 60,000 votes (0.085%); in a simulated arena of 3,000 votes, 0.94 fell to "
    "0.50 when 33 of the leader's wins over the runner-up (1.1%) were dropped. How many votes would change "
    "the leader is a separate question that P(best) does not answer."
)
"""The help of ``p_best`` on the Leaderboard page (docs/leaderboard.md, "P(best) is not robustness")."""


def _draws(skills: np.ndarray, systems: Sequence[str]) -> np.ndarray:
    skills = np.asarray(skills, dtype=float)
    if skills.ndim != 2 or skills.shape[1] != len(systems) or skills.shape[0] < 1:
        raise ValueError(f"skills must have shape (draws, {len(systems)}), got {skills.shape}")
    return skills


def _check_level(level: float) -> None:
    if not 0 < level < 1:
        raise SettingsError(f"the interval level must be between 0 and 1, not {level}")


def draw_ranks(skills: np.ndarray, component: np.ndarray | None = None) -> np.ndarray:
    """Rank of every system in every draw, 1 = best (highest skill); equal skills share the best rank.

    Parameters
    ----------
    skills : ndarray, shape (S, K)
    component : ndarray (K,) of int, optional
        Component of each system in the comparison graph: systems are ranked within their own
        component (``lib.ranking.data.comparison_components``); None: one component.

    Returns
    -------
    ndarray, shape (S, K), int64 in 1..K (1..size of the component).
    """
    skills = np.asarray(skills, dtype=float)
    if component is None:
        return rankdata(-skills, method="min", axis=1).astype(np.int64)
    ranks = np.empty(skills.shape, dtype=np.int64)
    for c in np.unique(component):
        members = np.flatnonzero(component == c)
        ranks[:, members] = rankdata(-skills[:, members], method="min", axis=1)
    return ranks


def centre_components(skills: np.ndarray, component: np.ndarray, baseline: int | None = None) -> np.ndarray:
    """Skill draws with each component's skills summing to zero (the baseline's component: baseline = 0).

    Between components only the prior places the skills, so that offset is removed: within a
    component the differences, and so every rank and win probability, are unchanged.

    Parameters
    ----------
    skills : ndarray, shape (S, K)
    component : ndarray (K,) of int
    baseline : int, optional
        Column of the baseline system, whose skill stays 0.

    Returns
    -------
    ndarray, shape (S, K)
    """
    out = np.array(skills, dtype=float)
    for c in np.unique(component):
        members = component == c
        anchor = (
            out[:, [baseline]]
            if baseline is not None and members[baseline]
            else out[:, members].mean(axis=1, keepdims=True)
        )
        out[:, members] -= anchor
    return out


def leaderboard(
    skills: np.ndarray,
    systems: Sequence[str],
    n_votes: pd.Series | Sequence[int],
    *,
    top_k: int = 3,
    level: float = 0.95,
    component: np.ndarray | None = None,
) -> pd.DataFrame:
    """The leaderboard: skill summary, rank summary, P(best), P(in top k) per system.

    Parameters
    ----------
    skills : ndarray, shape (S, K)
        Posterior (or Laplace) draws of the skills s_k, logits, columns in ``systems`` order.
    systems : sequence of str, length K
    n_votes : Series indexed by system, or sequence of int in ``systems`` order
        Judgments behind each skill (``RankingData.n_votes``); systems missing from a Series get 0.
    top_k : int
        k of P(in top k), 1 <= k <= K.
    level : float
        Coverage of the equal-tailed skill and rank intervals.
    component : ndarray (K,) of int, optional
        Component of each system in the comparison graph: ranks, P(best) and P(top k) are within the
        component (skills of different components were never compared). None: one component.

    Returns
    -------
    DataFrame
        ``system, skill_mean, skill_sd, skill_low, skill_high, rank_mean, rank_low, rank_high, p_best,
        p_top_k, n_votes, component``, by component (1 first), best (highest mean skill) first. Ranks: 1 = best;
        ``rank_low``/``rank_high`` are the (1-level)/2 and (1+level)/2 quantiles of the draws' ranks
        (inverted CDF, so they are ranks that occur); ``p_best`` = P(rank = 1), ``p_top_k`` =
        P(rank <= top_k).

    Raises
    ------
    SettingsError
        ``top_k`` outside 1..K or ``level`` outside (0, 1).
    ValueError
        ``skills`` does not have one column per system.
    """
    skills = _draws(skills, systems)
    _check_level(level)
    if not 1 <= top_k <= len(systems):
        raise SettingsError(f"top k must be between 1 and the number of systems ({len(systems)}), not {top_k}")
    if isinstance(n_votes, pd.Series):
        n_votes = n_votes.reindex(list(systems), fill_value=0)
    component = np.ones(len(systems), dtype=np.int64) if component is None else np.asarray(component, np.int64)
    ranks = draw_ranks(skills, component)
    q = [(1 - level) / 2, (1 + level) / 2]
    skill_q = np.quantile(skills, q, axis=0)
    rank_q = np.quantile(ranks, q, axis=0, method="inverted_cdf")
    table = pd.DataFrame(
        {
            "system": list(systems),
            "skill_mean": skills.mean(axis=0),
            "skill_sd": skills.std(axis=0, ddof=1) if len(skills) > 1 else np.nan,
            "skill_low": skill_q[0],
            "skill_high": skill_q[1],
            "rank_mean": ranks.mean(axis=0),
            "rank_low": rank_q[0].astype(np.int64),
            "rank_high": rank_q[1].astype(np.int64),
            "p_best": (ranks == 1).mean(axis=0),
            "p_top_k": (ranks <= top_k).mean(axis=0),
            "n_votes": np.asarray(n_votes, dtype=np.int64),
            "component": component,
        }
    )
    return table.sort_values(["component", "skill_mean"], ascending=[True, False], kind="stable", ignore_index=True)


WIN_CHUNK = 2_000_000
"""Largest (draws x pairs) block of comparisons held at once (2 MB of booleans)."""


def win_matrix(
    skills: np.ndarray, systems: Sequence[str], component: np.ndarray | None = None, only: Sequence[str] | None = None
) -> pd.DataFrame:
    """Posterior probability that system_b is better than system_a, for every pair of systems.

    Parameters
    ----------
    skills : ndarray, shape (S, K)
        Draws of the skills, columns in ``systems`` order.
    systems : sequence of str, length K
    component : ndarray (K,) of int, optional
        Component of each system in the comparison graph: pairs across components were never
        compared, directly or through others, and get no probability (NaN). None: one component.
    only : sequence of str, optional
        Pairs among these systems only (a large leaderboard's top); None: every system.

    Returns
    -------
    DataFrame
        ``system_a, system_b, p_b_better`` with ``p_b_better = P(s_B > s_A)`` over the draws; one row
        per unordered pair (``system_a`` alphabetically first), K (K - 1) / 2 rows (of ``only``),
        including pairs that were never compared (their probability comes through the other
        systems) and, empty, pairs of different components. Computed in blocks of
        :data:`WIN_CHUNK` comparisons.
    """
    skills = _draws(skills, systems)
    keep = np.arange(len(systems)) if only is None else np.flatnonzero(np.isin(np.asarray(systems), list(only)))
    order = keep[np.argsort(np.asarray(systems, dtype=object)[keep].astype(str), kind="stable")]
    ia, ib = np.triu_indices(len(order), k=1)
    ia, ib = order[ia], order[ib]
    p = np.empty(len(ia))
    step = max(1, WIN_CHUNK // len(skills))
    for start in range(0, len(ia), step):
        a, b = ia[start : start + step], ib[start : start + step]
        p[start : start + step] = (skills[:, b] > skills[:, a]).mean(axis=0)
    if component is not None:
        component = np.asarray(component)
        p[component[ia] != component[ib]] = np.nan
    return pd.DataFrame(
        {
            "system_a": [systems[int(i)] for i in ia],
            "system_b": [systems[int(i)] for i in ib],
            "p_b_better": p,
        }
    )


def intransitive_pairs(idata, *, level: float = 0.95) -> pd.DataFrame | None:
    """The pairs whose intransitivity deviation delta has an interval that excludes 0.

    In the ranking model with intransitivity, a vote on (A, B) has location ``s_B - s_A + delta_AB``
    with ``delta ~ N(0, tau)``: delta > 0 says B beats A directly more than the skills imply.

    Parameters
    ----------
    idata : arviz.InferenceData
        Posterior with ``skill`` (system) and, when fitted with intransitivity, ``delta`` (pair)
        whose ``pair`` labels are "B vs A" (``lib.ranking.model.build_ranking``).
    level : float
        Coverage of the equal-tailed interval of delta.

    Returns
    -------
    DataFrame or None
        ``system_a, system_b, delta_mean, delta_low, delta_high, note`` (the note in words: "the data
        say X beats Y directly more than their skills imply"), largest |delta_mean| first; empty when
        no interval excludes 0; None when the posterior has no ``delta``.
    """
    _check_level(level)
    post = idata["posterior"]
    if "delta" not in post:
        return None
    delta = post["delta"].stack(sample=("chain", "draw")).transpose("pair", "sample").values
    systems = [str(s) for s in post["system"].values]
    by_label = {f"{b} vs {a}": (a, b) for a in systems for b in systems if a != b}
    pairs = [by_label[str(label)] for label in post["pair"].values]
    low, high = np.quantile(delta, [(1 - level) / 2, (1 + level) / 2], axis=1)
    table = pd.DataFrame(
        {
            "system_a": [a for a, _ in pairs],
            "system_b": [b for _, b in pairs],
            "delta_mean": delta.mean(axis=1),
            "delta_low": low,
            "delta_high": high,
        }
    )
    table = table[(table["delta_low"] > 0) | (table["delta_high"] < 0)]
    table["note"] = [
        INTRANSITIVE_NOTE.format(a=b, b=a) if m > 0 else INTRANSITIVE_NOTE.format(a=a, b=b)
        for a, b, m in zip(table["system_a"], table["system_b"], table["delta_mean"], strict=True)
    ]
    return table.sort_values("delta_mean", key=np.abs, ascending=False, kind="stable", ignore_index=True)


def position_bias(idata, *, level: float = 0.95) -> pd.DataFrame | None:
    """The position effect gamma: how much being shown first (on the left) adds to a system's side.

    Parameters
    ----------
    idata : arviz.InferenceData
        Posterior with a scalar ``gamma`` when the model was fitted with position bias.
    level : float
        Coverage of the equal-tailed interval.

    Returns
    -------
    DataFrame or None
        One row ``parameter, mean, sd, low, high`` (logits; gamma > 0 favours the system shown first),
        None when the posterior has no ``gamma``.
    """
    _check_level(level)
    if "gamma" not in idata["posterior"]:
        return None
    gamma = idata["posterior"]["gamma"].values.reshape(-1)
    low, high = np.quantile(gamma, [(1 - level) / 2, (1 + level) / 2])
    sd = gamma.std(ddof=1) if gamma.size > 1 else np.nan
    return pd.DataFrame({"parameter": ["gamma"], "mean": [gamma.mean()], "sd": [sd], "low": [low], "high": [high]})


STYLE_COLUMNS = ["feature", "mean", "sd", "low", "high"]
"""Columns of the style coefficients of the votes model (:func:`style_coefficients`)."""


def style_coefficients(idata, *, level: float = 0.95) -> pd.DataFrame | None:
    """The style coefficients beta of the votes model with style control (:mod:`lib.ranking.model`).

    Parameters
    ----------
    idata : arviz.InferenceData
        Posterior with ``style`` (chain, draw, feature) when the model was fitted with style control.
    level : float
        Coverage of the equal-tailed interval.

    Returns
    -------
    DataFrame or None
        :data:`STYLE_COLUMNS`, one row per feature (logits per SD of the standardised feature; > 0: the answer
        with more of it wins more often), None when the posterior has no ``style``.
    """
    _check_level(level)
    if "style" not in idata["posterior"]:
        return None
    style = idata["posterior"]["style"]
    draws = style.stack(sample=("chain", "draw")).transpose("sample", "feature").to_numpy().astype(np.float64)
    low, high = np.quantile(draws, [(1 - level) / 2, (1 + level) / 2], axis=0)
    sd = draws.std(axis=0, ddof=1) if len(draws) > 1 else np.full(draws.shape[1], np.nan)
    names = style["feature"].to_numpy().astype(str)
    return pd.DataFrame({"feature": names, "mean": draws.mean(axis=0), "sd": sd, "low": low, "high": high})


SEVERITY_COLUMNS = ["annotator_id", "severity_mean", "severity_low", "severity_high", "n_scores"]
"""Columns of the per-annotator severity table (``annotators.csv``)."""


def annotator_severity(
    idata, n_scores: pd.Series | None = None, *, level: float = 0.95
) -> tuple[pd.DataFrame, pd.DataFrame] | None:
    """Annotator severities zeta_r and their scale sigma_zeta (ratings likelihood with the option).

    In the ratings likelihood a score of system k on prompt j by annotator r has location
    ``s_k + eta_j - zeta_r`` (:mod:`lib.ranking.model`): zeta > 0 is a severe annotator, whose
    scores are lower than the skills imply.

    Parameters
    ----------
    idata : arviz.InferenceData
        Posterior with ``zeta`` (annotator) and ``sigma_zeta`` when fitted with annotator severity.
    n_scores : Series, optional
        Scores each annotator gave, indexed by annotator id (missing: 0).
    level : float
        Coverage of the equal-tailed intervals.

    Returns
    -------
    (scale, table) or None
        ``scale``: one row ``parameter, mean, sd, low, high`` of sigma_zeta (logits); ``table``:
        :data:`SEVERITY_COLUMNS`, one row per annotator, most severe (highest mean) first. None when
        the posterior has no ``zeta``.

    Raises
    ------
    SettingsError
        ``level`` outside (0, 1).
    """
    _check_level(level)
    post = idata["posterior"]
    if "zeta" not in post:
        return None
    q = [(1 - level) / 2, (1 + level) / 2]
    sigma = post["sigma_zeta"].values.reshape(-1)
    scale = pd.DataFrame(
        {
            "parameter": ["sigma_zeta"],
            "mean": [sigma.mean()],
            "sd": [sigma.std(ddof=1) if sigma.size > 1 else np.nan],
            "low": [np.quantile(sigma, q[0])],
            "high": [np.quantile(sigma, q[1])],
        }
    )
    zeta = post["zeta"].stack(sample=("chain", "draw")).transpose("annotator", "sample").values
    ids = [str(a) for a in post["annotator"].values]
    low, high = np.quantile(zeta, q, axis=1)
    counts = (n_scores if n_scores is not None else pd.Series(dtype="int64")).reindex(ids, fill_value=0)
    table = pd.DataFrame(
        {
            "annotator_id": ids,
            "severity_mean": zeta.mean(axis=1),
            "severity_low": low,
            "severity_high": high,
            "n_scores": counts.to_numpy(dtype=np.int64),
        }
    )
    return scale, table.sort_values("severity_mean", ascending=False, kind="stable", ignore_index=True)
