"""One judge analysis, shared by the Judges page and ``python -m lib rank --judge``: the judges' quality,
what each is worth, and three Bradley–Terry leaderboards (human-only, judge-only, prediction-powered)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from lib.errors import DesignError, SettingsError
from lib.judges.ppi import SkillFit, classical_fit, design, max_t_critical, rank_sets, skill_fit
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

WORTH_COLUMNS = ["ppi_weight", "effective_human_n_alone", "effective_human_n_without"]
"""Columns the analysis adds to each judge's row of ``judge_quality.csv``: its PPI++ weight in the
prediction-powered fit, and the effective human sample size with this judge alone and with every judge but
it (the cost of dropping it is the effective human n of all judges minus the last)."""

DEMO_SHARE = 0.15
"""The share of the items whose human votes the Judges page keeps when it opens on human votes that cover
every judged item (a bundled demo): with all of them the judges have nothing to add (lambda = 0)."""

NO_UNLABELLED_NOTE = (
    "Every item the judges rated also has human votes, so the judges' verdicts add no information: the "
    "prediction-powered skills are the human-only ones (lambda = 0). Judges help on items humans did not vote on."
)


@dataclass
class JudgeResult:
    """What the Judges page shows and ``rank --judge`` writes.

    Attributes
    ----------
    leaderboard : DataFrame
        ``system``, :data:`JUDGE_COLUMNS`, :data:`RANK_COLUMNS`; best prediction-powered skill first.
    quality : JudgeQuality
        The judges' agreement with the humans (:func:`lib.judges.quality.judge_quality`), its table
        with :data:`WORTH_COLUMNS` added.
    diagnostics : dict
        ``effective_human_n`` (human votes the prediction-powered interval is worth: the human votes
        times the ratio of the human-only to the prediction-powered covariance traces),
        ``human_votes``, ``human_items``, ``labelled_items`` (human and judge), ``judge_only_items``,
        ``human_only_items`` (no usable verdict), ``lambda`` (the judges' total PPI++ weight),
        ``judge_weights`` (per judge), ``judge_verdicts``, ``unusable_verdicts`` and ``repeated_verdicts``
        (per judge), ``clustered_by_prompt`` (the intervals are prompt-clustered), ``rank_set_z`` (the
        max-t critical value of the rank-sets), ``level``.
    items : DataFrame
        The matched items (:func:`lib.judges.read.match_items`): the pilot of
        :func:`lib.judges.budget.purchase_plan`.
    fits : dict of str to SkillFit
        ``human``, ``judge`` and ``ppi``: the three leaderboards' skills with their covariances.
    predictions : DataFrame
        Each judge's prediction of each item (:func:`judge_predictions`; rows as ``items``, a column per
        judge, NaN where it gave no verdict).
    notes : list of str
        What the user should know (unusable or repeated verdicts, items without a verdict, prompt clusters,
        lambda = 0).
    """

    leaderboard: pd.DataFrame
    quality: JudgeQuality
    diagnostics: dict
    items: pd.DataFrame
    fits: dict[str, SkillFit]
    predictions: pd.DataFrame
    notes: list[str] = field(default_factory=list)


def judge_leaderboard(humans: pd.DataFrame, judges: JudgeVotes, *, level: float = 0.95) -> JudgeResult:
    """Human-only, judge-only and prediction-powered Bradley–Terry skills, rank-sets and judge quality.

    Parameters
    ----------
    humans : DataFrame
        Canonical human votes (``lib.judgments.formats.VOTE_COLUMNS``).
    judges : JudgeVotes
        :func:`lib.judges.read.read_judge_file`; each judge's usable verdicts are averaged per item into its
        prediction, and the judges' predictions get one PPI++ weight each (:mod:`lib.judges.ppi`).
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
    check_shared_items(items[has_h & has_j], systems, source=judges.source)
    clusters = items["prompt_id"].to_numpy() if items["prompt_id"].duplicated().any() else None
    human = classical_fit(x[has_h], y[has_h], what="human votes", clusters=_part(clusters, has_h))
    judge = classical_fit(x[has_j], yhat[has_j], what="judge verdicts", clusters=_part(clusters, has_j))
    names = judges.unusable["judge"].tolist()
    predictions = judge_predictions(items, verdicts, names)
    pool = _Pool(x, y, has_h, predictions, clusters)
    ppi = pool.fit(tuple(range(len(names))))
    notes = _unusable_notes(judges) + _repeated_notes(judges) + _design_notes(items, has_h, has_j)
    if ppi is None:
        notes.append(NO_UNLABELLED_NOTE)
        ppi = SkillFit(human.skill, human.cov, 0.0, np.zeros(len(names)))
    z = max_t_critical(ppi.cov, level)
    board = _board(systems, human, judge, ppi, level, z)
    human_votes = int(items["n_human"].sum())
    diagnostics = {
        "effective_human_n": human_votes * float(np.trace(human.cov) / np.trace(ppi.cov)),
        "human_votes": human_votes,
        "human_items": int(has_h.sum()),
        "labelled_items": int((has_h & has_j).sum()),
        "judge_only_items": int((has_j & ~has_h).sum()),
        "human_only_items": int((has_h & ~has_j).sum()),
        "lambda": ppi.lam,
        "judge_weights": dict(zip(names, map(float, ppi.weights), strict=True)),
        "judge_verdicts": len(verdicts),
        "unusable_verdicts": {row.judge: int(row.n_unusable) for row in judges.unusable.itertuples()},
        "repeated_verdicts": {row.judge: int(row.n_repeated) for row in judges.unusable.itertuples()},
        "clustered_by_prompt": clusters is not None,
        "rank_set_z": z,
        "level": level,
    }
    quality = judge_quality(items, verdicts, level=level)
    quality.table = quality.table.merge(pool.worth(names, ppi, human, human_votes), on="judge", how="left")
    fits = {"human": human, "judge": judge, "ppi": ppi}
    return JudgeResult(board, quality, diagnostics, items, fits, pd.DataFrame(predictions, columns=names), notes)


def judge_predictions(items: pd.DataFrame, verdicts: pd.DataFrame, judges: list[str]) -> np.ndarray:
    """Each judge's prediction of each item: the mean score of its usable verdicts there, NaN where it gave none.

    Parameters
    ----------
    items, verdicts : DataFrame
        :func:`lib.judges.read.match_items`' items and oriented verdicts.
    judges : list of str
        The columns' judges.

    Returns
    -------
    ndarray (items, judges)
    """
    per = verdicts.pivot_table(index=ITEM_KEY, columns="judge", values="score", aggfunc="mean")
    return per.reindex(index=pd.MultiIndex.from_frame(items[ITEM_KEY]), columns=judges).to_numpy(dtype=float)


def fill_missing(predictions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Judges' predictions (items, judges) with a judge's missing one filled by the mean of the others' on the
    item (a rule that never looks at the human votes, so a prediction-powered fit stays valid), and which
    items some judge rated."""
    judged = ~np.isnan(predictions).all(axis=1)
    mean = np.full(len(predictions), np.nan)
    mean[judged] = np.nanmean(predictions[judged], axis=1)
    return np.where(np.isnan(predictions), mean[:, None], predictions), judged


class _Pool:
    """Prediction-powered fits with a subset of the judges: the items some judge of the subset rated, a judge's
    missing prediction there filled (:func:`fill_missing`)."""

    def __init__(self, x, y, has_h, predictions, clusters):
        self.x, self.y, self.has_h, self.predictions, self.clusters = x, y, has_h, predictions, clusters

    def fit(self, subset: tuple[int, ...]) -> SkillFit | None:
        """The PPI++ fit of these judges (columns), None without an item they rated and humans did not."""
        filled, judged = fill_missing(self.predictions[:, list(subset)])
        lab, unl = self.has_h & judged, judged & ~self.has_h
        if not unl.any():
            return None
        x, y, cl = self.x, self.y, self.clusters
        return skill_fit(
            x[lab],
            y[lab],
            filled[lab],
            x[unl],
            filled[unl],
            clusters_l=_part(cl, lab),
            clusters_u=_part(cl, unl),
            what="human and judge votes",
        )

    def worth(self, names: list[str], ppi: SkillFit, human: SkillFit, human_votes: int) -> pd.DataFrame:
        """Per judge (:data:`WORTH_COLUMNS`): its weight, and the effective human n alone and without it."""

        def effective_n(subset: tuple[int, ...]) -> float:
            try:
                fit = self.fit(subset) if subset else None
            except DesignError:  # these judges' items alone give no finite estimate
                return np.nan
            return human_votes * float(np.trace(human.cov) / np.trace(fit.cov)) if fit else float(human_votes)

        every = range(len(names))
        rows = [
            (name, float(ppi.weights[k]), effective_n((k,)), effective_n(tuple(i for i in every if i != k)))
            for k, name in enumerate(names)
        ]
        return pd.DataFrame(rows, columns=["judge", *WORTH_COLUMNS])


def _part(clusters: np.ndarray | None, keep: np.ndarray) -> np.ndarray | None:
    return None if clusters is None else clusters[keep]


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


def _board(systems: list[str], human: SkillFit, judge: SkillFit, ppi: SkillFit, level: float, z: float) -> pd.DataFrame:
    """The three leaderboards side by side (:data:`JUDGE_COLUMNS`, :data:`RANK_COLUMNS`); rank-sets at the
    simultaneous critical value z."""
    board = pd.DataFrame({"system": systems})
    for name, fit in (("human", human), ("judge", judge), ("ppi", ppi)):
        low, high = fit.interval(level)
        board[f"{name}_skill"], board[f"{name}_low"], board[f"{name}_high"] = fit.skill, low, high
    board["rank_set_low"], board["rank_set_high"] = rank_sets(ppi, level, z=z)
    for name in ("human", "judge", "ppi"):
        board[f"{name}_rank"] = board[f"{name}_skill"].rank(ascending=False, method="min").astype(int)
    return board.sort_values("ppi_skill", ascending=False, kind="stable", ignore_index=True)


def _unusable_notes(judges: JudgeVotes) -> list[str]:
    """One note per judge with unusable (blank) verdicts, naming their rows."""
    notes = []
    for row in judges.unusable.itertuples():
        if row.n_unusable:
            notes.append(
                f"{row.judge}: {row.n_unusable} of {row.n_verdicts} verdicts are unusable (blank choice; rows "
                f"{_first_rows(row.rows)} of {judges.source}); they are left out, not guessed"
            )
    return notes


def _first_rows(rows: str) -> str:
    """The first ten of a comma-separated list of rows, and how many more."""
    each = rows.split(", ")
    return ", ".join(each[:10]) + (f" (+{len(each) - 10} more)" if len(each) > 10 else "")


def _repeated_notes(judges: JudgeVotes) -> list[str]:
    """One note per judge that gave several verdicts on the same prompt, pair and order."""
    notes = []
    for row in judges.unusable.itertuples():
        if row.n_repeated:
            notes.append(
                f"{row.judge}: {row.n_repeated} verdicts repeat an earlier verdict's prompt, pair and order (rows "
                f"{_first_rows(row.repeated_rows)} of {judges.source}); both are counted, in the mean score of "
                "their item"
            )
    return notes


def _design_notes(items: pd.DataFrame, has_h: np.ndarray, has_j: np.ndarray) -> list[str]:
    """Human items without a verdict, and prompts that carry several items (clustered intervals)."""
    notes = []
    if (lonely := int((has_h & ~has_j).sum())) > 0:
        notes.append(
            f"{lonely} items with human votes have no usable verdict: they count in the human-only skills but "
            "not in the prediction-powered ones"
        )
    if (shared := int(items["prompt_id"].duplicated(keep=False).sum())) > 0:
        notes.append(
            f"{shared} items share their prompt with another pair: every interval is cluster-robust by prompt "
            "(votes on one prompt are not independent)"
        )
    return notes
