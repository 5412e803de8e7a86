"""Fitting the ranking model (:mod:`lib.ranking.model`) through the one fit pipeline
(:func:`lib.inference.pipeline.run_fit`): this module holds the ranking's part of a fit.

Samplers: the registry's made for the leaderboard (:func:`lib.inference.settings.samplers_for`,
``"ranking"``): NUTS (numpyro, pymc, nutpie) or MAP + Laplace (:mod:`lib.inference.laplace`, the
default), with the prompt variables (:data:`lib.ranking.model.LOCAL`) integrated out: the globals
sit at the mode of their Laplace-approximated marginal, whose curvature is their precision (the
joint mode over-stated gamma by 8-17% in small arenas, and in an arena of 100 systems x 500,000
votes it stretched the skills by 8.5%, their 95% intervals covering 31% of the simulated skills;
``docs/leaderboard.md``); above :data:`MARGINAL_MAX_OBS` paired judgments the precision is the Schur
complement at that mode. For ratings the joint mode put the prompt effects' scale sigma_eta at 3.9
where NUTS gave 0.77 (simulated unpaired ratings, one system per prompt), and the skills' SDs came
out 1.5-2.5 times NUTS's; at the marginal mode they are within 20%. The votes and the ratings integrate their
prompt variables out exactly instead (their likelihoods' own Laplace fits, :func:`_exact_laplace`; on those
ratings sigma_eta 0.95 where NUTS gave 0.95 and the full model's marginal mode 0.76, and the skills' SDs 0.90-0.93
times NUTS's against 0.86-0.89: ``bench/bench_ratings_quadrature.py``). Where a Gaussian at the mode is
not trustworthy the fit falls back to NUTS (:func:`nuts_reason`).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import arviz as az
import numpy as np

from lib.errors import ExactFitError, SettingsError
from lib.inference.diagnostics import Diagnostics, diagnose
from lib.inference.laplace import LaplaceMode, laplace_mode, sample_laplace
from lib.inference.pipeline import FitPlan, run_fit
from lib.inference.progress import FitProgress, Tracker
from lib.inference.samplers import Draws, Problem
from lib.inference.settings import LaplaceSettings, NutsSettings, check_known, samplers_for, sampling_sizes
from lib.inference.store import FitStore, Stored, arrays_from_json, arrays_json, digest_of
from lib.inference.timings import PhaseTimer
from lib.ranking.clusters import CLUSTER_MODES, DEFAULT_CLUSTERING
from lib.ranking.data import AnnotatorDesign, RankingData, annotator_design
from lib.ranking.likelihoods import asked

if TYPE_CHECKING:  # the model module imports pymc: loaded when a fit runs
    from lib.ranking.model import Observations

LAPLACE = "laplace"
"""The MAP + Laplace sampler's name in the registry."""
SAMPLERS = samplers_for("ranking")
"""The samplers of a leaderboard: a live view of the registry :data:`lib.inference.settings.SAMPLERS`."""
MARGINAL_MAX_OBS = 20_000
"""Above this many judgments the globals' precision at the marginal mode is the joint Hessian's Schur
complement there, which leaves out the curvature of the prompt blocks' log-determinant, instead of
the marginal's own curvature: that takes two gradients of the marginal per global variable (150 s
on the 500,000 votes of ``bench/bench_arena.py``), the Schur complement one Hessian (6 s)."""
SCHUR_NOTE = (
    "MAP + Laplace on more than {n:,} judgments: the skills' precision leaves out the curvature "
    "of the prompt variables' integral (intervals 2-4% wider than the marginal's in simulated "
    "arenas, 12% on PandaLM's votes)."
)
SHARED_ALPHA_NOTE = (
    "One score a (prompt, system) cell: every prompt has the same discrimination (alpha_j = 1); a "
    "prompt's own would rest on its few scores and overstate the differences between systems."
)
DEFAULT_SAMPLER = LAPLACE
"""The leaderboard's sampler unless one is chosen, on the page and the command line alike: MAP + Laplace
takes seconds where NUTS takes minutes (hours on an arena), and it agrees with NUTS where it is used
(skills' SDs within 20% on simulated paired and unpaired designs, ``tests/ranking/test_rank_laplace_nuts.py``);
where a Gaussian at the mode is not trustworthy the fit falls back to NUTS and says so (:func:`nuts_reason`)."""
FALLBACK_SAMPLER = "numpyro"
"""The NUTS sampler a Laplace fit falls back to (:func:`nuts_reason`)."""
STORE = FitStore("rankings", model_version=7, thin_dim="prompt")
"""Ranking fits' cache (``lib.io.paths.cache_dir("rankings")``); raise the version when the model or what is
stored with it changes (4: the prompt clustering and its notes; 5: the votes' alpha_j integrated out by
quadrature, :mod:`lib.ranking.marginal`; 6: the ratings' eta_j and alpha_j so, :mod:`lib.ranking.marginal_ratings`;
7: the Laplace route in the posterior's attrs, not the warnings).
Large per-prompt draws (an arena's alpha) are kept thinned, with their exact means
(:func:`lib.inference.store.thinned`): the read-outs use only the means of alpha and b."""


@dataclass
class RankChoices:
    """The ranking model's own choices (:class:`RankSettings`)."""

    likelihood: str | None = None
    sampler: str = DEFAULT_SAMPLER
    baseline: str | None = None
    intransitivity: bool = False
    position_bias: bool = False
    annotator_effect: bool | None = None
    cluster_prompts: str = DEFAULT_CLUSTERING
    annotator_weights: bool = False
    style_control: bool = False
    by_category: bool = False


@dataclass
class RankSettings(NutsSettings, RankChoices):
    """Everything that changes a ranking fit.

    Attributes
    ----------
    likelihood : str, optional
        Key of :data:`lib.ranking.likelihoods.LIKELIHOODS` (None: the data's own, see ``RankingData``).
    sampler : str
        A sampler of :data:`SAMPLERS` (default:
        :data:`DEFAULT_SAMPLER`; Laplace falls back to NUTS where it is not trustworthy, :func:`nuts_reason`).
    baseline : str, optional
        None: skills sum to zero; else this system's skill is 0.
    intransitivity, position_bias : bool
        Add pair deviations (delta, tau) / the first-shown effect gamma.
    annotator_effect : bool or None
        Add annotator severities (zeta, sigma_zeta; the ratings likelihood only). None (the default of
        the page and ``rank``): on where the scores identify them, off otherwise
        (:func:`lib.ranking.data.annotator_design`; :func:`resolve_annotator_effect`).
    annotator_weights : bool
        Weigh each vote by its annotator's Dawid-Skene reliability
        (:func:`lib.judgments.annotator_quality.vote_weights`; the votes likelihood only; off by default).
    cluster_prompts : str
        Prompt-clustered skill intervals (paired likelihoods: :func:`lib.ranking.clusters.prompt_clustering`),
        a key of :data:`lib.ranking.clusters.CLUSTER_MODES` (default:
        :data:`lib.ranking.clusters.DEFAULT_CLUSTERING`); whichever, a fit whose votes are dependent
        within a prompt says so in its warnings.
    style_control : bool
        The votes' style covariates as a linear term (votes likelihood; :mod:`lib.ranking.style`): the data
        need them (:func:`lib.ranking.data.ranking_data` with ``style=True``).
    by_category : bool
        A skill per system and category, shrunk towards its overall skill (votes likelihood;
        :mod:`lib.ranking.categories`): the data need the votes' categories (``ranking_data(..., by_category=True)``).
    chains, draws, tune, seed : int
        NUTS sizes; Laplace draws ``draws`` independent draws as one chain.
    target_ess : int, optional
        A fit run by a sampler that samples to a target (:func:`fitted_sampler`; numpyro) draws until the
        bulk and tail ESS of every reported parameter reach it and their R-hat is at most 1.01,
        ``draws`` per chain at most
        (:class:`lib.inference.settings.NutsSettings`); None: ``draws`` per chain.
    """

    def validate(self) -> None:
        """Raises SettingsError for an unknown or non-posterior sampler, an unknown clustering mode,
        prompt-clustered intervals asked of ratings, annotator severity with a paired likelihood, or
        non-positive sizes."""
        check_known("sampler", self.sampler, SAMPLERS)
        check_known("prompt clustering", self.cluster_prompts, CLUSTER_MODES)
        if not SAMPLERS[self.sampler].posterior:
            raise SettingsError(f"a leaderboard needs posterior draws: the {self.sampler} sampler gives a point")
        spec = asked(self.likelihood)
        if self.cluster_prompts == "on" and spec is not None and not spec.paired:
            raise SettingsError(
                "prompt-clustered intervals are for paired judgments (votes or cells): the ratings "
                "likelihood has its own prompt effect eta"
            )
        if self.annotator_weights and spec is not None and not spec.per_vote:
            raise SettingsError(
                f"annotator weights weigh single votes: the votes likelihood, not {self.likelihood} (a net "
                "rating or a score has no vote to weigh)"
            )
        if self.style_control and spec is not None and not spec.per_vote:
            raise SettingsError(
                f"style control is a covariate of each vote: it needs the votes likelihood, not {self.likelihood}"
            )
        if self.by_category and spec is not None and not spec.per_vote:
            raise SettingsError(f"ranking by category needs the votes likelihood, not {self.likelihood}")
        if self.by_category and self.cluster_prompts == "on":
            raise SettingsError(
                "prompt-clustered intervals widen the overall skills only: they are not offered by category"
            )
        if self.annotator_effect and spec is not None and not spec.severity:
            raise SettingsError(
                f"annotator severity is part of the ratings likelihood, not {self.likelihood}: "
                "paired judgments compare systems within an annotator"
            )
        self.check_sizes()


def resolve_annotator_effect(settings: RankSettings, design: AnnotatorDesign) -> RankSettings:
    """``settings`` with the annotator effect decided: None (the default) becomes ``design.identified``
    (:func:`lib.ranking.data.annotator_design` of the scores fitted), a choice made is kept.

    With raters of severity SD 1 (12 systems, 30 prompts, 12 raters, two a cell) the 95% intervals of the
    fit without the severities held 83% of the true skills (RMS z 1.50; 53% where severe raters leaned
    towards the best systems), of the fit with them 92.5% (91.7%) (``bench/bench_ratings_severity.py``,
    issue 30): where the severities can be identified they are modelled unless the user turns them off."""
    if settings.annotator_effect is not None:
        return settings
    return replace(settings, annotator_effect=design.identified)


def nuts_reason(settings: RankSettings) -> str | None:
    """Why a Laplace fit of these settings is run with NUTS (:data:`FALLBACK_SAMPLER`) instead, or None.

    A Gaussian at the mode cannot describe a hierarchical scale whose effects are global variables
    (not integrated out by :func:`lib.inference.laplace.marginal_mode`): tau near 0 (intransitivity: it reported tau far
    from 0 with no intransitivity), and sigma_zeta of the annotator severities (on simulated unpaired
    ratings of 6 annotators: sigma_zeta 1.77 against NUTS's 0.89 and severity intervals 50% wider;
    at the joint mode every severity came out negative with intervals 3 logits wide), and sigma_category of
    the skills by category (:mod:`lib.ranking.categories`; 6 systems, 4 categories of 80 to 1,500 simulated votes:
    sigma_category 1.16 against NUTS's 0.53, the categories' skill intervals about twice NUTS's).
    """
    if settings.sampler != LAPLACE:
        return None
    if settings.intransitivity:
        return "intransitivity: a Gaussian at the mode cannot describe the pair deviations' scale tau near 0"
    if settings.by_category:
        return (
            "by category: a Gaussian at the mode overstates the categories' spread sigma_category and the width of "
            "the skills' intervals in each category"
        )
    if settings.annotator_effect:
        return (
            "annotator severity: a Gaussian at the mode overstates the severities' scale sigma_zeta and the "
            "width of their intervals"
        )
    return None


def fitted_sampler(settings: RankSettings) -> str:
    """The sampler a fit of these settings runs: ``settings.sampler``, or :data:`FALLBACK_SAMPLER` where
    Laplace is not trustworthy (:func:`nuts_reason`); whether it takes a target ESS is its
    :attr:`lib.inference.settings.Sampler.to_target`."""
    return FALLBACK_SAMPLER if nuts_reason(settings) else settings.sampler


def rank_settings(
    *,
    sampler: str | None = None,
    chains: int | None = None,
    draws: int | None = None,
    tune: int | None = None,
    target_ess: int | None = None,
    seed: int | None = None,
    design: AnnotatorDesign | None = None,
    **choices: Any,
) -> RankSettings:
    """The settings of a leaderboard fit from what the user chose (None: not chosen), by the one rule of
    ``python -m lib rank``: ``choices`` (:class:`RankChoices`' fields: likelihood, baseline, ...) as given,
    the sizes as :func:`lib.inference.settings.sampling_sizes` gives them for the sampler the fit runs
    (:func:`fitted_sampler`: Laplace's NUTS fallback too); nothing chosen: the defaults, which every
    reference test runs.

    ``design`` (:func:`lib.ranking.data.annotator_design_of` the data) decides the default annotator effect
    (None) for the sizes (:func:`resolve_annotator_effect`: modelled severities are fitted by NUTS); the
    settings keep None, so that :func:`lib.ranking.run.rank_systems` decides it again and says so. Without
    ``design`` the default counts as off.

    Raises
    ------
    SettingsError
        A target ESS for a fit whose sampler does not sample to one.
    """
    given: dict[str, Any] = {
        k: v for k, v in (("sampler", sampler), ("chains", chains), ("seed", seed)) if v is not None
    }
    settings = RankSettings(**choices, **given)
    runs = fitted_sampler(resolve_annotator_effect(settings, design or AnnotatorDesign(False, "")))
    return replace(settings, **sampling_sizes("ranking", runs, draws=draws, tune=tune, target_ess=target_ess))


TARGET_ACCEPT_BY_CATEGORY = 0.95
"""NUTS's target acceptance by category: at 0.8 the deviations of a large category, which its votes pin down, left
divergent transitions (2 on simulated votes of 6 systems, categories of 1,200 to 50 votes), and a fit with any is
not used."""
NO_CLUSTER_CHECK_BY_CATEGORY = (
    "Not checked whether votes on the same prompt are dependent (prompt clustering): ranked by category, the "
    "votes compare the skills of their category, and the check reads the overall skills."
)
FALLBACK_NOTE = "MAP + Laplace is not trustworthy here ({reason}): fitted with NUTS ({sampler}) instead."


ROUTE = "route"
"""The posterior attribute holding a fit's :attr:`RankingFit.route`."""


@dataclass
class RankingFit:
    """A fitted ranking model.

    ``idata.posterior``: ``skill`` (chain, draw, system), ``alpha`` (.., prompt), ``b`` (..,
    [prompt,] threshold), and as asked ``tau``, ``delta`` (.., pair), ``gamma``, ``sigma_eta``,
    ``eta`` (.., prompt). ``categories``: labels of the outcome categories. ``mode``: the posterior
    mode of the same variables (Laplace fits only; None for NUTS). ``cache_key``: the entry's name
    in the cache (:meth:`lib.inference.store.FitStore.key`), ``from_cache``: whether the fit was read from it.
    ``route``: how a MAP + Laplace fit of a likelihood with its own Laplace fit was made (:func:`_exact_laplace`).
    """

    idata: az.InferenceData
    diagnostics: Diagnostics
    data: RankingData
    settings: RankSettings
    categories: list[str] = field(default_factory=list)
    mode: dict[str, np.ndarray] | None = None
    cache_key: str = ""
    from_cache: bool = False

    def skill_draws(self) -> np.ndarray:
        """Skill draws, shape (S, K) float64 (S = chains x draws), columns in ``data.systems`` order."""
        skill = self.idata["posterior"]["skill"].sel(system=self.data.systems)
        return skill.stack(sample=("chain", "draw")).transpose("sample", "system").to_numpy().astype(np.float64)

    @property
    def route(self) -> str:
        """How the fit was made, said with its sampler (the command's "fitted with" line, the page's caption,
        ``diagnostics.json``'s ``route``): the votes' quadrature over alpha_j or the full model's Laplace fit and
        why (:mod:`lib.ranking.marginal`); "" for NUTS and likelihoods without a Laplace fit of their own. Kept
        in the posterior's attrs (:data:`ROUTE`), so a fit read from the cache says it too."""
        return str(self.idata["posterior"].attrs.get(ROUTE, ""))


def _request(obs, settings: RankSettings, fixed_alpha: bool, cluster_check: bool = True) -> dict:
    """What a ranking fit answers (its cache entry's request): every field of the observations
    (:func:`lib.inference.store.digest_of`: a field added later is part of it), the settings, ``fixed_alpha``,
    and whether the prompt-clustering check of paired judgments was left out (only then: the other entries
    keep their keys)."""
    run = not obs.paired or cluster_check or settings.cluster_prompts == "on"
    left_out = {} if run else {"cluster_check": False}
    return STORE.request([obs], settings, fixed_alpha=fixed_alpha, **left_out)


def _read(stored: Stored, rd: RankingData, request: dict, settings: RankSettings) -> RankingFit:
    """The fit of a cache entry (:meth:`lib.inference.store.FitStore.load`): LookupError for an entry of other
    systems, ValueError for one whose mode is not finite (a miss, removed)."""
    post = stored.idata["posterior"]
    if post["system"].to_numpy().astype(str).tolist() != [str(s) for s in rd.systems] or not {
        "skill",
        "alpha",
        "b",
    } <= set(post.data_vars):
        raise LookupError("the posterior does not fit this data")
    mode = None if stored.extra["mode"] is None else arrays_from_json(stored.extra["mode"])
    return RankingFit(
        stored.idata,
        stored.diagnostics,
        rd,
        settings,
        list(stored.extra["categories"]),
        mode,
        STORE.key(request),
        from_cache=True,
    )


def _observations(rd: RankingData, settings: RankSettings) -> Observations:
    """The observations a fit of these settings models (:func:`lib.ranking.model.observations`: the style
    covariates only with style control, the categories only by category), refused as :func:`_refuse` says."""
    from lib.ranking.model import observations

    if settings.style_control and rd.style is None:
        raise SettingsError("style control needs the votes' style covariates (ranking_data(..., style=True))")
    if settings.by_category and rd.category is None:
        raise SettingsError("ranking by category needs the votes' categories (ranking_data(..., by_category=True))")
    obs = observations(
        dataclasses.replace(
            rd,
            style=rd.style if settings.style_control else None,
            category=rd.category if settings.by_category else None,
        )
    )
    _refuse(obs, settings)
    return obs


def _refuse(obs: Observations, settings: RankSettings) -> None:
    """Raise :class:`SettingsError` for options these observations cannot take."""
    if settings.cluster_prompts == "on" and not obs.paired:
        raise SettingsError(
            "prompt-clustered intervals are for paired judgments (votes or cells): the ratings "
            "likelihood has its own prompt effect eta"
        )
    if settings.position_bias and not (obs.side != 0).any():
        raise SettingsError("position bias needs to know which system was shown first (a position column)")


def _decided(settings: RankSettings, rd: RankingData) -> RankSettings:
    """``settings`` validated, with the annotator effect decided for these data (:func:`resolve_annotator_effect`)."""
    settings.validate()
    return resolve_annotator_effect(settings, annotator_design(rd.ratings if rd.spec.severity else None))


def _check_clustering(idata, obs: Observations, settings: RankSettings, run: bool, warnings: list[str]) -> None:
    """Whether paired judgments are clustered by prompt (:func:`lib.ranking.clusters.cluster_by_prompt`, when
    ``run`` or asked for), into ``warnings``; by category not run (:data:`NO_CLUSTER_CHECK_BY_CATEGORY`)."""
    if obs.category is not None:
        warnings.append(NO_CLUSTER_CHECK_BY_CATEGORY)
    elif obs.paired and (run or settings.cluster_prompts == "on"):
        from lib.ranking.clusters import cluster_by_prompt

        cluster_by_prompt(idata, obs, settings.cluster_prompts, warnings)


def fit_ranking(
    rd: RankingData,
    settings: RankSettings | None = None,
    *,
    progress: FitProgress | None = None,
    fixed_alpha: bool = False,
    use_cache: bool = True,
    timer: PhaseTimer | None = None,
    cluster_check: bool = True,
) -> RankingFit:
    """Fit the ranking model (:mod:`lib.ranking.model`) to the data of one likelihood; cached on
    disk by a hash of the observations and the settings (:func:`_request`).

    Parameters
    ----------
    rd : RankingData
    settings : RankSettings, optional
        Its likelihood must be None or ``rd.likelihood``; an annotator effect of None is decided from the
        scores (:func:`resolve_annotator_effect`), and the fit's ``settings`` hold the decision.
    progress : callable, optional
        ``progress(fraction, message)``, called in the caller's thread with non-decreasing fractions.
    fixed_alpha : bool
        alpha_j = 1 for every prompt (Bradley-Terry for tie-free votes; for checks). Ratings with one
        score a (prompt, system) cell always have it (:func:`lib.ranking.model.one_score_a_cell`; said
        in ``diagnostics.warnings``).
    use_cache : bool
        Read and write ``lib.io.paths.cache_dir("rankings")``: a hit returns at once (``from_cache``
        True, progress "loaded from cache"; ``diagnostics.wall_s`` is the original fit's). A fit
        that cannot be written is still returned, with a warning in ``diagnostics.warnings``; fits
        whose labels hold NUL characters (netcdf cannot store them) are not cached.
    timer : PhaseTimer, optional
        Takes the seconds of the fit's phases (:mod:`lib.inference.timings`); a new one by default.
    cluster_check : bool
        Check whether paired judgments are clustered by prompt (:func:`lib.ranking.clusters.cluster_by_prompt`;
        a (K, K) array: :func:`lib.ranking.run.affordable_cost` leaves it out for very many systems);
        ``settings.cluster_prompts`` "on" runs it in any case.

    Returns
    -------
    RankingFit
        ``diagnostics.wall_s`` counts model building and compilation; ``diagnostics.timings`` is the
        timer's ``seconds`` (a cache hit: the original fit's).

    Raises
    ------
    SettingsError
        Invalid settings, a baseline that is not a system, options the likelihood cannot take, a
        Laplace fit whose Hessian is not positive definite.

    Notes
    -----
    With ``settings.target_ess`` a numpyro fit samples to the target; ``diagnostics.target_ess``
    and ``diagnostics.stopped`` say which it reached.
    """

    def prepare() -> FitPlan[RankingFit]:
        return _plan(rd, settings or RankSettings(), fixed_alpha, cluster_check)

    return run_fit(prepare, progress=progress, use_cache=use_cache, timer=timer)


def _plan(rd: RankingData, settings: RankSettings, fixed_alpha: bool, cluster_check: bool) -> FitPlan[RankingFit]:
    """The ranking's part of a fit (:func:`fit_ranking`): its checks, problem, diagnostics, cache entry and result."""
    from lib.ranking.model import one_score_a_cell

    settings = _decided(settings, rd)
    if settings.likelihood not in (None, rd.likelihood):
        raise SettingsError(f"the data were prepared for the {rd.likelihood} likelihood, not {settings.likelihood}")
    obs = _observations(rd, settings)
    shared_alpha = one_score_a_cell(obs) and not fixed_alpha
    fixed_alpha = fixed_alpha or shared_alpha
    request = _request(obs, settings, fixed_alpha, cluster_check)
    reason = nuts_reason(settings)
    sampler = fitted_sampler(settings)
    exact, route = _exact_laplace(rd, obs, settings, fixed_alpha) if sampler == LAPLACE else (None, "")
    problem = _problem(obs, settings, fixed_alpha, exact)

    def diagnose_fit(draws: Draws) -> Diagnostics:
        idata = draws.idata
        # constant by construction: b = 0 of votes without ties, alpha = 1 when fixed; the baseline's skill
        fixed = ["b"] * (obs.paired and len(obs.categories) == 2) + ["alpha"] * fixed_alpha
        names = [str(n) for n in idata["posterior"].data_vars if n not in fixed]
        drop = {"system": [settings.baseline]} if settings.baseline is not None else None
        diag = diagnose(idata, sampler, 0.0, names, drop, draws.stats)
        if reason:
            diag.warnings.insert(0, FALLBACK_NOTE.format(reason=reason, sampler=sampler))
        diag.warnings += [SHARED_ALPHA_NOTE] * shared_alpha
        # the full model's Laplace fit ran: no exact fit, or it could not finish (its fallback said the route)
        full = sampler == LAPLACE and (exact is None or ROUTE in idata["posterior"].attrs)
        if full and obs.paired and not fixed_alpha and not _marginal_curvature(obs):
            diag.warnings.append(SCHUR_NOTE.format(n=MARGINAL_MAX_OBS))
        _check_clustering(idata, obs, settings, cluster_check, diag.warnings)
        return diag

    def result(draws: Draws, diag: Diagnostics, key: str) -> RankingFit:
        if route:  # informs, does not warn: said with the method (RankingFit.route), stored with the draws
            draws.idata["posterior"].attrs.setdefault(ROUTE, route)
        return RankingFit(draws.idata, diag, rd, settings, obs.categories, draws.mode, key)

    return FitPlan(
        store=STORE,
        request=request,
        sampler=sampler,
        problem=problem,
        settings=settings,
        read=lambda stored: _read(stored, rd, request, settings),
        diagnose=diagnose_fit,
        result=result,
        extra=lambda fit: {
            "categories": list(fit.categories),
            "mode": None if fit.mode is None else arrays_json(fit.mode),
        },
        # netcdf cannot store labels holding NUL characters
        cacheable="\x00" not in "".join(map(str, [*obs.systems, *obs.prompts])),
    )


def _exact_laplace(
    rd: RankingData, obs: Observations, settings: RankSettings, fixed_alpha: bool
) -> tuple[Callable[..., Draws] | None, str]:
    """The likelihood's own Laplace fit of ``obs`` with the prompt variables integrated out exactly, and what the
    fit says of it (:attr:`lib.ranking.likelihoods.Likelihood.laplace`: the votes' quadrature over alpha_j,
    :mod:`lib.ranking.marginal`; the ratings' over eta_j and alpha_j, :mod:`lib.ranking.marginal_ratings`):
    ``(None, note)`` where it does not apply (the full model's Laplace fit runs), ``(None, "")`` for a likelihood
    without one."""
    if not rd.spec.laplace:
        return None, ""
    return rd.spec.load("laplace")(obs, settings, fixed_alpha)


def _problem(
    obs: Observations, settings: RankSettings, fixed_alpha: bool, exact: Callable[..., Draws] | None = None
) -> Problem:
    """What the sampler fits: the ranking model of ``obs`` (:func:`lib.ranking.model.build_ranking`), its prompt
    variables local, keyed by the model and its data (under which a Laplace fit keeps its compiled programs and
    mode, :func:`lib.inference.laplace.laplace_mode`); ``exact``: the Laplace fit with them integrated out exactly
    (:func:`_exact_laplace`), which the ``laplace`` sampler runs instead of the model's, unless it cannot finish
    (:func:`_or_full_model`)."""
    from lib.ranking.model import LOCAL, SCALES, build_ranking, posterior_names

    curvature = _marginal_curvature(obs)

    def build():
        model = build_ranking(
            obs,
            baseline=settings.baseline,
            intransitivity=settings.intransitivity,
            position_bias=settings.position_bias,
            fixed_alpha=fixed_alpha,
            annotator_effect=bool(settings.annotator_effect),  # decided by _decided
        )
        return model, posterior_names(model)

    full = Problem(
        build=build,
        laplace=LaplaceSettings(local=LOCAL, unit="prompt", marginal_curvature=curvature, scales=SCALES),
        target_accept=TARGET_ACCEPT_BY_CATEGORY if obs.category is not None else 0.8,
        key=digest_of(  # the model and its data, under which its compiled programs are kept
            obs,
            [settings.baseline, settings.intransitivity, settings.position_bias, settings.annotator_effect],
            [fixed_alpha, curvature],
        ),
    )
    if exact is None:
        return full
    # the exact fit's precision is its marginal's
    return replace(full, laplace=replace(full.laplace, marginal_curvature=True, exact_fit=_or_full_model(exact, full)))


def _marginal_curvature(obs: Observations) -> bool:
    """Whether the full model's Laplace fit of ``obs`` takes the marginal's curvature as the globals' precision (else
    the Schur complement, :data:`SCHUR_NOTE`). Ratings always do: their Schur complement need not be positive
    definite at the marginal mode (the scale sigma_eta), and they have few globals."""
    return len(obs.code) <= MARGINAL_MAX_OBS or not obs.paired


def _or_full_model(exact: Callable[..., Draws], full: Problem) -> Callable[..., Draws]:
    """A likelihood's own Laplace fit ``exact`` (``exact(settings, tracker)``), or where it cannot finish on these data
    (:class:`lib.errors.ExactFitError`, e.g. the votes' quadrature nodes did not settle) the full model's Laplace fit
    of ``full``, whose posterior's :data:`ROUTE` is the error's message: how it was made, and why."""

    def fit(settings: NutsSettings, tracker: Tracker) -> Draws:
        try:
            return exact(settings, tracker)
        except ExactFitError as err:
            draws = sample_laplace(full, settings, tracker)
            draws.idata["posterior"].attrs[ROUTE] = err.problem
            return draws

    return fit


def laplace_state(fit: RankingFit, *, fixed_alpha: bool = False) -> LaplaceMode:
    """The mode and Hessian blocks a MAP + Laplace ranking fit drew from (:func:`lib.inference.laplace.laplace_mode`):
    kept in memory when this process just made the fit, else found again as the fit found them.

    Parameters
    ----------
    fit : RankingFit
        A fit of :func:`fit_ranking` by the Laplace sampler (its own or one read from the cache).
    fixed_alpha : bool
        As given to :func:`fit_ranking` (False for the leaderboard's fits, :func:`lib.ranking.run.rank_systems`).

    Raises
    ------
    SettingsError
        The fit was not made by MAP + Laplace; its Hessian is not positive definite.
    """
    from lib.ranking.model import one_score_a_cell

    if fitted_sampler(fit.settings) != LAPLACE:
        raise SettingsError(
            f"the mode and Hessian of a MAP + Laplace fit are asked for, not of {fit.diagnostics.sampler}"
        )
    obs = _observations(fit.data, fit.settings)
    problem = _problem(obs, fit.settings, fixed_alpha or one_score_a_cell(obs))
    return laplace_mode(problem, Tracker(1, time.perf_counter()))
