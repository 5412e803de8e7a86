"""The ranking model's likelihoods: one registry, :data:`LIKELIHOODS`, of :class:`Likelihood` specs (light imports).

Three likelihoods explain the same judgments at three grains: the net rating of a system pair on a prompt
(*cells*, the paper's graded response model), each vote (*votes*), or each score an annotator gave one
system on one prompt (*ratings*, which needs no pairing). A spec says what its data must hold (the data
check), how its observations and model terms are built (:mod:`lib.ranking.model`), what the options, the
read-outs and the cost estimate may ask of it, and its help text; ``rank --likelihood``, the Leaderboard
page, :func:`lib.ranking.data.ranking_data`, the fit and the run read it. A new likelihood is one entry here
and its own module holding its observations and its model terms (docs/extending.md).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lib.errors import DesignError, SettingsError

if TYPE_CHECKING:
    import pandas as pd

    from lib.ranking.data import RankingData


@dataclass(frozen=True)
class Likelihood:
    """One likelihood of the ranking model.

    Attributes
    ----------
    name, help : str
        ``--likelihood`` and the Leaderboard page's choice; what it models.
    unit : str
        What one observation is (:attr:`lib.ranking.model.Observations.unit`), one unit per likelihood.
    paired : bool
        An observation compares two systems (location s_B - s_A: intransitivity, position bias,
        prompt-clustered intervals, what to annotate next), else it scores one system (a prompt effect,
        annotator severities).
    reads : tuple of str
        The judgments it is built from: ``"votes"`` (pairwise, best-worst, ranking files) and / or
        ``"scores"`` (ratings files).
    default_for : tuple of str
        The judgments whose default likelihood it is (at most one likelihood for each).
    refusal : str
        The message when the input holds none of ``reads``.
    per_vote : bool
        One observation is one vote: annotator weights, style control, ranking by category and the votes that
        hold the order (robustness) need it.
    severity : bool
        Its scores can carry each annotator's severity (:func:`lib.ranking.data.annotator_design`).
    matrix : bool
        It reads the input's net-rating matrix (``lib.judgments.ratings.RatingMatrix``): the input is read with it.
    check : callable
        ``check(table)``: DesignError when the judgments read (votes or scores, of the criterion) cannot
        tell any system apart; run before the systems are counted.
    design : callable
        ``design(data, systems, votes)``: ``(matrix, component)`` of the input, the rating matrix it models
        (None unless ``matrix``) and each system's connected component (None: one component), or DesignError.
    size : callable
        ``size(rd)``: ``(observations, prompts, local variables per prompt)`` of its data, for the cost estimate.
    seconds : tuple of float
        The cost model's (compiling the mode's programs, optimiser seconds per observation, compiling the
        Hessian products) (:func:`lib.ranking.budget.estimate_cost`); for a likelihood with its own Laplace fit
        (``laplace``): (compiling or loading its loops, seconds per observation of the search, of the last pass,
        which gives the Hessian).
    observations : str
        ``"module:function"`` turning its :class:`lib.ranking.data.RankingData` into
        :class:`lib.ranking.model.Observations`, imported on use.
    terms : str
        ``"module:function"`` of its model terms, called inside the model's context as ``terms(obs, skill,
        prompt, intransitivity=, position_bias=, annotator_effect=)`` and giving the location, the thresholds
        and each observation's row of them (:func:`lib.ranking.model.build_ranking`), imported on use.
    notes : tuple of str
        Said with every leaderboard of this likelihood.
    laplace : str
        ``"module:function"`` of its own MAP + Laplace fit with the prompt variables integrated out exactly,
        imported on use, or empty (the full model's, :mod:`lib.inference.laplace`). Called as
        ``laplace(obs, settings, fixed_alpha)`` (:class:`lib.ranking.model.Observations`,
        :class:`lib.ranking.fit.RankSettings`) when the fit runs the Laplace sampler; it gives ``(fit, note)``:
        ``fit(settings, tracker)`` returning :class:`lib.inference.samplers.Draws` (no PyMC model built;
        :attr:`lib.inference.settings.LaplaceSettings.exact_fit`), or None where it does not apply, and what the
        fit says of it.
    """

    name: str
    help: str
    unit: str
    paired: bool
    reads: tuple[str, ...]
    default_for: tuple[str, ...]
    refusal: str
    per_vote: bool
    severity: bool
    matrix: bool
    check: Callable[[pd.DataFrame], None]
    design: Callable[[Any, list[str], pd.DataFrame | None], tuple[Any, pd.Series | None]]
    size: Callable[[RankingData], tuple[int, int, int]]
    seconds: tuple[float, float, float]
    observations: str
    terms: str
    notes: tuple[str, ...] = ()
    laplace: str = ""

    def load(self, part: str) -> Callable[..., Any]:
        """The function named by ``observations``, ``terms`` or ``laplace`` (``part``), imported."""
        module, _, name = getattr(self, part).partition(":")
        return getattr(importlib.import_module(module), name)


def _any(table: pd.DataFrame) -> None:
    """No check: whatever the judgments, they can be modelled (cells: :func:`_cells_design` checks its matrix)."""


def _no_tie_only(votes: pd.DataFrame) -> None:
    if (votes["winner"] == "tie").all():
        raise DesignError("every vote is a tie: the votes cannot tell any system apart")


def _no_equal_scores(ratings: pd.DataFrame) -> None:
    if ratings["score"].nunique() < 2:
        raise DesignError("every score is the same: the ratings cannot tell any system apart")


def _votes_design(data, systems: list[str], votes: pd.DataFrame | None) -> tuple[Any, pd.Series | None]:
    from lib.ranking.data import comparison_components

    assert votes is not None  # the votes likelihood has votes
    return None, comparison_components(systems, votes["system_a"], votes["system_b"])


def _cells_design(data, systems: list[str], votes: pd.DataFrame | None) -> tuple[Any, pd.Series | None]:
    from lib.ranking.data import comparison_components

    matrix = data.matrix
    if not (matrix.n_votes > 0).any():
        raise DesignError(
            "no pair of systems was judged on the same prompt: the cells likelihood has "
            "nothing to model; use the ratings or votes likelihood"
        )
    judged = matrix.comparisons[(matrix.n_votes > 0).any(axis=1)]
    return matrix, comparison_components(systems, judged["system_a"], judged["system_b"])


def _ratings_design(data, systems: list[str], votes: pd.DataFrame | None) -> tuple[Any, pd.Series | None]:
    # Ratings link every system through the prompt effects' shared distribution: one component.
    return None, None


def _votes_size(rd: RankingData) -> tuple[int, int, int]:
    assert rd.votes is not None  # the votes likelihood has votes
    return len(rd.votes), rd.votes["prompt_id"].nunique(), 1


def _cells_size(rd: RankingData) -> tuple[int, int, int]:
    assert rd.matrix is not None  # the cells likelihood has its matrix
    return int((rd.matrix.n_votes > 0).sum()), rd.matrix.u.shape[1], 1 + (len(rd.matrix.categories) - 1) // 2


def _ratings_size(rd: RankingData) -> tuple[int, int, int]:
    assert rd.ratings is not None  # the ratings likelihood has its scores
    return len(rd.ratings), rd.ratings["prompt_id"].nunique(), 2


RATINGS_CALIBRATION_NOTE = (
    "Null calibration of the ratings likelihood: with two equal systems on 40 prompts it declared one better "
    "(P(best) above 0.975) in about 6% of simulated studies with one score a (prompt, system) cell, and in 4-9% "
    "with three, against 5% nominal; the maximum-likelihood fit of the simulating model does the same at 40 "
    "prompts, and both come closer to 5% with more prompts (bench/bench_null_calibration_rank.py, "
    "docs/leaderboard.md)."
)
"""Said with every ratings-likelihood leaderboard: its measured null calibration (issue 16)."""

LIKELIHOODS: dict[str, Likelihood] = {
    spec.name: spec
    for spec in (
        Likelihood(
            "cells",
            "net rating per (system pair, prompt), the graded response model of the Abilities page",
            unit="cell",
            paired=True,
            reads=("votes", "scores"),
            default_for=(),
            refusal="",
            per_vote=False,
            severity=False,
            matrix=True,
            check=_any,
            design=_cells_design,
            size=_cells_size,
            seconds=(11.0, 1.2e-4, 1.6),  # per judgment: as votes (issue 17)
            observations="lib.ranking.model:cell_observations",
            terms="lib.ranking.model:paired_terms",
        ),
        Likelihood(
            "votes",
            "one outcome per vote (A better / tie / B better): sparse designs, arenas (default for votes)",
            unit="vote",
            paired=True,
            reads=("votes",),
            default_for=("votes",),
            refusal="the votes likelihood needs pairwise votes; these are ratings: use ratings or cells",
            per_vote=True,
            severity=False,
            matrix=False,
            check=_no_tie_only,
            design=_votes_design,
            size=_votes_size,
            # the quadrature fit's (issue 35; bench/bench_rank_cost.py, 2026-11-28 at load 1.5-3.6, adaptive nodes,
            # 50 systems x 20,000 prompts): its loops loaded from numba's cache on disk in 0.01 s (the first run after
            # an install compiles them, 4-30 s, not counted); the search, its Gram matrices aside, 1.2e-6 s a vote
            # (0.9-1.5 s on 500,000 votes, 1.5 s on 1,000,000, 2.5 s on 2,000,000; 100,000 votes on as many prompts
            # take more Newton steps: 0.7 s); the last pass 2e-7 s a vote (0.14-0.35 s on 500,000, 0.48 s on 2,000,000)
            seconds=(0.05, 1.2e-6, 2e-7),
            observations="lib.ranking.model:vote_observations",
            terms="lib.ranking.model:paired_terms",
            laplace="lib.ranking.marginal:laplace_fit",
        ),
        Likelihood(
            "ratings",
            "each score of a system on a prompt, with a prompt effect (and, as an option, the annotator's "
            "severity): needs no pairing (default for ratings)",
            unit="score",
            paired=False,
            reads=("scores",),
            default_for=("scores",),
            refusal="the ratings likelihood needs one score per system and prompt; these are votes: use votes or cells",
            per_vote=False,
            severity=True,
            matrix=False,
            check=_no_equal_scores,
            design=_ratings_design,
            size=_ratings_size,
            # the quadrature fit's (issue 35; bench/bench_rank_cost.py, 2026-11-28 at load 8-11, idle-equivalent):
            # nothing compiled; the search 4.9e-4 s a score on 20 x 200 x 2 scores a cell (alpha_j free: 225 nodes a
            # prompt), 8.5e-5 on HANNA (alpha_j = 1: 15 nodes), taken between; the last pass 2.9e-5
            seconds=(0.0, 2.4e-4, 2.4e-5),
            observations="lib.ranking.model:score_observations",
            terms="lib.ranking.model:ratings_terms",
            notes=(RATINGS_CALIBRATION_NOTE,),
            laplace="lib.ranking.marginal_ratings:laplace_fit",
        ),
    )
}
"""The registry of the ranking model's likelihoods, in the order they are offered."""


def likelihood_spec(name: str) -> Likelihood:
    """``LIKELIHOODS[name]``, or SettingsError naming the likelihoods."""
    if name not in LIKELIHOODS:
        raise SettingsError(f"unknown likelihood '{name}'; choose one of {', '.join(LIKELIHOODS)}")
    return LIKELIHOODS[name]


def default_likelihood(has_votes: bool) -> Likelihood:
    """The likelihood of judgments given as votes (``has_votes``) or as scores when none is chosen."""
    kind = "votes" if has_votes else "scores"
    return next(spec for spec in LIKELIHOODS.values() if kind in spec.default_for)


def of_unit(unit: str) -> Likelihood:
    """The likelihood whose observations are ``unit`` (:attr:`lib.ranking.model.Observations.unit`)."""
    return next(spec for spec in LIKELIHOODS.values() if spec.unit == unit)


def asked(name: str | None) -> Likelihood | None:
    """The spec of a likelihood the settings name, None when they leave it to the data (or name none known:
    :func:`lib.ranking.data.ranking_data` refuses those)."""
    return None if name is None else LIKELIHOODS.get(name)
