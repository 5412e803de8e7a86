"""One judge analysis, shared by the Judges page and ``python -m lib rank --judge``: the judge's
quality and three Bradley–Terry leaderboards (human-only, judge-only, prediction-powered)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from lib.errors import DesignError, SettingsError
from lib.judges.ppi import SkillFit, classical_fit, design, rank_sets, skill_fit
from lib.judges.quality import JudgeQuality, judge_quality
from lib.judges.read import ITEM_KEY, JudgeVotes, match_items, oriented

JUDGE_COLUMNS = [
    "human_skill",
    "human_low",
    "human_high",
    "judge_skill",
    "judge_low",
    "judge_high",
    "ppi_skill",
    "ppi_low",
    "ppi_high",
    "rank_set_low",
    "rank_set_high",
]
"""Columns ``python -m lib rank --judge`` adds to ``leaderboard.csv`` (skills in logits, summing to zero)."""

RANK_COLUMNS = ["human_rank", "judge_rank", "ppi_rank"]
"""Rank (1 = best) of each system by each leaderboard's point estimate (the page highlights changes)."""

NO_UNLABELLED_NOTE = (
    "Every item the judge rated also has human votes, so the judge's verdicts add no information: the "
    "prediction-powered skills are the human-only ones (lambda = 0). The judge helps on items humans did not vote on."
)


@dataclass
class JudgeResult:
    """What the Judges page shows and ``rank --judge`` writes.

    Attributes
    ----------
    leaderboard : DataFrame
        ``system``, :data:`JUDGE_COLUMNS`, :data:`RANK_COLUMNS`; best prediction-powered skill first.
    quality : JudgeQuality
        The judges' agreement with the humans (:func:`lib.judges.quality.judge_quality`).
    diagnostics : dict
        ``effective_human_n`` (human votes the prediction-powered interval is worth: the human votes
        times the ratio of the human-only to the prediction-powered covariance traces),
        ``human_votes``, ``human_items``, ``labelled_items`` (human and judge), ``judge_only_items``,
        ``human_only_items`` (no usable verdict), ``lambda`` (PPI++ weight), ``judge_verdicts``,
        ``unusable_verdicts`` (per judge), ``level``.
    items : DataFrame
        The matched items (:func:`lib.judges.read.match_items`): the pilot of
        :func:`lib.judges.budget.purchase_plan`.
    notes : list of str
        What the user should know (unusable verdicts, items without a verdict, lambda = 0).
    """

    leaderboard: pd.DataFrame
    quality: JudgeQuality
    diagnostics: dict
    items: pd.DataFrame
    notes: list[str] = field(default_factory=list)


def judge_leaderboard(humans: pd.DataFrame, judges: JudgeVotes, *, level: float = 0.95) -> JudgeResult:
    """Human-only, judge-only and prediction-powered Bradley–Terry skills, rank-sets and judge quality.

    Parameters
    ----------
    humans : DataFrame
        Canonical human votes (``lib.formats.VOTE_COLUMNS``).
    judges : JudgeVotes
        :func:`lib.judges.read.read_judge_file`; every judge's usable verdicts are averaged per item
        into one prediction ``yhat``.
    level : float
        Coverage of the intervals and (simultaneous) of the rank-sets.

    Returns
    -------
    JudgeResult

    Raises
    ------
    SettingsError
        ``level`` not in (0, 1).
    FormatError
        A judge's system the humans never compared.
    DesignError
        No item judged by both; shared items (judged by both) that do not link every system
        (:func:`check_shared_items`); a system without any usable verdict; votes that give no finite skill.
    """
    if not 0 < level < 1:
        raise SettingsError(f"the interval level must be between 0 and 1, not {level}")
    items, verdicts = match_items(humans, judges)
    systems = sorted(set(items["system_low"]) | set(items["system_high"]))
    judged = items[items["n_judge"] > 0]
    unjudged = sorted(set(systems) - set(judged["system_low"]) - set(judged["system_high"]))
    if unjudged:
        raise DesignError(
            f"system(s) {', '.join(unjudged[:10])} have no usable verdict: the judge-only and prediction-powered "
            "skills need the judge to have compared every system",
            file=judges.source,
        )
    x = item_design(items, systems)
    y, yhat = items["human_score"].to_numpy(), items["judge_score"].to_numpy()
    has_h, has_j = items["n_human"].to_numpy() > 0, items["n_judge"].to_numpy() > 0
    lab, unl = has_h & has_j, has_j & ~has_h
    check_shared_items(items[lab], systems, source=judges.source)

    human = classical_fit(x[has_h], y[has_h], what="human votes")
    judge = classical_fit(x[has_j], yhat[has_j], what="judge verdicts")
    notes = _unusable_notes(judges)
    if (lonely := int((has_h & ~has_j).sum())) > 0:
        notes.append(
            f"{lonely} items with human votes have no usable verdict: they count in the human-only skills but "
            "not in the prediction-powered ones"
        )
    if unl.any():
        ppi = skill_fit(x[lab], y[lab], yhat[lab], x[unl], yhat[unl], what="human and judge votes")
    else:
        notes.append(NO_UNLABELLED_NOTE)
        ppi = classical_fit(x[lab], y[lab], what="human votes")
    board = _board(systems, human, judge, ppi, level)
    human_votes = int(items["n_human"].sum())
    ratio = float(np.trace(human.cov) / np.trace(ppi.cov))
    diagnostics = {
        "effective_human_n": human_votes * ratio,
        "human_votes": human_votes,
        "human_items": int(has_h.sum()),
        "labelled_items": int(lab.sum()),
        "judge_only_items": int(unl.sum()),
        "human_only_items": lonely,
        "lambda": ppi.lam,
        "judge_verdicts": len(verdicts),
        "unusable_verdicts": {row.judge: int(row.n_unusable) for row in judges.unusable.itertuples()},
        "level": level,
    }
    return JudgeResult(board, judge_quality(items, verdicts, level=level), diagnostics, items, notes)


def check_shared_items(shared: pd.DataFrame, systems: list[str], *, source: str) -> None:
    """Refuse shared items (judged by both the humans and a judge) that do not link every system.

    The prediction-powered estimate corrects the judge with the humans on the shared items: at
    lambda = 0 it is the humans' Bradley–Terry fit on those items alone, and its interval rests on
    them, so they must link every system (directly or through others), which takes at least K - 1 items.
    Without this check a file sharing one item with the humans failed as "some system never wins".

    Parameters
    ----------
    shared : DataFrame
        The matched items judged by both (``system_low``, ``system_high``).
    systems : list of str
        The K systems.
    source : str
        The judge file, for the message.

    Raises
    ------
    DesignError
        The shared items leave systems unlinked: how many items are shared, how many groups of systems
        they leave, and what would work.
    """
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    code = {s: i for i, s in enumerate(systems)}
    low, high = shared["system_low"].map(code).to_numpy(), shared["system_high"].map(code).to_numpy()
    graph = coo_matrix((np.ones(len(low)), (low, high)), shape=(len(systems), len(systems)))
    groups, _ = connected_components(graph, directed=False)
    if groups > 1:
        n = len(shared)
        one, few = n == 1, n < len(systems) - 1
        raise DesignError(
            f"{'only ' * few}{n} item{'' if one else 's'} (prompt and system pair) {'is' if one else 'are'} judged "
            f"by both the humans and the judge, and {'it leaves' if one else 'they leave'} the {len(systems)} "
            f"systems in {groups} groups that no shared item links: the prediction-powered skills correct the judge "
            f"with the humans on the shared items, which must link every system (at least {len(systems) - 1} "
            "items). Have the judge rate items the humans voted on (or humans vote on items the judge rated)",
            file=source,
        )


def item_design(items: pd.DataFrame, systems: list[str]) -> np.ndarray:
    """The design rows (:func:`lib.judges.ppi.design`, (items, K - 1)) of matched items, systems in this order."""
    code = {s: i for i, s in enumerate(systems)}
    return design(items["system_low"].map(code).to_numpy(), items["system_high"].map(code).to_numpy(), len(systems))


def keep_share(votes: pd.DataFrame, share: float, seed: int = 0) -> pd.DataFrame:
    """The human votes of a random ``share`` of the items (prompt and system pair), the others left out.

    What a study that bought human votes on only part of the items would have: with a judge rating
    every item, it shows what the judge's verdicts are worth (the Judges page, the PandaLM check).

    Parameters
    ----------
    votes : DataFrame
        Canonical human votes.
    share : float
        In (0, 1]; ``int(share * n_items)`` items are kept (at least one).
    seed : int
        Seed of the draw.

    Raises
    ------
    SettingsError
        ``share`` not in (0, 1].
    """
    if not 0 < share <= 1:
        raise SettingsError(f"the share of items to keep must be above 0 and at most 1, not {share}")
    key = pd.MultiIndex.from_frame(oriented(votes)[ITEM_KEY])
    items = key.unique().sort_values()
    chosen = np.random.default_rng(seed).choice(len(items), max(1, int(share * len(items))), replace=False)
    return votes[key.isin(items[chosen])]


def _board(systems: list[str], human: SkillFit, judge: SkillFit, ppi: SkillFit, level: float) -> pd.DataFrame:
    """The three leaderboards side by side (:data:`JUDGE_COLUMNS`, :data:`RANK_COLUMNS`)."""
    board = pd.DataFrame({"system": systems})
    for name, fit in (("human", human), ("judge", judge), ("ppi", ppi)):
        low, high = fit.interval(level)
        board[f"{name}_skill"], board[f"{name}_low"], board[f"{name}_high"] = fit.skill, low, high
    board["rank_set_low"], board["rank_set_high"] = rank_sets(ppi, level)
    for name in ("human", "judge", "ppi"):
        board[f"{name}_rank"] = board[f"{name}_skill"].rank(ascending=False, method="min").astype(int)
    return board.sort_values("ppi_skill", ascending=False, kind="stable", ignore_index=True)


def _unusable_notes(judges: JudgeVotes) -> list[str]:
    """One note per judge with unusable (blank) verdicts, naming their rows."""
    notes = []
    for row in judges.unusable.itertuples():
        if row.n_unusable:
            rows = row.rows.split(", ")
            shown = ", ".join(rows[:10]) + (f" (+{len(rows) - 10} more)" if len(rows) > 10 else "")
            notes.append(
                f"{row.judge}: {row.n_unusable} of {row.n_verdicts} verdicts are unusable (blank choice; rows "
                f"{shown} of {judges.source}); they are left out, not guessed"
            )
    return notes
