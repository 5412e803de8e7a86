"""One leaderboard run, shared by the Leaderboard page and ``python -m lib rank``.

data -> :func:`lib.ranking.data.ranking_data` -> :func:`lib.ranking.fit.fit_ranking` -> leaderboard
(skills, ranks, P(best)) with the Bradley–Terry baseline merged in, win-probability matrix,
intransitive pairs, position bias, annotator severity and the next batch to annotate; with style control
(:mod:`lib.ranking.style`) the same without it beside; by category (:mod:`lib.ranking.categories`) a
leaderboard per category from the same fit.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import pandas as pd

from lib.errors import DesignError, SettingsError
from lib.inference.diagnostics import withhold
from lib.inference.timings import PhaseTimer
from lib.inputs import AnalysisInput
from lib.ranking.active import MIN_SHARE, negligible_note, next_from_posterior, relative_scores
from lib.ranking.baseline import STYLE_COEFFICIENT_COLUMNS, bradley_terry, contextual_bradley_terry
from lib.ranking.budget import (
    CLUSTER_CHECK,
    MAX_MEMORY_GB,
    MAX_MINUTES,
    WIN_MATRIX_TOP,
    CostEstimate,
    check_budget,
    estimate_cost,
    revising,
    within,
)
from lib.ranking.categories import BY_CATEGORY_DATA, category_leaderboard, category_spread
from lib.ranking.clusters import clustering_note
from lib.ranking.data import annotator_design, ranking_data
from lib.ranking.fit import RankingFit, RankSettings, fit_ranking, fitted_sampler, resolve_annotator_effect
from lib.ranking.leaderboard import (
    SKILL_COLUMNS,
    annotator_severity,
    centre_components,
    intransitive_pairs,
    leaderboard,
    position_bias,
    style_coefficients,
    win_matrix,
)

LEADERBOARD_COLUMNS = [*SKILL_COLUMNS, "bt_rating", "bt_low", "bt_high"]
"""Columns of ``leaderboard.csv`` in this order (``p_top_k`` and ``component`` follow them)."""
UNCONTROLLED_COLUMNS = ["skill_uncontrolled", "rank_change", "bt_rating_uncontrolled"]
"""Added to ``leaderboard.csv`` by style control: the skill without it, the change of the system's place in the
leaderboard (the place without style control minus the place with it: > 0, it rises when style is accounted
for) and the Bradley–Terry rating without it."""


NEXT_TEXT_COLUMNS = ["prompt_text", "response_a", "response_b"]
"""Added to ``next_batch.csv`` when the data hold the prompts' texts or the systems' responses."""
SETTLED_NOTE = (
    "The ranking is settled: every pair of neighbours in it has the same order in at least {:.0%} of "
    "the draws, so no judgment is expected to change it; there is no next batch to annotate."
)
TOP_SETTLED_NOTE = (
    "Who is best is settled (the same system is first in at least {:.0%} of the draws): the next "
    "batch aims at the neighbours further down whose order is still undecided."
)

NO_PAIRS_NOTE = (
    "What to annotate next scores pairwise judgments: the ratings likelihood has none, so there is no next batch."
)
SHOWN_GROUPS = 5
"""At most this many groups of systems are named in the warning."""
WIN_TOP_NOTE = (
    "The win matrix holds the pairs of the top {k} of the {n} systems (--win-matrix-top K, or the "
    "page's setting, for more): every pair would be {n} x {n}."
)
COMPONENTS_WARNING = (
    "The systems fall into {n} groups that no judgment links, directly or through other systems: {groups}. "
    "Each group is ranked on its own (column 'component'; its skills sum to zero{baseline}): ranks, P(best) and "
    "win probabilities are within a group, and the win matrix leaves pairs of different groups empty, since "
    "the prior alone would place one group against another. Judge pairs across the groups to link them."
)
CLUSTER_CHECK_LEFT_OUT = (
    "Not checked whether votes on the same prompt are dependent (prompt clustering): the check needs "
    "{size} for the {k:,} x {k:,} matrices of {k:,} systems and would take this leaderboard to {full}, "
    "above the memory limit of {max_gb:g} GB or the time limit of {max_min:g} minutes (--max-memory, "
    "--max-minutes): raise them to run it."
)
"""Said in the fit's warnings when the prompt-clustering check is left out to keep to the limits."""
NO_VOTES_NOTE = (
    "The Bradley–Terry baseline needs pairwise votes: the ratings likelihood has none, so "
    "bt_rating, bt_low and bt_high are empty."
)


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
        ``system_a, system_b, p_b_better``: P(system_b better than system_a) for every unordered pair of the
        top ``win_top`` systems, compared or not; empty (NaN) across components of the comparison graph.
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
    annotator_quality : DataFrame or None
        :data:`lib.judgments.annotator_quality.QUALITY_COLUMNS` of the votes' annotators when the votes were weighted
        by their reliability (``annotator_weights``), else None.
    severity_scale : DataFrame or None
        The spread of the severities (``parameter, mean, sd, low, high``) when they were estimated
        (always by NUTS: a Laplace fit falls back to it, ``lib.ranking.fit.nuts_reason``).
    next_batch : DataFrame or None
        ``NEXT_COLUMNS``, ``relative_score`` (then ``NEXT_TEXT_COLUMNS`` when the data hold texts): the (pair, prompt)
        candidates to annotate next, best first; None when not asked or when the ranking is settled
        (a note says so).
    notes : list of str
        What the user should know about the result (e.g. no Bradley–Terry baseline).
    cost : CostEstimate or None
        The memory and time estimated before the fit (:func:`ranking_cost`).
    uncontrolled : DataFrame or None
        With style control: the leaderboard of the same votes without it (``leaderboard``'s columns).
    style : DataFrame or None
        With style control: each feature's coefficient in the votes model
        (:data:`lib.ranking.leaderboard.STYLE_COLUMNS`) and in the Bradley–Terry baseline
        (:data:`lib.ranking.baseline.STYLE_COEFFICIENT_COLUMNS`).
    by_category : DataFrame or None
        Ranked by category: :data:`lib.ranking.categories.BY_CATEGORY_COLUMNS`, each category's leaderboard from
        the one fit (``leaderboard_by_category.csv``).
    category_spread : DataFrame or None
        Ranked by category: the learnt spread sigma_category (``parameter, mean, sd, low, high``).
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
    cost: CostEstimate | None = None
    annotator_quality: pd.DataFrame | None = None
    uncontrolled: pd.DataFrame | None = None
    style: pd.DataFrame | None = None
    by_category: pd.DataFrame | None = None
    category_spread: pd.DataFrame | None = None


def rank_systems(
    data: AnalysisInput,
    settings: RankSettings,
    *,
    n_next: int = 0,
    top_k: int = 3,
    win_top: int = WIN_MATRIX_TOP,
    max_memory_gb: float = MAX_MEMORY_GB,
    max_minutes: float = MAX_MINUTES,
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
        (ratings with an annotator column; None: on where the scores identify it, and a note says
        which and why, :func:`lib.ranking.data.annotator_design`), chains / draws / tune / seed.
    n_next : int
        Size of the next batch to annotate (0: none).
    top_k : int
        k of P(in top k).
    win_top : int
        The win matrix holds the pairs of the leaderboard's first ``win_top`` systems (a note says so
        when there are more): K systems have K (K - 1) / 2 pairs.
    max_memory_gb, max_minutes : float
        Limits of the estimated cost (:func:`lib.ranking.budget.estimate_cost`, reported through
        ``progress`` before the fit): a fit estimated to pass one is refused before it starts.
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
        Unknown likelihood, sampler or baseline system; ``n_next`` negative; ``win_top`` below 2.
    lib.errors.TooLargeError
        The estimated memory or time passes its limit.
    """
    _check_sizes(n_next, win_top, max_memory_gb, max_minutes)
    rd = ranking_data(data, settings.likelihood, style=settings.style_control, by_category=settings.by_category)
    said: list[str] = []
    if settings.annotator_effect is None and rd.spec.severity:  # the default: decided here, said
        design = annotator_design(rd.ratings)
        settings = resolve_annotator_effect(settings, design)
        said.append(design.note)
    quality = weigh_annotators(rd) if settings.annotator_weights else None
    cost, left_out = affordable_cost(rd, settings, n_next, win_top, max_memory_gb, max_minutes)
    if progress is not None:
        progress(0.0, f"estimated: {cost} (the time to go is revised as phases finish)")
    check_budget(cost, max_memory_gb, max_minutes)
    notes: list[str] = [*said, *(rd.style.notes if rd.style is not None else [])]
    fitting = PhaseTimer()  # its phases so far revise the time to go
    report = None if progress is None else revising(progress, cost, fitting)
    fit = fit_ranking(
        rd, settings, progress=_part(report, settings.style_control), timer=fitting, cluster_check=left_out is None
    )
    notes += [note] if (note := clustering_note(fit.idata["posterior"].attrs)) else []
    if left_out is not None:
        fit.diagnostics.warnings = [*fit.diagnostics.warnings, left_out]
    timer = PhaseTimer(fit.diagnostics.timings)  # diagnostics.json's timings (a cache hit: the original fit's)
    with timer.phase("Bradley–Terry baseline"):
        bt, bt_style = _bradley_terry(rd, notes)
    reading_out = time.perf_counter()
    board, skills, component = _board(fit, bt, settings, top_k)
    if rd.n_components > 1:
        fit.diagnostics.warnings = [*fit.diagnostics.warnings, components_warning(rd, settings.baseline)]
    shown = list(board["system"][:win_top])
    if len(board) > win_top:
        notes.append(WIN_TOP_NOTE.format(k=win_top, n=len(board)))
    result = RankingResult(
        fit,
        board,
        win_matrix(skills, rd.systems, component, only=shown),
        notes=notes,
        intransitive=intransitive_pairs(fit.idata),
        position=position_bias(fit.idata),
        cost=cost,
        annotator_quality=quality,
    )
    if result.intransitive is not None:
        result.tau = float(fit.idata["posterior"]["tau"].mean())
    if (
        severity := annotator_severity(
            fit.idata, rd.ratings["annotator_id"].value_counts() if rd.ratings is not None else None
        )
    ) is not None:
        result.severity_scale, result.severity = severity
    notes += rd.spec.notes
    if not rd.spec.paired:
        notes += [NO_PAIRS_NOTE] if n_next else []
    elif n_next:
        result.next_batch, said = annotate_next(fit.idata, n_next, component=component, judgments=data.judgments)
        notes += said
    if settings.by_category:
        assert rd.votes is not None  # ranking by category needs votes (ranking_data)
        result.by_category = category_leaderboard(
            fit.idata, rd.votes, rd.systems, component=component, baseline=settings.baseline
        )
        result.category_spread = category_spread(fit.idata)
    timer.add("read-outs", time.perf_counter() - reading_out)
    if settings.style_control:
        _uncontrolled(result, rd, settings, top_k, bt_style, progress, cluster_check=left_out is None)
    return result


def weigh_annotators(rd) -> pd.DataFrame:
    """Give each vote of ``rd`` its annotator's reliability as ``weight`` (in place) and return every
    annotator's quality (:func:`lib.judgments.annotator_quality.vote_weights`).

    Raises
    ------
    SettingsError
        Not the votes likelihood, votes without annotators, or a single annotator.
    """
    from lib.judgments.annotator_quality import vote_weights

    if not rd.spec.per_vote:
        raise SettingsError(f"annotator weights weigh single votes: the votes likelihood, not {rd.likelihood}")
    weights, quality = vote_weights(rd.votes)
    rd.votes = rd.votes.assign(weight=weights)
    return quality


LEADERBOARD_DATA = ("system", "n_votes", "bt_rating", "bt_low", "bt_high", "component", "bt_rating_uncontrolled")
"""The leaderboard's columns that do not come from the fit (ids, counts, the Bradley–Terry baseline): all
that :func:`withhold_estimates` keeps of it."""


def withhold_estimates(result: RankingResult) -> RankingResult:
    """The result of a fit whose chains did not converge with every estimate of the fit left empty
    (:func:`lib.inference.diagnostics.withhold`): skills, ranks, P(best) and P(top k), win probabilities,
    next-batch scores and severities; the intransitive pairs, tau, the position bias and the severities'
    spread dropped (None), and the notes that read the posterior (a stuck chain's ranking is "settled"); with
    style control the votes model's style coefficients emptied; by category each category's estimates emptied
    and the spread dropped. The rows, ids, counts and the Bradley–Terry baseline (not fitted by NUTS) stay."""
    severity, settled = result.severity, [n.format(1 - MIN_SHARE) for n in (SETTLED_NOTE, TOP_SETTLED_NOTE)]
    return replace(
        result,
        notes=[note for note in result.notes if note not in settled],
        leaderboard=withhold(result.leaderboard, LEADERBOARD_DATA),
        win_matrix=withhold(result.win_matrix, ("system_a", "system_b")),
        next_batch=None
        if result.next_batch is None
        else withhold(result.next_batch, ("system_a", "system_b", "prompt_id", *NEXT_TEXT_COLUMNS)),
        severity=None if severity is None else withhold(severity, ("annotator_id", "n_scores")),
        style=None if result.style is None else withhold(result.style, STYLE_COEFFICIENT_COLUMNS),
        by_category=None if result.by_category is None else withhold(result.by_category, BY_CATEGORY_DATA),
        category_spread=None,
        intransitive=None,
        tau=None,
        position=None,
        severity_scale=None,
    )


def _check_sizes(n_next: int, win_top: int, max_memory_gb: float, max_minutes: float) -> None:
    """Raise SettingsError for a negative batch, a win matrix of fewer than 2 systems, or limits not above 0."""
    if n_next < 0:
        raise SettingsError(f"the size of the next batch must be 0 or more, not {n_next}")
    if win_top < 2:
        raise SettingsError(f"the win matrix needs at least 2 systems, not {win_top}")
    if not (max_memory_gb > 0 and max_minutes > 0):
        raise SettingsError(f"the memory and time limits must be above 0, not {max_memory_gb} GB and {max_minutes} min")


def _part(progress: Callable[[float, str], None] | None, halved: bool) -> Callable[[float, str], None] | None:
    """The progress of the first of two fits (style control: with, then without) as the first half of the whole."""
    if progress is None or not halved:
        return progress
    return lambda fraction, message: progress(fraction / 2, f"with style control: {message}")


def _board(fit: RankingFit, bt: pd.DataFrame, settings: RankSettings, top_k: int):
    """The leaderboard of a fit with the Bradley–Terry baseline merged in, its skill draws and the components."""
    rd = fit.data
    skills = fit.skill_draws()
    assert rd.component is not None  # set by RankingData.__post_init__
    component = rd.component.to_numpy()
    if rd.n_components > 1:
        base = rd.systems.index(settings.baseline) if settings.baseline in rd.systems else None
        skills = centre_components(skills, component, base)
    board = leaderboard(skills, rd.systems, rd.n_votes, top_k=min(top_k, len(rd.systems)), component=component)
    board = board.merge(bt, on="system", how="left")[[*LEADERBOARD_COLUMNS, "p_top_k", "component"]]
    return board, skills, component


def _uncontrolled(
    result: RankingResult,
    rd,
    settings: RankSettings,
    top_k: int,
    bt_style: pd.DataFrame,
    progress: Callable[[float, str], None] | None,
    *,
    cluster_check: bool,
) -> None:
    """Style control's other half: the same votes fitted without it (:attr:`RankingResult.uncontrolled`), its skill,
    place and Bradley–Terry rating beside the controlled ones (:data:`UNCONTROLLED_COLUMNS`), and the style
    coefficients of both models (:attr:`RankingResult.style`)."""
    began = time.perf_counter()
    plain = dataclasses.replace(rd, style=None)
    later = None if progress is None else (lambda f, m: progress(0.5 + f / 2, f"without style control: {m}"))
    fit = fit_ranking(
        plain, dataclasses.replace(settings, style_control=False), progress=later, cluster_check=cluster_check
    )
    board, _, _ = _board(fit, _bradley_terry(plain, [])[0], settings, top_k)
    PhaseTimer(result.fit.diagnostics.timings).add("without style control", time.perf_counter() - began)
    result.uncontrolled = board
    place = pd.Series(range(1, len(board) + 1), index=board["system"])
    before = board.set_index("system")
    controlled = result.leaderboard
    controlled["skill_uncontrolled"] = controlled["system"].map(before["skill_mean"])
    controlled["rank_change"] = controlled["system"].map(place).to_numpy() - range(1, len(controlled) + 1)
    controlled["bt_rating_uncontrolled"] = controlled["system"].map(before["bt_rating"])
    irt = style_coefficients(result.fit.idata)
    assert irt is not None  # a fit with style control has its coefficients
    result.style = irt.merge(bt_style, on="feature", how="left")


def annotate_next(idata, n: int, *, component=None, judgments=None) -> tuple[pd.DataFrame | None, list[str]]:
    """What to annotate next, ready for annotators: who is best first, else the rest of the ranking.

    Parameters
    ----------
    idata : arviz.InferenceData
        Posterior of a paired likelihood (:func:`lib.ranking.active.next_from_posterior`).
    n : int
        Batch size, >= 1.
    component : ndarray (K,) of int, optional
        Component of each system in the comparison graph (no pair across components).
    judgments : lib.judgments.formats.Judgments, optional
        Its prompt texts and responses are added to each row (:data:`NEXT_TEXT_COLUMNS`) when it has any.

    Returns
    -------
    (batch, notes)
        ``batch``: ``NEXT_COLUMNS``, ``relative_score`` (:func:`lib.ranking.active.relative_scores`)
        (+ ``NEXT_TEXT_COLUMNS``), best first; None when the ranking is settled (:data:`SETTLED_NOTE`).
        ``notes``: what the user should know (the top settled, or all; rows that matter little,
        :func:`lib.ranking.active.negligible_note`).
    """
    batch = next_from_posterior(idata, n, component=component)
    notes = []
    if batch.empty:
        batch = next_from_posterior(idata, n, focus=None, component=component)
        if batch.empty:
            return None, [SETTLED_NOTE.format(1 - MIN_SHARE)]
        notes.append(TOP_SETTLED_NOTE.format(1 - MIN_SHARE))
    batch = relative_scores(batch)
    notes += [note] if (note := negligible_note(batch)) else []
    if judgments is None or (judgments.prompt_texts.empty and judgments.responses.empty):
        return batch, notes
    prompt = judgments.prompt_texts.drop_duplicates("prompt_id").set_index("prompt_id")["prompt_text"]
    response = judgments.responses.drop_duplicates(["prompt_id", "system"]).set_index(["prompt_id", "system"])
    batch["prompt_text"] = batch["prompt_id"].map(prompt).fillna("")
    for side in ("a", "b"):
        keys = pd.MultiIndex.from_arrays([batch["prompt_id"], batch[f"system_{side}"]])
        batch[f"response_{side}"] = response["response"].reindex(keys).fillna("").to_numpy()
    return batch, notes


def affordable_cost(
    rd, settings: RankSettings, n_next: int, win_top: int, max_memory_gb: float, max_minutes: float
) -> tuple[CostEstimate, str | None]:
    """The estimated cost of the leaderboard, and why the prompt-clustering check is left out (None: it runs).

    The check (:func:`lib.ranking.clusters.prompt_clustering`) takes a (K, K) array and an eigendecomposition
    of it: 10,000 systems took the process past 10 GiB after an estimate of 4.9 GB. When it alone takes the
    estimate past a limit, it is left out (said in the fit's warnings) unless the intervals are asked to
    be prompt-clustered; a leaderboard past the limits without it is refused by :func:`check_budget`.
    """
    cost = ranking_cost(rd, settings, n_next=n_next, win_top=win_top)
    if within(cost, max_memory_gb, max_minutes) or CLUSTER_CHECK not in cost.parts or settings.cluster_prompts == "on":
        return cost, None
    lean = ranking_cost(rd, settings, n_next=n_next, win_top=win_top, cluster_check=False)
    gb = cost.parts[CLUSTER_CHECK]
    said = CLUSTER_CHECK_LEFT_OUT.format(
        size=f"{gb:.1f} GB" if gb >= 1 else f"{gb * 1024:.1f} MB",
        k=len(rd.systems),
        full=cost,
        max_gb=max_memory_gb,
        max_min=max_minutes,
    )
    return lean, said


def ranking_cost(
    rd, settings: RankSettings, *, n_next: int = 0, win_top: int = WIN_MATRIX_TOP, cluster_check: bool = True
) -> CostEstimate:
    """:func:`lib.ranking.budget.estimate_cost` for the data of one likelihood and the fit settings (with the
    prompt-clustering check of paired judgments unless ``cluster_check`` is False; twice the time with style
    control, which fits with and without)."""
    n_obs, n_prompts, local = rd.spec.size(rd)
    cost = estimate_cost(
        len(rd.systems),
        n_prompts,
        n_obs,
        sampler=fitted_sampler(settings),
        likelihood=rd.likelihood,
        draws=settings.draws,
        chains=settings.chains,
        tune=settings.tune,
        target_ess=settings.target_ess,
        locals_per_prompt=local,
        component_sizes=rd.component.value_counts().to_numpy(),
        n_next=n_next,
        win_top=win_top,
        # by category the check is not run (lib.ranking.fit.NO_CLUSTER_CHECK_BY_CATEGORY)
        cluster_prompts=n_prompts if rd.spec.paired and cluster_check and not settings.by_category else 0,
        clustered_draws=settings.cluster_prompts != "off" and not settings.by_category,
    )
    # style control fits twice, with and without: a second fit's time as its own phase, the memory of one fit
    if settings.style_control:
        return dataclasses.replace(cost, phases={**cost.phases, "without style control": cost.seconds})
    return cost


def components_warning(rd, baseline: str | None) -> str:
    """:data:`COMPONENTS_WARNING` for the components of ``rd`` (the first few groups, a few names of each)."""
    groups = []
    for c, members in list(rd.component.groupby(rd.component, sort=True))[:SHOWN_GROUPS]:
        names = [str(s) for s in members.index]
        more = f" and {len(names) - 3} more" if len(names) > 3 else ""
        groups.append(f"{c}: {', '.join(names[:3])}{more} ({len(names)} systems)")
    if rd.n_components > SHOWN_GROUPS:
        groups.append(f"... ({rd.n_components - SHOWN_GROUPS} more groups)")
    return COMPONENTS_WARNING.format(
        n=rd.n_components,
        groups="; ".join(groups),
        baseline=f"; in the group of {baseline}, its skill is 0" if baseline else "",
    )


def _bradley_terry(rd, notes: list[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The Bradley–Terry baseline, per component of the comparison graph (each on its own scale), contextual
    with the style covariates when ``rd`` has them; and the style coefficients (the largest component's when the
    systems fall into several; empty without style control)."""
    bt = pd.DataFrame(columns=["system", "bt_rating", "bt_low", "bt_high"])
    coefficients = pd.DataFrame(columns=STYLE_COEFFICIENT_COLUMNS)
    if rd.votes is None:
        notes.append(NO_VOTES_NOTE)
        return bt, coefficients
    parts, failed = [], []
    for c, members in rd.component.groupby(rd.component, sort=True):
        inside = rd.votes["system_a"].isin(members.index).to_numpy()
        votes = rd.votes[inside]
        try:
            if rd.style is None:
                parts.append(bradley_terry(votes))
                continue
            table, coef = contextual_bradley_terry(votes, rd.style.values[inside], rd.style.names)
            parts.append(table)
            coefficients = coef if c == 1 else coefficients
        except DesignError as err:
            failed.append((c, err))
    if failed and rd.n_components == 1:
        notes.append(f"No Bradley–Terry baseline: {failed[0][1]}")
    elif failed:
        notes.append(
            f"No Bradley–Terry baseline in {len(failed)} of the {rd.n_components} groups (group "
            f"{failed[0][0]}: {failed[0][1]})"
        )
    return (pd.concat([bt, *parts], ignore_index=True) if parts else bt), coefficients


def diagnostics_text(result: RankingResult, extra: dict | None = None) -> str:
    """``diagnostics.json`` of a leaderboard: the fit's diagnostics
    (:func:`lib.inference.diagnostics.diagnostics_json`); with style control its ``style_coefficients``, per
    feature the votes model's ``mean, sd, low, high`` and the Bradley–Terry baseline's ``bt_mean, bt_sd, bt_low,
    bt_high`` (logits per SD of the standardised feature, ``null`` where not estimated); by category its
    ``category_spread`` (sigma_category's ``mean, sd, low, high``); the fit's ``route`` where it has one
    (:attr:`lib.ranking.fit.RankingFit.route`); and ``extra`` (e.g. the judges' analysis)."""
    import json
    import math

    from lib.inference.diagnostics import diagnostics_json

    def number(value) -> float | None:
        return float(value) if value is not None and math.isfinite(float(value)) else None

    out = json.loads(diagnostics_json(result.fit.diagnostics)) | (extra or {})
    if result.fit.route:
        out["route"] = result.fit.route
    if result.category_spread is not None:
        spread = result.category_spread.iloc[0]
        out["category_spread"] = {c: number(spread[c]) for c in ("mean", "sd", "low", "high")}
    if result.style is not None:
        columns = [c for c in result.style.columns if c != "feature"]
        out["style_coefficients"] = {
            row["feature"]: {c: number(row[c]) for c in columns} for _, row in result.style.iterrows()
        }
    return json.dumps(out, indent=2, allow_nan=False)
