"""Net ratings u_ij per (comparison i, prompt j) from pairwise votes, and the checks around them.

Sedoc & Ungar (2020), "Item Response Theory for Efficient Human Evaluation of Chatbots", section
"Problem Setting": for each prompt, the wins minus losses of one system against the other, summed
over annotators, is an ordered score (a net rating) that the graded response model explains.

Orientation: a comparison is an unordered system pair; ``system_a`` is the alphabetically first
system and ``system_b`` the second, it is labelled "B vs A", and u > 0 (theta > 0) means B was
preferred.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import norm

from lib.errors import DesignError, SettingsError

NET_RATING_MAX = 3
"""Net ratings are kept on [-3, 3] (three annotators), the paper's scale, when counts vary."""

REDUNDANCY_THRESHOLD = 0.6
"""The paper's correlation filter: prompts correlating above this are redundant (Sedoc & Ungar 2020)."""

MIN_SHARED_COMPARISONS = 10
"""Prompts are linked as redundant only over at least this many shared comparisons (and prompts
observed in fewer comparisons are never linked): a correlation over fewer is noise, and with 4
systems (6 comparisons) chance correlations above 0.6 merged a 168-prompt study into one prompt."""

REDUNDANCY_CONFIDENCE = 0.95
"""A link needs the lower end of r's one-sided Fisher-z interval at this level above the threshold."""

_Z_CONFIDENCE = float(norm.ppf(REDUNDANCY_CONFIDENCE))

MERGE_WARN_SHARE = 0.25
"""Warn when more than this share of the prompts ended in merged groups."""

_BLOCK_CELLS = 2**20
"""Prompt-pair cells per block of correlations (about 8 MB per float64 array)."""


@dataclass
class RatingMatrix:
    """Ordered scores of I comparisons (or persons) on J prompts (or items).

    Attributes
    ----------
    u : ndarray, shape (I, J), float64
        Net ratings (or scores); NaN where the comparison was not judged on the prompt. Every
        non-missing value is one of ``categories``.
    comparisons : DataFrame, I rows
        ``comparison`` (label, "B vs A" or the person id), ``system_a``, ``system_b``.
    prompt_ids : ndarray, shape (J,), str
        Prompt (item) ids; after redundancy merging a group's id is its first member's id.
    categories : ndarray, shape (K,), int64
        The ordered possible values, e.g. -3..3.
    groups : DataFrame
        ``prompt_id`` (every original prompt), ``group`` (the id of the column it ended in).
    n_votes : ndarray, shape (I, J), int64
        Number of votes behind each cell (0 where missing; 1 for response data and absolute ratings).
    scores_averaged : ndarray, shape (I, J), int64, optional
        Absolute ratings only (:func:`from_absolute_ratings`): how many scores each cell averages,
        both systems' scores on the prompt together (0 where missing); None otherwise.
    """

    u: np.ndarray
    comparisons: pd.DataFrame
    prompt_ids: np.ndarray
    categories: np.ndarray
    groups: pd.DataFrame
    n_votes: np.ndarray
    scores_averaged: np.ndarray | None = None

    def codes(self) -> np.ndarray:
        """Category index 0..K-1 of every cell, -1 where missing; shape (I, J), int64."""
        idx = np.searchsorted(self.categories, np.nan_to_num(self.u, nan=self.categories[0]))
        return np.where(np.isnan(self.u), -1, idx).astype(np.int64)

    @property
    def shape(self) -> tuple[int, int]:
        """(I, J): comparisons (or persons) x prompts (or items)."""
        return self.u.shape


def orient_votes(votes: pd.DataFrame) -> pd.DataFrame:
    """Votes with ``system_a < system_b`` (alphabetically) and ``winner`` flipped to match.

    Adds ``score``: +1 when B won, -1 when A won, 0 for a tie (the w_B - w_A of one vote).
    """
    out = votes.copy()
    a, b, winner = votes["system_a"], votes["system_b"], votes["winner"]
    keep = ~(a > b).to_numpy(dtype=bool)  # the votes not turned round
    # whole columns chosen from, kept in their dtype (writing the turned rows into pandas' str columns through
    # .loc: 0.15-0.4 s for an arena's 500,000 votes); the winners mapped as categories: each distinct one once
    out["system_a"], out["system_b"] = a.where(keep, b.array), b.where(keep, a.array)
    turned = winner.astype("category").map({"a": "b", "b": "a", "tie": "tie"}).astype(winner.dtype)
    out["winner"] = winner.where(keep, turned.array)
    out["score"] = out["winner"].astype("category").map({"b": 1, "a": -1, "tie": 0}).astype(np.int64)
    out["comparison"] = out["system_b"] + " vs " + out["system_a"]
    return out


def select_criterion(votes: pd.DataFrame, criterion: str | None) -> pd.DataFrame:
    """The votes of one criterion; ``None`` is allowed only when the data has a single one.

    Raises
    ------
    SettingsError
        If the criterion is unknown, or ``None`` while several criteria are present.
    """
    criteria = sorted(votes["criterion"].unique())
    if criterion is None:
        if len(criteria) > 1:
            raise SettingsError(f"the data has several criteria ({', '.join(criteria)}): choose one")
        return votes
    if criterion not in criteria:
        raise SettingsError(f"unknown criterion '{criterion}'; the data has: {', '.join(criteria)}")
    return votes[votes["criterion"] == criterion]


def net_ratings(
    votes: pd.DataFrame,
    criterion: str | None = None,
    *,
    merge_redundant: bool = True,
    threshold: float = REDUNDANCY_THRESHOLD,
) -> RatingMatrix:
    """Net rating ``u_ij = sum_k (w_B - w_A)`` per comparison i and prompt j.

    Rescaling rule (the paper's footnote 2 keeps u on [-3, 3]): when every judged cell has the
    same number of votes n, u stays on [-n, n]; when counts vary, ``u = round(3 * net / n)``
    (halves away from zero), so one vote of three and three of three weigh alike.

    Parameters
    ----------
    votes : DataFrame
        Canonical votes (``lib.judgments.formats.VOTE_COLUMNS``).
    criterion : str, optional
        Which criterion to use; required when the votes hold several.
    merge_redundant, threshold
        Group prompts whose net ratings credibly correlate above ``threshold`` over at least
        ``MIN_SHARED_COMPARISONS`` comparisons and average them (see :func:`redundancy_groups`).

    Returns
    -------
    RatingMatrix

    Raises
    ------
    SettingsError
        On an unknown or ambiguous criterion, or fewer than two prompts or one comparison.
    """
    v = orient_votes(select_criterion(votes, criterion))
    if v.empty:
        raise SettingsError("no votes to rate")
    cells = v.groupby(["comparison", "prompt_id"], sort=True).agg(net=("score", "sum"), n=("score", "size"))
    comps = (
        v.drop_duplicates("comparison")[["comparison", "system_a", "system_b"]]
        .sort_values("comparison")
        .reset_index(drop=True)
    )
    net = cells["net"].unstack("prompt_id").reindex(comps["comparison"])
    n = cells["n"].unstack("prompt_id").reindex(comps["comparison"]).fillna(0).astype(np.int64)
    counts = np.unique(n.to_numpy()[n.to_numpy() > 0])
    if len(counts) == 1:
        top = int(counts[0])
        u = net.to_numpy(dtype=np.float64)
    else:
        top = NET_RATING_MAX
        u = _round_half_away(NET_RATING_MAX * net.to_numpy(dtype=np.float64) / np.where(n > 0, n, 1))
    rm = RatingMatrix(
        u=u,
        comparisons=comps,
        prompt_ids=net.columns.to_numpy(dtype=str),
        categories=np.arange(-top, top + 1, dtype=np.int64),
        groups=pd.DataFrame({"prompt_id": net.columns.astype(str), "group": net.columns.astype(str)}),
        n_votes=n.to_numpy(),
    )
    if not merge_redundant:
        return rm
    n_systems = len(set(comps["system_a"]) | set(comps["system_b"]))
    return merge_groups(rm, redundancy_groups(rm.u, threshold, n_systems=n_systems))


def _round_half_away(x: np.ndarray) -> np.ndarray:
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


def redundancy_groups(
    u: np.ndarray, threshold: float = REDUNDANCY_THRESHOLD, *, n_systems: int | None = None
) -> np.ndarray:
    """Group prompts whose net ratings credibly correlate above ``threshold`` over comparisons.

    The paper groups "covariate prompts using a simple correlation filter (> 0.6)". Over a handful
    of comparisons such a filter links prompts by chance and, chained, merges a whole study, so:

    - the correlation r is Pearson's over the comparisons both prompts share (pairwise complete),
      taken on comparison-centred ratings (each comparison's mean over prompts removed), because
      the systems' overall difference, which every prompt shares, makes all prompts look alike;
    - n is the number of comparisons both prompts share, but at most ``n_systems - 1``: the
      comparisons of S systems are differences of S per-system scores, so a prompt's column holds
      at most S - 1 independent contrasts (with 6 systems, 15 comparisons are 5 contrasts, and chance
      correlations above 0.6 are common); exact for absolute ratings, conservative for votes;
    - two prompts are *linked* only when n >= ``MIN_SHARED_COMPARISONS`` and r is credibly above
      the threshold: the lower end of its one-sided ``REDUNDANCY_CONFIDENCE`` Fisher-z interval,
      ``tanh(atanh(r) - z_0.95 / sqrt(n - 3))``, exceeds ``threshold`` (for 0.6: r > 0.87 at
      n = 10, r > 0.73 at n = 55, r > 0.65 at n = 400);
    - groups are cliques of the link graph (complete linkage, so no chaining of unrelated prompts):
      in prompt order, the first ungrouped prompt takes every later ungrouped prompt linked to it and
      to every member taken so far.

    Correlations are computed in blocks of rows and only for prompts observed in at least
    ``MIN_SHARED_COMPARISONS`` comparisons, so memory is O(block x J), not O(J^2).

    Parameters
    ----------
    u : ndarray, shape (I, J)
        Net ratings, NaN where missing.
    threshold : float
        Correlation the link must credibly exceed (the paper's 0.6).
    n_systems : int, optional
        Number of systems behind the comparisons; None when the rows are not system pairs
        (persons, simulated comparisons), then n is the number of shared rows.

    Returns
    -------
    ndarray, shape (J,), int64
        Group label of each prompt (0..G-1, in order of first member).
    """
    obs = ~np.isnan(u)
    count = obs.sum(axis=1, keepdims=True)
    total = np.where(obs, u, 0.0).sum(axis=1, keepdims=True)
    mean = np.divide(total, count, out=np.zeros_like(total), where=count > 0)
    x = np.where(obs, u - mean, 0.0)
    enough = n_systems is None or n_systems - 1 >= MIN_SHARED_COMPARISONS
    eligible = np.flatnonzero(obs.sum(axis=0) >= MIN_SHARED_COMPARISONS) if enough else np.arange(0)
    leader = np.arange(u.shape[1])
    grouped = np.zeros(u.shape[1], dtype=bool)
    step = max(1, _BLOCK_CELLS // max(len(eligible), 1))
    for start in range(0, len(eligible), step):
        block = eligible[start : start + step]
        linked = _linked(x, obs, block, eligible, threshold, n_systems)
        for row, j in enumerate(block):
            if grouped[j]:
                continue
            members = [j]
            for c in eligible[linked[row] & (eligible > j) & ~grouped[eligible]]:
                if _linked(x, obs, np.array([c]), np.array(members), threshold, n_systems).all():
                    members.append(c)
            grouped[members] = True
            leader[members] = j
    return np.unique(leader, return_inverse=True)[1].astype(np.int64)


def _linked(
    x: np.ndarray,
    obs: np.ndarray,
    rows: np.ndarray,
    cols: np.ndarray,
    threshold: float,
    n_systems: int | None,
) -> np.ndarray:
    """Link rule of :func:`redundancy_groups` between prompts ``rows`` and ``cols``; shape (R, C), bool.

    x holds centred ratings with 0 where missing; sums over shared comparisons give the
    pairwise-complete Pearson r, compared with the smallest r whose Fisher-z bound clears the
    threshold at that n (a table over n, cheaper than atanh per pair).
    """
    a, oa = x[:, rows], obs[:, rows].astype(np.float64)
    b, ob = x[:, cols], obs[:, cols].astype(np.float64)
    n = oa.T @ ob
    sa, sb = a.T @ ob, oa.T @ b
    with np.errstate(invalid="ignore", divide="ignore"):
        r = (a.T @ b - sa * sb / n) / np.sqrt(((a * a).T @ ob - sa**2 / n) * (oa.T @ (b * b) - sb**2 / n))
    n_eff = np.arange(x.shape[0] + 1)
    if n_systems is not None:
        n_eff = np.minimum(n_eff, n_systems - 1)
    r_min = np.tanh(np.arctanh(threshold) + _Z_CONFIDENCE / np.sqrt(np.maximum(n_eff - 3, 1)))
    r_min[n_eff < MIN_SHARED_COMPARISONS] = np.inf
    return r > r_min[n.astype(np.int64)]


def merge_groups(rm: RatingMatrix, labels: np.ndarray) -> RatingMatrix:
    """Average each group's net ratings per comparison (rounded, halves away from zero).

    Averaging keeps u on its scale, the paper's "most conservative possible choice".
    """
    n_groups = int(labels.max()) + 1 if labels.size else 0
    if n_groups == rm.u.shape[1]:
        return rm
    members = [np.flatnonzero(labels == g) for g in range(n_groups)]
    with warnings.catch_warnings():  # an all-missing comparison in a group stays NaN
        warnings.simplefilter("ignore", RuntimeWarning)
        u = np.stack([np.nanmean(rm.u[:, m], axis=1) for m in members], axis=1)
    ids = np.array([rm.prompt_ids[m[0]] for m in members], dtype=str)
    return RatingMatrix(
        u=_round_half_away(u),
        comparisons=rm.comparisons,
        prompt_ids=ids,
        categories=rm.categories,
        groups=pd.DataFrame({"prompt_id": rm.prompt_ids, "group": ids[labels]}),
        n_votes=np.stack([rm.n_votes[:, m].sum(axis=1) for m in members], axis=1),
        scores_averaged=None
        if rm.scores_averaged is None
        else np.stack([rm.scores_averaged[:, m].sum(axis=1) for m in members], axis=1),
    )


def merge_lines(rm: RatingMatrix) -> list[str]:
    """One line per merged group, e.g. ``"merged 3 prompts into p1: p1, p7, p9"``, in column order."""
    members = rm.groups.groupby("group", sort=False)["prompt_id"].agg(list)
    return [f"merged {len(m)} prompts into {g}: {', '.join(m)}" for g, m in members.items() if len(m) > 1]


def merge_warning(rm: RatingMatrix) -> str | None:
    """A warning when redundancy merging changed the study a lot, else None.

    A lot: more than ``MERGE_WARN_SHARE`` of the prompts ended in groups of two or more, or fewer
    than half as many columns are left as there were prompts.
    """
    n_prompts = len(rm.groups)
    sizes = rm.groups["group"].value_counts()
    in_groups = int(sizes[sizes > 1].sum())
    n_cols = len(sizes)
    if n_prompts == 0 or (in_groups <= MERGE_WARN_SHARE * n_prompts and 2 * n_cols >= n_prompts):
        return None
    return (
        f"redundancy merging grouped {in_groups} of {n_prompts} prompts, leaving {n_cols} columns: "
        "the analysis now rests on fewer, averaged prompts; check the groups or turn merging off"
    )


def from_responses(responses: pd.DataFrame) -> RatingMatrix:
    """Classic item-response data (``person, item, score``) as a rating matrix.

    Persons take the place of comparisons and items of prompts; categories are the sorted
    distinct scores.
    """
    wide = responses.pivot(index="person", columns="item", values="score")
    cats = np.unique(responses["score"].to_numpy(dtype=np.int64))
    persons = wide.index.astype(str)
    return RatingMatrix(
        u=wide.to_numpy(dtype=np.float64),
        comparisons=pd.DataFrame({"comparison": persons, "system_a": "", "system_b": ""}),
        prompt_ids=wide.columns.to_numpy(dtype=str),
        categories=cats,
        groups=pd.DataFrame({"prompt_id": wide.columns.astype(str), "group": wide.columns.astype(str)}),
        n_votes=wide.notna().to_numpy().astype(np.int64),
    )


def from_absolute_ratings(
    ratings: pd.DataFrame,
    criterion: str | None = None,
    *,
    scale: tuple[float, float] | None = None,
    merge_redundant: bool = True,
    threshold: float = REDUNDANCY_THRESHOLD,
) -> RatingMatrix:
    """Pairwise net ratings from absolute ratings of several systems on the same prompts.

    Rule: for each prompt and system pair (A < B alphabetically) the score difference
    ``d = s_B - s_A`` on a scale [lo, hi] is mapped linearly onto [-3, 3] and rounded,
    ``u = round(3 * d / (hi - lo))`` (halves away from zero); on a 1-5 scale a difference of
    one point is u = 1 (0.75 rounded), of two points u = 2 (1.5), of four points u = 3.

    Parameters
    ----------
    ratings : DataFrame
        ``prompt_id, system, criterion, score`` and optionally ``annotator_id``
        (``lib.judgments.formats.read_ratings``): one row per score; the scores of a (prompt, system) are
        averaged over annotators (or repeated rows) first; ``scores_averaged`` of the result counts
        them.
    scale : (lo, hi), optional
        The rating scale; by default the smallest and largest of those means.

    Raises
    ------
    SettingsError
        On an unknown or ambiguous criterion, fewer than two systems, or a zero-width or
        non-finite scale. Scores as large as +-1e308 are fine (differences are taken on halves).
    """
    r = select_criterion(ratings, criterion)
    r = r.groupby(["criterion", "prompt_id", "system"], sort=True, as_index=False).agg(
        score=("score", "mean"), n=("score", "size")
    )
    lo, hi = scale if scale is not None else (r["score"].min(), r["score"].max())
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise SettingsError(f"the rating scale [{lo}, {hi}] is not finite")
    if not hi > lo:
        if scale is not None:
            raise SettingsError(f"the rating scale [{lo}, {hi}] has no width")
        raise DesignError(f"every score is {lo}, so no system can be told apart")
    wide = r.pivot_table(index="prompt_id", columns="system", values="score", aggfunc="mean")
    systems = sorted(wide.columns.astype(str))
    if len(systems) < 2:
        raise SettingsError("ratings of at least two systems are needed to form comparisons")
    pairs = [(a, b) for i, a in enumerate(systems) for b in systems[i + 1 :]]
    # Halved, differences of finite scores cannot overflow (+-1e308 would give inf, then NaN); halving
    # is exact, so the ratio equals (s_B - s_A) / (hi - lo) bit for bit on ordinary scales.
    half = wide.to_numpy(dtype=np.float64) / 2
    col = {s: k for k, s in enumerate(wide.columns.astype(str))}
    diff = np.stack([half[:, col[b]] - half[:, col[a]] for a, b in pairs])
    counts = r.pivot_table(index="prompt_id", columns="system", values="n", aggfunc="sum").to_numpy()
    averaged = np.stack([counts[:, col[b]] + counts[:, col[a]] for a, b in pairs])
    u = _round_half_away(NET_RATING_MAX * (diff / (hi / 2 - lo / 2)))
    prompts = wide.index.astype(str)
    rm = RatingMatrix(
        u=u,
        comparisons=pd.DataFrame(
            {
                "comparison": [f"{b} vs {a}" for a, b in pairs],
                "system_a": [a for a, _ in pairs],
                "system_b": [b for _, b in pairs],
            }
        ),
        prompt_ids=prompts.to_numpy(dtype=str),
        categories=np.arange(-NET_RATING_MAX, NET_RATING_MAX + 1, dtype=np.int64),
        groups=pd.DataFrame({"prompt_id": prompts, "group": prompts}),
        n_votes=(~np.isnan(u)).astype(np.int64),
        scores_averaged=np.where(np.isnan(u), 0, np.nan_to_num(averaged)).astype(np.int64),
    )
    if not merge_redundant:
        return rm
    return merge_groups(rm, redundancy_groups(rm.u, threshold, n_systems=len(systems)))


def item_total_correlation(u: np.ndarray) -> np.ndarray:
    """Corrected item-total correlation of each prompt over comparisons.

    The correlation between a prompt's net ratings and the sum of the comparison's net ratings on
    all other prompts (the paper's sanity check that prompts measure the same ability).

    Parameters
    ----------
    u : ndarray, shape (I, J), NaN where missing

    Returns
    -------
    ndarray, shape (J,)
        NaN where a prompt has fewer than three judged comparisons or no variance.
    """
    observed = u[~np.isnan(u)]
    top = np.abs(observed).max() if observed.size else 0.0
    # r is scale-free; dividing by the largest value keeps the sums finite for any finite input.
    filled = np.nan_to_num(u / top if top > 0 else u)
    total = filled.sum(axis=1, keepdims=True)
    out = np.full(u.shape[1], np.nan)
    for j in range(u.shape[1]):
        ok = ~np.isnan(u[:, j])
        rest = (total[:, 0] - filled[:, j])[ok]
        x = filled[ok, j]
        if ok.sum() >= 3 and x.std() > 0 and rest.std() > 0:
            out[j] = np.corrcoef(x, rest)[0, 1]
    return out


def fleiss_kappa(votes: pd.DataFrame) -> tuple[float, int]:
    """Fleiss' kappa of the a / b / tie votes (statsmodels).

    Subjects are (prompt, comparison, criterion) cells; Fleiss' kappa needs the same number of
    raters per subject, so only cells with the most common number of votes are used.

    Returns
    -------
    (kappa, n_subjects)
        kappa is NaN when fewer than two subjects have two or more votes, or when every vote falls
        in one category (agreement expected by chance is then 1, and kappa 0 / 0).
    """
    from statsmodels.stats.inter_rater import fleiss_kappa as _fleiss

    v = orient_votes(votes)
    table = v.groupby(["criterion", "comparison", "prompt_id"])["winner"].value_counts().unstack(fill_value=0)
    table = table.reindex(columns=["a", "b", "tie"], fill_value=0)
    n = table.sum(axis=1)
    if n.empty or n.mode().iloc[0] < 2:
        return float("nan"), 0
    keep = table[n == n.mode().iloc[0]]
    if len(keep) < 2 or (keep.sum(axis=0) > 0).sum() < 2:  # one category only: chance agreement is 1
        return float("nan"), len(keep)
    return float(_fleiss(keep.to_numpy())), len(keep)
