"""How many votes hold the order: the fewest votes whose removal swaps two adjacent systems of a leaderboard.

Dropping a handful of an arena's votes can change the top of its leaderboard (Broderick, Giordano & Meager
2020, "An automatic finite-sample robustness metric", applied to LMArena's votes by later work). For each
adjacent pair of the ranking (upper system a, lower system b; the top pair first), with the gap
``s_a - s_b > 0`` of their posterior mean skills:

1. the first-order change of the gap from dropping each vote is read off the fit's mode and Hessian
   (:func:`lib.inference.influence.drop_influence`; AMIP);
2. the votes are sorted by it, most negative first, and the smallest prefix whose changes add up to more
   than the gap is the candidate set;
3. the leaderboard is refitted without them, exactly as ``rank`` fits the file without those rows (the
   same settings; the rows dropped from the input's votes, :func:`refit_without`); the pair *flips* when
   the refitted posterior mean skill of b is above a's (the order of ``leaderboard.csv``);
4. if it does not flip, the influences are read again at the refit and the set grows by the prefix that
   flips the refitted gap; if it flips with room to spare (the refit moved the gap further than the
   influences said), the prefix that would just flip it at the refit's pace is refitted, and kept when it
   flips too; at most :data:`MAX_REFITS` refits a pair.

The search drops at most :data:`MAX_SHARE` of the votes: where the influences say more would be needed,
the most influential votes up to that share are dropped in one refit, which then says whether the order
holds without them. What is written in each case is :data:`ROBUSTNESS_COLUMNS`' ``note``.

``votes_to_flip`` is the size of a set that flips the pair (confirmed by a refit): an upper bound on the
smallest such set, which the first-order approximation places there too (the exact minimum is a search over
subsets). Only the MAP + Laplace fit of the votes likelihood, from a file with one vote a row (pairwise),
has it (:func:`check_robustness`).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from lib.errors import InputError, SettingsError
from lib.ranking.budget import duration
from lib.ranking.likelihoods import asked

if TYPE_CHECKING:  # pandas is loaded when the search runs: the command's parser imports the defaults here
    import pandas as pd

ROBUSTNESS_COLUMNS = [
    "system_a",
    "system_b",
    "votes_to_flip",
    "share_of_votes",
    "confirmed",
    "dropped_rows",
    "outcome",
    "gap",
    "gap_predicted",
    "gap_refit",
    "refits",
    "note",
]
"""``robustness.csv``: the upper (a) and lower (b) system of an adjacent pair, the top pair first;
``votes_to_flip`` and ``share_of_votes`` (of the votes the fit used) of the set found, ``confirmed`` whether
the refit without it flips the pair, ``dropped_rows`` the input file's 1-based data rows of those votes (header
not counted; space-separated; empty unless confirmed); ``outcome`` one of :data:`OUTCOMES`; ``gap`` = s_a - s_b
(posterior means, logits) of the leaderboard, ``gap_predicted`` the gap the influences predict without the last
set tried, ``gap_refit`` the refitted one; ``refits`` spent on the pair; ``note`` what was found."""
ROBUSTNESS_TOP = 5
"""The adjacent pairs of this many systems at the top of the leaderboard (4 pairs) by default: each pair costs
at least one refit (``--robustness-top``; the page's setting)."""
MAX_REFITS = 3
"""Refits spent on one pair at most (the first confirms the influences' set; the others grow it)."""
MAX_SHARE = 0.05
"""The search drops at most this share of the votes: beyond it a set is no longer "a handful", and the first
order approximation of the change is far from its domain."""

FLIPS, HOLDS, UNCONFIRMED = "flips", "holds", "not confirmed"
OUTCOMES = {
    FLIPS: "a refit without the votes found ranks b above a (votes_to_flip, dropped_rows)",
    HOLDS: "no vote narrows the gap, or the most influential votes up to the share searched (MAX_SHARE) were "
    "dropped and the refit keeps a above b",
    UNCONFIRMED: "the refits spent (MAX_REFITS) did not flip the pair, or a refit failed: more votes may",
}
"""What the search found for a pair (``robustness.csv``'s ``outcome``) -> what it means."""
FLIP_NOTE = "flips when these {n:,} votes ({share}) are dropped: the refit ranks {b} above {a}"
HOLDS_NOTE = (
    "no flip within {share} of the votes: dropping the {n:,} most influential votes and refitting leaves {a} "
    "above {b} (gap {gap:.3f})"
)
NOTHING_NOTE = "no vote's removal narrows the gap: no flip within {share} of the votes"
UNCONFIRMED_NOTE = (
    "not confirmed: after {refits} refits, without the {n:,} votes found the refit still ranks {a} above {b} "
    "(gap {gap:.3f}); more votes may flip it"
)
GONE_NOTE = "not confirmed: the refit without the {n:,} votes found has no votes of {system} left"
FAILED_NOTE = "not confirmed: the refit without the {n:,} votes found failed ({error})"


def check_robustness(data, settings) -> None:
    """Refuse, before any fit, a leaderboard whose order's robustness cannot be found.

    Parameters
    ----------
    data : lib.inputs.AnalysisInput
    settings : lib.ranking.fit.RankSettings

    Raises
    ------
    SettingsError
        The votes are not one row each of the file (best-worst, ranking, ratings), the likelihood is not
        ``votes``, the fit is not MAP + Laplace (a NUTS sampler chosen, or its fallback), or the votes are
        weighted by their annotators (a refit would weigh the votes left again: not the fit without them).
    """
    from lib.ranking.fit import LAPLACE, fitted_sampler, nuts_reason

    if data.judgments is None or data.judgments.rows is None:
        raise SettingsError(
            f"how many votes hold the order needs pairwise votes, one a row of the file, not the {data.fmt} format "
            "(a vote must be a row that can be dropped)"
        )
    spec = asked(settings.likelihood)
    if settings.likelihood is not None and (spec is None or not spec.per_vote):
        raise SettingsError(
            "how many votes hold the order needs the votes likelihood (one observation a vote), not "
            f"{settings.likelihood}"
        )
    if settings.annotator_weights:
        raise SettingsError(
            "how many votes hold the order is not found for votes weighted by their annotators' reliability: "
            "dropping votes changes every annotator's weight"
        )
    if fitted_sampler(settings) != LAPLACE:
        why = nuts_reason(settings) or f"the {settings.sampler} sampler was chosen"
        raise SettingsError(
            f"how many votes hold the order needs the MAP + Laplace fit (the default sampler): {why}; each pair "
            "takes refits, and a NUTS refit takes minutes"
        )


def adjacent_pairs(board: pd.DataFrame, top: int) -> list[tuple[str, str]]:
    """The adjacent pairs (upper, lower) of the leaderboard's first ``top`` systems, top pair first; pairs of
    systems that no judgment links (different ``component``) are left out.

    Raises
    ------
    SettingsError
        ``top`` below 2.
    """
    if top < 2:
        raise SettingsError(f"a pair needs the top 2 systems at least, not {top}")
    head = board.head(top)
    systems, component = head["system"].tolist(), head["component"].tolist()
    return [(systems[i], systems[i + 1]) for i in range(len(systems) - 1) if component[i] == component[i + 1]]


def refit_seconds(result) -> float:
    """Seconds one refit takes, as the leaderboard's fit took (``diagnostics.wall_s``: the original fit's
    when it was read from the cache)."""
    return float(result.fit.diagnostics.wall_s)


def estimate_text(result, top: int) -> str:
    """What the robustness of ``top`` systems will take, for the user before it runs."""
    n = len(adjacent_pairs(result.leaderboard, top))
    each = refit_seconds(result)
    return (
        f"how many votes hold the order: {n} adjacent pairs of the top {top}, one refit each to confirm "
        f"(at most {MAX_REFITS}) at about {duration(each)} a fit: about {duration(n * each)} "
        f"(at most {duration(n * MAX_REFITS * each)})"
    )


def refit_without(data, rd, settings, rows: np.ndarray):
    """The leaderboard's fit without the votes of the file's ``rows``: what ``rank`` fits on the file without
    those rows (the same reader's votes, settings and fit; not cached).

    Parameters
    ----------
    data : lib.inputs.AnalysisInput
        The input of the fit (its ``judgments.rows`` set).
    rd : lib.ranking.data.RankingData
        The data the leaderboard was fitted to (its likelihood).
    settings : lib.ranking.fit.RankSettings
    rows : ndarray of int
        1-based data rows of the input file.

    Returns
    -------
    lib.ranking.fit.RankingFit
    """
    from lib.ranking.data import ranking_data
    from lib.ranking.fit import fit_ranking

    judgments = data.judgments
    keep = ~np.isin(judgments.rows, rows)
    reduced = dataclasses.replace(
        judgments, votes=judgments.votes[keep].reset_index(drop=True), rows=judgments.rows[keep]
    )
    fewer = ranking_data(dataclasses.replace(data, judgments=reduced), rd.likelihood, style=settings.style_control)
    return fit_ranking(fewer, settings, use_cache=False, cluster_check=False)


def _influence(fit, pairs: list[tuple[str, str]]) -> np.ndarray:
    """(Q, N): each vote's first-order change of each pair's gap s_a - s_b (votes in ``fit.data`` order)."""
    from lib.inference.influence import drop_influence
    from lib.ranking.fit import laplace_state
    from lib.ranking.model import LOGLIK_TERMS

    systems = fit.data.systems
    contrasts = np.zeros((len(pairs), len(systems)))
    for q, (a, b) in enumerate(pairs):
        contrasts[q, systems.index(a)], contrasts[q, systems.index(b)] = 1.0, -1.0
    return drop_influence(laplace_state(fit), LOGLIK_TERMS, "skill", contrasts)[1]


def _gap(fit, a: str, b: str) -> float | None:
    """s_a - s_b of the fit's posterior mean skills (None when either has no votes left)."""
    systems = fit.data.systems
    if a not in systems or b not in systems:
        return None
    means = fit.skill_draws().mean(axis=0)
    return float(means[systems.index(a)] - means[systems.index(b)])


@dataclass
class _Pair:
    """One pair's search so far."""

    a: str
    b: str
    gap: float
    n_votes: int
    dropped: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    predicted: float = np.nan
    refitted: float = np.nan
    refits: int = 0

    def row(self, note: str, outcome: str = UNCONFIRMED) -> dict:
        confirmed = outcome == FLIPS
        n = len(self.dropped) if confirmed else None
        return {
            "system_a": self.a,
            "system_b": self.b,
            "votes_to_flip": n,
            "share_of_votes": None if n is None else n / self.n_votes,
            "confirmed": confirmed,
            "dropped_rows": " ".join(map(str, np.sort(self.dropped))) if confirmed else "",
            "outcome": outcome,
            "gap": self.gap,
            "gap_predicted": self.predicted,
            "gap_refit": self.refitted,
            "refits": self.refits,
            "note": note,
        }


def _search(pair: _Pair, influence: np.ndarray, rows: np.ndarray, refit: Callable, cap: int, max_refits: int) -> dict:
    """Grow the set of dropped votes until a refit flips the pair (module docstring); the pair's row."""
    share = f"{cap / pair.n_votes:.1%}"
    gap = pair.gap
    while pair.refits < max_refits:
        order = np.argsort(influence, kind="stable")
        order = order[influence[order] < 0]  # only votes whose removal narrows the gap, most first
        ranked, path = rows[order], gap + np.cumsum(influence[order])
        before, room = pair.dropped, cap - len(pair.dropped)
        flips = np.flatnonzero(path < 0)
        capped = not len(flips) or flips[0] + 1 > room
        take = min(len(ranked), room) if capped else int(flips[0]) + 1
        if take == 0:
            if len(before):
                return pair.row(_unconfirmed(pair))
            return pair.row(NOTHING_NOTE.format(share=share), HOLDS)
        pair.predicted = float(path[take - 1])
        fit = _refit(pair, refit, np.concatenate([before, ranked[:take]]))
        if isinstance(fit, str):
            return pair.row(fit)
        n = len(pair.dropped)
        if pair.refitted < 0:
            _shrink(pair, refit, before, ranked, path, gap, max_refits)
            n = len(pair.dropped)
            return pair.row(FLIP_NOTE.format(n=n, share=f"{n / pair.n_votes:.3%}", a=pair.a, b=pair.b), FLIPS)
        if capped:
            return pair.row(HOLDS_NOTE.format(share=share, n=n, a=pair.a, b=pair.b, gap=pair.refitted), HOLDS)
        gap, influence, rows = pair.refitted, _influence(fit, [(pair.a, pair.b)])[0], fit.data.rows
    return pair.row(_unconfirmed(pair))


def _unconfirmed(pair: _Pair) -> str:
    return UNCONFIRMED_NOTE.format(refits=pair.refits, n=len(pair.dropped), a=pair.a, b=pair.b, gap=pair.refitted)


def _refit(pair: _Pair, refit: Callable, dropped: np.ndarray):
    """Refit without ``dropped`` (file rows): the fit, with the pair's ``dropped`` and ``refitted`` set, or why
    the refit cannot say (a note)."""
    n = len(dropped)
    try:
        fit = refit(dropped)
    except InputError as err:
        return FAILED_NOTE.format(n=n, error=err)
    finally:
        pair.refits += 1
    refitted = _gap(fit, pair.a, pair.b)
    if refitted is None:
        return GONE_NOTE.format(n=n, system=pair.a if pair.a not in fit.data.systems else pair.b)
    pair.dropped, pair.refitted = dropped, refitted
    return fit


def _shrink(
    pair: _Pair, refit: Callable, before: np.ndarray, ranked: np.ndarray, path: np.ndarray, gap: float, max_refits: int
) -> None:
    """A set that flipped the pair may be larger than needed (a change of many votes is not the sum of their
    first-order changes): at the pace the refit moved the gap against the influences' prediction, the smallest
    prefix of the same ranking that would flip it is refitted once, and kept when it flips."""
    n = len(pair.dropped) - len(before)
    if pair.refits >= max_refits or n < 2:
        return
    pace = (pair.refitted - gap) / (path[n - 1] - gap)  # > 0: both changes are negative
    k = int(np.argmax(gap + pace * (path[:n] - gap) < 0)) + 1
    if k >= n:
        return
    kept = (pair.dropped, pair.refitted, pair.predicted)
    pair.predicted = float(path[k - 1])
    fit = _refit(pair, refit, np.concatenate([before, ranked[:k]]))
    if isinstance(fit, str) or pair.refitted >= 0:
        pair.dropped, pair.refitted, pair.predicted = kept


def vote_robustness(
    data,
    result,
    *,
    top: int = ROBUSTNESS_TOP,
    max_refits: int = MAX_REFITS,
    max_share: float = MAX_SHARE,
    progress: Callable[[float, str], None] | None = None,
) -> pd.DataFrame:
    """How many votes hold each adjacent pair of the leaderboard's top (module docstring).

    Parameters
    ----------
    data : lib.inputs.AnalysisInput
        The input the leaderboard was fitted to (pairwise votes, one a row: :func:`check_robustness`).
    result : lib.ranking.run.RankingResult
        Its leaderboard (MAP + Laplace, votes likelihood).
    top : int
        The adjacent pairs of this many systems at the top (>= 2).
    max_refits : int
        Refits a pair at most (>= 1).
    max_share : float
        The most votes dropped for a pair, as a share of the votes in (0, 1].
    progress : callable, optional
        ``progress(fraction, message)`` after each refit.

    Returns
    -------
    DataFrame
        :data:`ROBUSTNESS_COLUMNS`, one row per adjacent pair, the top pair first; ``votes_to_flip``,
        ``share_of_votes`` empty where no flip is confirmed.

    Raises
    ------
    SettingsError
        See :func:`check_robustness`; ``top``, ``max_refits`` or ``max_share`` out of range.
    """
    fit = result.fit
    check_robustness(data, fit.settings)
    if max_refits < 1 or not 0 < max_share <= 1:
        raise SettingsError(f"refits must be 1 or more and the share in (0, 1], not {max_refits} and {max_share}")
    pairs = adjacent_pairs(result.leaderboard, top)
    rd = fit.data
    n_votes = len(rd.votes)
    cap = max(1, int(max_share * n_votes))
    started, rows = time.perf_counter(), []
    influence = _influence(fit, pairs) if pairs else np.zeros((0, n_votes))
    for q, (a, b) in enumerate(pairs):
        if progress is not None:
            progress(q / len(pairs), f"pair {q + 1} of {len(pairs)}: {a} above {b}")
        gap = _gap(fit, a, b)
        assert gap is not None  # both are systems of the leaderboard
        pair = _Pair(a, b, gap, n_votes)
        rows.append(
            _search(
                pair,
                influence[q],
                rd.rows,
                lambda dropped: refit_without(data, rd, fit.settings, dropped),
                cap,
                max_refits,
            )
        )
    if progress is not None:
        progress(1.0, f"done in {duration(time.perf_counter() - started)}")
    import pandas as pd

    table = pd.DataFrame(rows, columns=ROBUSTNESS_COLUMNS)
    return table.astype({"votes_to_flip": "Int64", "share_of_votes": "float64", "confirmed": bool})
