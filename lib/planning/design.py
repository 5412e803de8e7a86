"""What a plan is asked about: the assumptions about the world, the candidate designs, and the
registries of analyses and prompt-choice strategies (light: no pymc, no pandas at import)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from lib.errors import SettingsError
from lib.irt.settings import LOG_ALPHA_PRIOR_SD, FitSettings
from lib.planning.components import Components, conditional_theta
from lib.selection.strategies import planned_strategies


@dataclass(frozen=True)
class Analysis:
    """One way of analysing a simulated study.

    Attributes
    ----------
    name, help : str
        What ``--analyses`` and the page call it, and one line about it.
    run : str
        ``"module:function"`` imported on use; called as ``run(study)`` with a
        :class:`lib.planning.simulate.Study`, it returns a
        :class:`lib.planning.analyses.Result` (per comparison: whether the 95% interval excludes
        0, the estimate, the interval width).
    votes_only : bool
        Needs ordered categories (not the ``normal`` response model).
    default : bool
        Planned when the user names no analyses (the command and the page: :func:`lib.planning.grid.default_analyses`).
    seconds_per_cell, seconds_per_comparison : float
        Measured fitting cost on one core of the 2-core machine, per (comparison, prompt) cell and per
        comparison (``grm_map``: 52 ms for the benchmark's 1,000 cells; ``lmm``: about 0.2 ms a comparison),
        for a plan's time estimate (:func:`lib.planning.power.estimate_seconds`).

    Every analysis is run on the null twins of a plan's studies too (the comparisons of the stated size at
    theta 0, :func:`lib.planning.simulate.simulate_study`), which measures its real false-detection rate under
    the design at its nominal 5% level and the threshold that would hold 5% (:func:`lib.planning.power.plan`).
    """

    name: str
    help: str
    run: str
    votes_only: bool = False
    default: bool = True
    seconds_per_cell: float = 0.0
    seconds_per_comparison: float = 0.0


ANALYSES: dict[str, Analysis] = {
    a.name: a
    for a in (
        Analysis(
            "grm_map",
            "the project's graded response model, MAP item parameters, theta by quadrature "
            "(lib.irt.map.fit_map); its nominal interval ignores the uncertainty of the MAP item "
            "parameters (10-13% false detections at 5%): valid only with the threshold the plan "
            "calibrates under the null (calibration.csv); not a default (docs/planner.md)",
            "lib.planning.analyses:grm_map",
            votes_only=True,
            default=False,
            seconds_per_cell=4e-5,
        ),
        Analysis(
            "grm_bank",
            "the GRM with the calibrated bank's alpha and b, theta by quadrature per comparison",
            "lib.planning.analyses:grm_bank",
            votes_only=True,
        ),
        Analysis("t_test", "paired t-test on the mean rating difference per prompt", "lib.planning.analyses:t_test"),
        Analysis(
            "wilcoxon",
            "Wilcoxon signed-rank test on the mean rating difference per prompt (no interval; the t-test's "
            "rank twin, not a default)",
            "lib.planning.analyses:wilcoxon",
            default=False,
        ),
        Analysis(
            "sign_test",
            "exact sign test on the pairwise votes (ties left out)",
            "lib.planning.analyses:sign_test",
        ),
        Analysis(
            "lmm",
            "linear mixed model of the judgments with crossed prompt and annotator random effects, "
            "fitted by maximum likelihood, Wald z at 1.96 (lme4's lmer as Card et al. 2020 ran it); with few "
            "annotators it underestimates their variance and declares differences that are not there",
            "lib.planning.analyses:lmm",
            seconds_per_comparison=3e-4,
        ),
        Analysis(
            "lmm_reml",
            "the same mixed model fitted by REML, t-test with Satterthwaite's degrees of freedom "
            "(lmerTest's default test)",
            "lib.planning.analyses:lmm_reml",
            seconds_per_comparison=2e-4,
        ),
    )
}
"""The analysis registry, name -> :class:`Analysis`."""

GRM_ANALYSES = ("grm_map", "grm_bank")
"""The analyses a NUTS fit of the GRM is compared with (:func:`lib.planning.nuts.nuts_check`)."""

NUTS_CHECK_SETTINGS = FitSettings(chains=2, draws=500, tune=500)
"""The NUTS check's default: short chains, enough to compare 95% intervals of theta, not for a
reported fit."""

PLANNED_STRATEGIES = planned_strategies()
"""The prompt-choice strategies a planned study can use, name -> help: the ones of the selection registry
(:data:`lib.selection.strategies.STRATEGIES`) that draw from a bank's discriminations alone."""

RESPONSES = {
    "votes": "each annotator gives an ordered judgment drawn from the GRM (A better / tie / B better)",
    "normal": "each annotator gives a difference score ~ N(theta, 1) (the t-test's textbook model)",
}
"""Response models of the simulated annotators, name -> help text."""


@dataclass(frozen=True)
class Preset:
    """Documented variance components of a published simulation, for studies without a pilot.

    Card et al. 2020 ("With Little Power Comes Great Responsibility", EMNLP; their ``power_sim.R``)
    simulate Likert ratings ``y = b0 + beta m + w_k + m v_k + p_j + m q_j + e`` with the two systems
    coded ``m = -1, +1`` (so ``beta`` is half the mean difference), worker and item intercepts and
    slopes, residual SD ``rating_sd``; every worker rates every item for both systems. The paired
    difference of one worker on one item is ``2 beta + 2 v_k + 2 q_j + (e1 - e2)``: on the planner's
    normal model (residual SD 1) that is ``theta = sqrt(2) beta / rating_sd``, ``annotator_sd =
    sqrt(2) sd(v) / rating_sd``, ``item_sd = sqrt(2) sd(q) / rating_sd`` (:meth:`effect`).

    Attributes
    ----------
    name, help : str
    slope_sd_item, slope_sd_worker, rating_sd : float
        The published SDs of the item and worker slopes and of the residual (rating units).
    """

    name: str
    help: str
    slope_sd_item: float
    slope_sd_worker: float
    rating_sd: float

    @property
    def item_sd(self) -> float:
        """:attr:`Assumptions.item_sd` on the normal model."""
        return float(np.sqrt(2) * self.slope_sd_item / self.rating_sd)

    @property
    def annotator_sd(self) -> float:
        """:attr:`Assumptions.annotator_sd` on the normal model."""
        return float(np.sqrt(2) * self.slope_sd_worker / self.rating_sd)

    def effect(self, beta: float) -> float:
        """The planner's effect (theta on the normal model) of the published coefficient ``beta``."""
        return float(np.sqrt(2) * beta / self.rating_sd)

    def assumptions(self, effect: float, **others) -> Assumptions:
        """Stated assumptions with this preset's components on the normal model (``others`` as
        :class:`Assumptions`, e.g. ``n_systems``)."""
        return Assumptions(
            effect=effect, response="normal", item_sd=self.item_sd, annotator_sd=self.annotator_sd, **others
        )


PRESETS: dict[str, Preset] = {
    p.name: p
    for p in (
        Preset(
            "card2020_high",
            "Card et al. 2020's high-variance Likert setting (item slope SD 0.14, worker slope SD "
            "0.11, residual SD 0.26)",
            0.14,
            0.11,
            0.26,
        ),
        Preset(
            "card2020_low",
            "Card et al. 2020's low-variance Likert setting (item slope SD 0.13, worker slope SD "
            "0.04, residual SD 0.16)",
            0.13,
            0.04,
            0.16,
        ),
    )
}
"""Variance-component presets, name -> :class:`Preset` (``--preset``, the page's choice)."""


@dataclass
class PilotBank:
    """What a pilot study tells the planner (:func:`assumptions_from_pilot`), at the level of one
    judgment: one vote of one annotator for pilots of votes, one cell for pilots of ratings.

    Attributes
    ----------
    theta : ndarray, shape (I,)
        Abilities of the pilot's I comparisons (MAP, logits of one judgment): the simulated truth.
    pairs : ndarray, shape (I, 2), int
        System index of ``system_a`` and ``system_b`` of each comparison.
    systems : ndarray, shape (S,), str
        System names, by index.
    alpha : ndarray, shape (J,)
        Discrimination of each pilot prompt (the bank prompts are chosen from).
    b : ndarray, shape (J, K-1)
        Its thresholds (logits).
    categories : ndarray, shape (K,)
        The values of one judgment, e.g. -1, 0, 1 (A better, tie, B better) or -3..3.
    prompt_ids : ndarray, shape (J,), str
    informed : ndarray, shape (J,), bool
        Whether the pilot informs the prompt's alpha (contraction of log alpha at least
        :data:`lib.irt.contraction.UNINFORMED_BELOW`): ``top_alpha`` ranks only these by alpha.
    counts : ndarray, shape (I, J, K)
        The pilot's judgments per cell and value (for the simulator check).
    level : str
        ``"vote"`` (each judgment one annotator's vote) or ``"cell"`` (one judgment per cell).
    components : lib.planning.components.Components
        Prompt x comparison and annotator x comparison SDs estimated from the pilot's votes (NaN where
        it cannot tell).
    truth : ndarray, shape (I,), optional
        The thetas a plan simulates from when judgments have effects of their own (set by
        :func:`pilot_assumptions`, :func:`lib.planning.components.conditional_theta`); None: ``theta``.
    """

    theta: np.ndarray
    pairs: np.ndarray
    systems: np.ndarray
    alpha: np.ndarray
    b: np.ndarray
    categories: np.ndarray
    prompt_ids: np.ndarray
    informed: np.ndarray
    counts: np.ndarray
    level: str
    components: Components
    truth: np.ndarray | None = None

    def true_theta(self) -> np.ndarray:
        """The simulated studies' thetas, shape (I,): :attr:`truth`, else the fit's ``theta``."""
        return self.theta if self.truth is None else self.truth

    def per_cell(self) -> float:
        """Median number of judgments in the pilot's judged cells (e.g. 3 workers per item)."""
        n = self.counts.sum(axis=-1)
        return float(np.median(n[n > 0])) if (n > 0).any() else 0.0

    def pair_names(self) -> list[tuple[str, str]]:
        """(system_a, system_b) of every comparison."""
        return [(str(self.systems[a]), str(self.systems[b])) for a, b in self.pairs]


MAX_EFFECT = 10.0
"""Largest effect, logits: a difference of 10 logits is a 99.995% win rate; beyond it the GRM's
probabilities round to 0 and 1 and the planner would answer another question."""

RANGES = {
    "effect": (0.0, MAX_EFFECT, "the effect (logits)"),
    "skill_sd": (0.0, MAX_EFFECT, "the SD of skills (logits)"),
    "item_sd": (0.0, MAX_EFFECT, "the SD of the prompt x comparison effect (logits)"),
    "annotator_sd": (0.0, MAX_EFFECT, "the SD of the annotator x comparison effect (logits)"),
    "log_alpha_sd": (0.0, 3.0, "the SD of log alpha"),
    "tie_rate": (0.0, 0.99, "the tie rate"),
    "bank_size": (1, 1_000_000, "the prompt bank size"),
    "n_systems": (2, 100_000, "the number of systems compared"),
}
"""The range of every numeric assumption, checked before anything runs: name -> (low, high, what)."""

MAX_MINUTES = 30.0
"""Default bound of a plan's estimated time on one core (``--max-minutes``), checked before it starts."""


@dataclass
class Assumptions:
    """What the planner assumes about the systems, prompts and annotators.

    Attributes
    ----------
    n_systems : int
        Systems compared (all pairs are comparisons unless ``comparisons`` is set).
    effect : float
        Smallest difference worth detecting, theta in logits (Sedoc & Ungar's scale). Without
        ``skill_sd``, skills are spaced ``effect`` apart, so neighbours differ by exactly it.
    skill_sd : float
        If > 0, skills are drawn ~ N(0, skill_sd) per simulated study instead; power is then over
        the comparisons whose true difference is at least ``effect``.
    comparisons : int, optional
        Study only this many comparisons: neighbours in skill first, then pairs two apart, ...
    log_alpha_sd : float
        Spread of prompt discrimination, log alpha ~ N(0, log_alpha_sd).
    tie_rate : float
        Share of ties between equally good systems on a prompt of alpha = 1 (sets the GRM
        thresholds: b = logit((1 + tie_rate) / 2)); with alpha it sets annotator agreement.
    bank_size : int
        Prompts in the bank that ``top_alpha`` and ``random`` choose from (stated assumptions).
    response : str
        A key of :data:`RESPONSES`.
    pilot : PilotBank, optional
        Set by :func:`assumptions_from_pilot`: truths and bank come from the pilot, and
        ``n_systems``, ``skill_sd``, ``log_alpha_sd``, ``tie_rate`` and ``bank_size`` are unused.
    pairs : tuple of (str, str), optional
        With a pilot: the pairs of systems the study must detect (power is the smallest of theirs);
        None: every pair whose pilot difference is at least ``effect``.
    item_sd : float
        SD of the prompt x comparison effect (logits): on each prompt the difference of a pair is
        ``theta + e``, ``e ~ N(0, item_sd)``, shared by the annotators of that cell, so prompts differ in
        which system is better and more annotators per prompt do not average it away (the variance
        component of Card et al. 2020's mixed-effects simulation). A stated assumption, with a pilot
        too unless estimated from it (:func:`lib.planning.components.estimate_components`).
    annotator_sd : float
        SD of the annotator x comparison effect (same scale): annotator k of a design prefers B by
        ``a_ik ~ N(0, annotator_sd)`` on every prompt. A design's annotators are the same people for
        all its prompts (fully crossed, as in Card et al. 2020), so their mean preference does not
        average away over prompts, only over annotators. With it the usual tests declare differences
        that are not there: the plan measures how often (``false_detection``, :func:`lib.planning.power.plan`).
    """

    n_systems: int = 2
    effect: float = 0.3
    skill_sd: float = 0.0
    comparisons: int | None = None
    log_alpha_sd: float = LOG_ALPHA_PRIOR_SD
    tie_rate: float = 0.2
    bank_size: int = 200
    response: str = "votes"
    pilot: PilotBank | None = field(default=None, repr=False)
    pairs: tuple[tuple[str, str], ...] | None = None
    item_sd: float = 0.0
    annotator_sd: float = 0.0

    def validate(self) -> None:
        """Check every value against its range (:data:`RANGES`) before anything is simulated.

        Raises
        ------
        SettingsError
            A value out of range, named with the allowed range.
        """
        for name, (low, high, what) in RANGES.items():
            value = getattr(self, name)
            if not (np.isfinite(value) and low <= value <= high):
                raise SettingsError(f"{what} must be between {low:g} and {high:g} (got {value:g})")
        if self.comparisons is not None and self.comparisons < 1:
            raise SettingsError(f"comparisons must be at least 1 (got {self.comparisons})")
        if self.pairs is not None and self.pilot is None:
            raise SettingsError("pairs of systems to detect are named from a pilot; stated assumptions have none")
        if self.pilot is not None:
            known = set(self.pilot.pair_names())
            unknown = [p for p in self.pairs or () if p not in known and p[::-1] not in known]
            if unknown:
                raise SettingsError(f"the pilot has no comparison of {unknown[0][0]} and {unknown[0][1]}")
            if not self.targets().any():
                top = float(np.abs(self.pilot.theta).max()) if len(self.pilot.theta) else 0.0
                raise SettingsError(
                    f"no pair of the pilot differs by the effect {self.effect:g} or more (the "
                    f"largest difference is {top:.3g} logits): lower the effect or name the pairs"
                )
        if self.response not in RESPONSES:
            raise SettingsError(f"unknown response model '{self.response}'; choose one of {', '.join(RESPONSES)}")
        if self.pilot is not None and self.response != "votes":
            raise SettingsError("a pilot's judgments are ordered categories: use the 'votes' response model")

    def bank(self) -> int:
        """Prompts a design can choose from: the pilot's, else :attr:`bank_size`."""
        return len(self.pilot.alpha) if self.pilot is not None else self.bank_size

    def targets(self) -> np.ndarray:
        """With a pilot, which of its comparisons power is read on (shape (I,), bool): the named
        ``pairs``, else those whose pilot difference is at least ``effect``."""
        assert self.pilot is not None, "targets are read on a pilot's comparisons"
        if self.pairs is None:
            return np.abs(self.pilot.theta) >= self.effect
        wanted = set(self.pairs) | {p[::-1] for p in self.pairs}
        return np.array([p in wanted for p in self.pilot.pair_names()], dtype=bool)


@dataclass(frozen=True)
class Design:
    """One candidate study: prompts per comparison, annotators per (comparison, prompt), how the
    prompts are chosen (:data:`PLANNED_STRATEGIES`) and how the study is analysed (:data:`ANALYSES`)."""

    prompts: int
    annotators: int
    strategy: str = "random"
    analysis: str = "grm_bank"

    def validate(self, assumptions: Assumptions) -> None:
        """Check the design against the registries and the assumptions.

        Raises
        ------
        SettingsError
            Unknown strategy or analysis, fewer than 1 prompt or annotator, more prompts than the
            bank holds, or an analysis that needs ordered categories on the normal model.
        """
        if self.strategy not in PLANNED_STRATEGIES:
            raise SettingsError(
                f"unknown prompt strategy '{self.strategy}'; choose one of {', '.join(PLANNED_STRATEGIES)}"
            )
        if self.analysis not in ANALYSES:
            raise SettingsError(f"unknown analysis '{self.analysis}'; choose one of {', '.join(ANALYSES)}")
        if self.prompts < 1 or self.annotators < 1:
            raise SettingsError(
                f"a design needs at least 1 prompt and 1 annotator (got {self.prompts}, {self.annotators})"
            )
        bank = assumptions.bank()
        if self.prompts > bank:
            raise SettingsError(f"{self.prompts} prompts asked but the prompt bank holds {bank}")
        if ANALYSES[self.analysis].votes_only and assumptions.response != "votes":
            raise SettingsError(
                f"the '{self.analysis}' analysis needs ordered judgments, not the "
                f"'{assumptions.response}' response model"
            )


def assumptions_from_pilot(
    data,
    *,
    effect: float = Assumptions.effect,
    pairs: tuple[tuple[str, str], ...] | None = None,
    item_sd: float | None = None,
    annotator_sd: float | None = None,
) -> Assumptions:
    """Assumptions whose truth and prompt bank come from a pilot study (:func:`fit_pilot`).

    Parameters
    ----------
    data : lib.inputs.AnalysisInput
        The pilot.
    effect : float
        Smallest difference worth detecting, logits of one judgment.
    pairs : tuple of (str, str), optional
        The pairs the study must detect (:attr:`Assumptions.pairs`).
    item_sd, annotator_sd : float, optional
        :attr:`Assumptions.item_sd`, :attr:`Assumptions.annotator_sd`; None: the pilot's estimate
        (:attr:`PilotBank.components`), 0 where it has none.

    Returns
    -------
    Assumptions
        With ``pilot`` set; ``n_systems`` is the pilot's.

    Raises
    ------
    SettingsError
        See :func:`fit_pilot`; a named pair is not in the pilot, or no pair differs by the effect.
    """
    return pilot_assumptions(fit_pilot(data), effect=effect, pairs=pairs, item_sd=item_sd, annotator_sd=annotator_sd)


def pilot_assumptions(
    pilot: PilotBank,
    *,
    effect: float = Assumptions.effect,
    pairs: tuple[tuple[str, str], ...] | None = None,
    item_sd: float | None = None,
    annotator_sd: float | None = None,
) -> Assumptions:
    """:class:`Assumptions` of a fitted pilot (:func:`fit_pilot`), validated; a variance component given as
    None is the pilot's estimate (0 where it has none). With components, the pilot's :attr:`PilotBank.truth`
    is the thetas they imply (:func:`lib.planning.components.conditional_theta`)."""

    def estimated(value: float | None, found: float) -> float:
        return value if value is not None else (found if np.isfinite(found) else 0.0)

    item_sd, annotator_sd = (
        estimated(item_sd, pilot.components.item_sd),
        estimated(annotator_sd, pilot.components.annotator_sd),
    )
    if item_sd > 0 or annotator_sd > 0:  # the fit's thetas are marginal over these effects: simulate from theirs
        truth = conditional_theta(
            pilot.theta,
            pilot.alpha,
            pilot.b,
            pilot.categories,
            pilot.counts.sum(axis=-1),
            float(np.hypot(item_sd, annotator_sd)),
        )
        pilot = replace(pilot, truth=truth)
    out = Assumptions(
        n_systems=len(pilot.systems),
        effect=effect,
        pilot=pilot,
        item_sd=item_sd,
        annotator_sd=annotator_sd,
        pairs=None if pairs is None else tuple((str(x), str(y)) for x, y in pairs),
    )
    out.validate()
    return out


def fit_pilot(data) -> PilotBank:
    """The planner's one pilot-fit rule, the same for the page and the command (``docs/planner.md``).

    The GRM is fitted (MAP) to the pilot's judgments at the level they were recorded: each annotator's
    vote for pilots of votes (pairwise, best-worst, ranking; :func:`lib.planning.pilot.fit_votes`), each
    cell otherwise (:func:`lib.irt.map.fit_map`). One simulated annotator then gives one such judgment,
    so annotators in a plan are people and its cost counts them. The truth of every simulated study is
    the pilot's MAP thetas; prompts are chosen from the pilot's prompts with their alpha and b. A fit of
    the Abilities page (of the net ratings) is not used: its one "annotator" would be a whole cell.

    Parameters
    ----------
    data : lib.inputs.AnalysisInput
        The pilot (its rating matrix, comparisons and, for votes, its judgments).

    Returns
    -------
    PilotBank

    Raises
    ------
    SettingsError
        The pilot is item-response data (persons and items, no system comparisons).
    """
    from lib.irt.contraction import UNINFORMED_BELOW
    from lib.irt.map import fit_map
    from lib.irt.settings import default_cutpoints
    from lib.planning.components import estimate_components
    from lib.planning.pilot import cell_contraction, fit_votes, pilot_votes, vote_counts

    if default_cutpoints(data.fmt) != "antisymmetric":
        raise SettingsError(f"the planner needs a pilot of system comparisons, not '{data.fmt}' data")
    rm = data.matrix
    votes = pilot_votes(data)
    counts = vote_counts(votes, rm.shape) if votes is not None else None
    if counts is not None:
        found = fit_votes(counts)
        theta, alpha, b, informed = found["theta"], found["alpha"], found["b"], found["informed"]
        categories, level = np.array([-1, 0, 1]), "vote"
    else:
        codes, n_categories = rm.codes(), len(rm.categories)
        point = fit_map(codes, n_categories)
        theta, alpha, b = point.theta, point.alpha, point.b
        informed = cell_contraction(codes, n_categories, point) >= UNINFORMED_BELOW
        categories, level = np.asarray(rm.categories), "cell"
        counts = (codes[..., None] == np.arange(n_categories)).astype(float)
    systems = sorted(set(rm.comparisons["system_a"].astype(str)) | set(rm.comparisons["system_b"].astype(str)))
    index = {s: k for k, s in enumerate(systems)}
    pair_index = np.array(
        [
            [index[a], index[b_]]
            for a, b_ in zip(
                rm.comparisons["system_a"].astype(str), rm.comparisons["system_b"].astype(str), strict=True
            )
        ]
    )
    theta, alpha, b = (np.asarray(x, float) for x in (theta, alpha, b))
    components = estimate_components(votes, theta, alpha, b, categories)
    return PilotBank(
        theta=theta,
        pairs=pair_index,
        systems=np.array(systems),
        alpha=alpha,
        b=b,
        categories=categories,
        prompt_ids=rm.prompt_ids,
        informed=np.asarray(informed, dtype=bool),
        counts=counts,
        level=level,
        components=components,
    )


def pilot_summary(pilot: PilotBank) -> str:
    """What the planner took from a pilot, in one paragraph (the command prints it, the page shows it)."""
    unit = (
        "one vote of one annotator"
        if pilot.level == "vote"
        else "one cell (the pilot records one judgment per comparison and prompt)"
    )
    informed = int(pilot.informed.sum())
    return (
        f"pilot fit: the GRM on its judgments, each {unit}; {pilot.per_cell():g} judgments per cell in the "
        f"pilot; a simulated annotator gives one judgment, so annotators are people and cost counts them. "
        f"{informed} of {len(pilot.informed)} prompts have a discrimination the pilot informs (contraction of "
        "log alpha at least 0.5): top_alpha ranks only those by alpha and takes the others at random, so no "
        "saving is claimed from a prior-only alpha."
    )


def pilot_key(data) -> str:
    """Hash of what :func:`fit_pilot` reads: the rating matrix and, for votes, every vote (two vote tables
    with the same net ratings can differ in their ties)."""
    import hashlib

    import pandas as pd

    from lib.irt.fit import data_key

    h = hashlib.sha256(data_key(data.matrix).encode())
    if data.judgments is not None:
        h.update(pd.util.hash_pandas_object(data.judgments.votes, index=False).to_numpy().tobytes())
        h.update(str(data.criterion).encode())
    return h.hexdigest()[:20]
