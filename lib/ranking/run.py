"""One leaderboard run, shared by the Leaderboard page and ``python -m lib rank``.

data -> :func:`lib.ranking.data.ranking_data` -> :func:`lib.ranking.fit.fit_ranking` -> leaderboard
(skills, ranks, P(best)) with the Bradley–Terry baseline merged in, win-probability matrix,
intransitive pairs, position bias, annotator severity and the next batch to annotate.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import pandas as pd

from lib.errors import DesignError, SettingsError
from lib.inputs import AnalysisInput
from lib.irt.settings import SAMPLERS as IRT_SAMPLERS
from lib.ranking.active import next_from_posterior
from lib.ranking.baseline import bradley_terry
from lib.ranking.data import ranking_data
from lib.ranking.fit import LAPLACE, LAPLACE_HELP, RankingFit, RankSettings, fit_ranking
from lib.ranking.leaderboard import annotator_severity, intransitive_pairs, leaderboard, position_bias, win_matrix

LEADERBOARD_COLUMNS = ["system", "skill_mean", "skill_sd", "skill_low", "skill_high", "rank_mean", "rank_low",
                       "rank_high", "p_best", "n_votes", "bt_rating", "bt_low", "bt_high"]
"""Columns of ``leaderboard.csv`` in this order (``p_top_k`` follows them)."""

SAMPLERS = {LAPLACE: LAPLACE_HELP, **{s.name: s.help for s in IRT_SAMPLERS.values() if s.posterior}}
"""Samplers of a leaderboard, name -> help: Laplace (fast, the page's default) first, then NUTS."""

NEXT_COLUMNS = ["system_a", "system_b", "prompt_id", "score"]

NO_PAIRS_NOTE = ("What to annotate next scores pairwise judgments: the ratings likelihood has none, so there "
                 "is no next batch.")
LAPLACE_SIGMA_ZETA_NOTE = ("sigma_zeta, the spread of the annotators' severities, is not reported with MAP + Laplace: "
                           "at the joint mode it is overstated and grows with the number of annotators (2.7 for 30 "
                           "annotators of true spread 1 in simulation, NUTS 1.15). The severities and the skills are "
                           "estimated well. Fit with a NUTS sampler for sigma_zeta.")
NO_VOTES_NOTE = ("The Bradley–Terry baseline needs pairwise votes: the ratings likelihood has none, so "
                 "bt_rating, bt_low and bt_high are empty.")


@dataclass
class RankingResult:
    """Everything the page shows and the command writes.

    Attributes
    ----------
    fit : RankingFit
        The posterior (or Laplace approximation) of the skills and its diagnostics.
    leaderboard : DataFrame
        ``LEADERBOARD_COLUMNS`` then ``p_top_k``, one row per system, best (highest mean skill) first.
        Skills in logits with 95% intervals; ranks 1 = best; ``bt_*`` in Elo points (empty without votes).
    win_matrix : DataFrame
        ``system_a, system_b, p_b_better``: P(system_b better than system_a) for every unordered pair, compared or not.
    intransitive : DataFrame or None
        The pairs whose deviation interval excludes 0 (None when the option is off).
    tau : float or None
        Posterior mean of the intransitivity scale tau (None when the option is off).
    position : DataFrame or None
        The position effect gamma (mean, interval) when it was estimated.
    severity : DataFrame or None
        ``lib.ranking.leaderboard.SEVERITY_COLUMNS``: each annotator's severity zeta (logits, > 0:
        scores lower than the skills imply) with its 95% interval and number of scores, most severe
        first; None when the option is off.
    severity_scale : DataFrame or None
        The spread of the severities (``parameter, mean, sd, low, high``) when they were estimated by
        NUTS (None with Laplace, which overstates it: :data:`LAPLACE_SIGMA_ZETA_NOTE`).
    next_batch : DataFrame or None
        ``NEXT_COLUMNS``: the (pair, prompt) candidates to annotate next, best first.
    notes : list of str
        What the user should know about the result (e.g. no Bradley–Terry baseline).
    """

    fit: RankingFit
    leaderboard: pd.DataFrame
    win_matrix: pd.DataFrame
    intransitive: pd.DataFrame | None = None
    tau: float | None = None
    position: pd.DataFrame | None = None
    severity: pd.DataFrame | None = None
    severity_scale: pd.DataFrame | None = None
    next_batch: pd.DataFrame | None = None
    notes: list[str] = field(default_factory=list)


def rank_systems(
    data: AnalysisInput,
    settings: RankSettings,
    *,
    n_next: int = 0,
    top_k: int = 3,
    progress: Callable[[float, str], None] | None = None,
) -> RankingResult:
    """Fit the structured IRT ranking and gather every read-out of the leaderboard.

    Parameters
    ----------
    data : AnalysisInput
        The judgments (``lib.inputs.analysis_input`` or ``bundled_input``).
    settings : RankSettings
        Likelihood (None: the data's natural one), sampler, baseline system, intransitivity,
        position bias (the votes need the pairwise format's ``position`` role), annotator severity
        (ratings with an annotator column), chains / draws / tune / seed.
    n_next : int
        Size of the next batch to annotate (0: none).
    top_k : int
        k of P(in top k).
    progress : callable, optional
        ``progress(fraction, message)`` during the fit.

    Returns
    -------
    RankingResult

    Raises
    ------
    lib.errors.DesignError
        The data cannot rank systems (e.g. fewer than two systems).
    lib.errors.SettingsError
        Unknown likelihood, sampler or baseline system; ``n_next`` negative.
    """
    if n_next < 0:
        raise SettingsError(f"the size of the next batch must be 0 or more, not {n_next}")
    rd = ranking_data(data, settings.likelihood)
    notes: list[str] = []
    fit = fit_ranking(rd, settings, progress=progress)
    skills = fit.skill_draws()
    board = leaderboard(skills, rd.systems, rd.n_votes, top_k=min(top_k, len(rd.systems)))
    bt = pd.DataFrame(columns=["system", "bt_rating", "bt_low", "bt_high"])
    if rd.votes is None:
        notes.append(NO_VOTES_NOTE)
    else:
        try:
            bt = bradley_terry(rd.votes)
        except DesignError as err:
            notes.append(f"No Bradley–Terry baseline: {err}")
    board = board.merge(bt, on="system", how="left")[[*LEADERBOARD_COLUMNS, "p_top_k"]]
    result = RankingResult(fit, board, win_matrix(skills, rd.systems), notes=notes,
                           intransitive=intransitive_pairs(fit.idata), position=position_bias(fit.idata))
    if result.intransitive is not None:
        result.tau = float(fit.idata.posterior["tau"].mean())
    if (severity := annotator_severity(fit.idata, rd.ratings["annotator_id"].value_counts()
                                       if rd.ratings is not None else None)) is not None:
        result.severity_scale, result.severity = severity
        if settings.sampler == LAPLACE:  # a confident wrong number is worse than none
            result.severity_scale = None
            notes.append(LAPLACE_SIGMA_ZETA_NOTE)
    if n_next and rd.likelihood == "ratings":
        notes.append(NO_PAIRS_NOTE)
    elif n_next:
        result.next_batch = next_from_posterior(fit.idata, n_next)
    return result
