"""What a plan is asked about: the assumptions about the world, the candidate designs, and the
registries of analyses and prompt-choice strategies (light: no pymc, no pandas at import)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from lib.errors import SettingsError
from lib.irt.settings import LOG_ALPHA_PRIOR_SD, FitSettings


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
    calibrated : bool
        Its 95% interval excludes 0 in about 5% of studies with no true difference
        (``tests/planning``); an uncalibrated analysis overstates power, so it is never a default.
    null_calibrated : bool
        Calibrated by simulation under the null: every replicate also simulates its null twin (the
        comparisons of the stated size at theta 0, :func:`lib.planning.simulate.simulate_study`),
        and a detection is ``|z|`` (``Result.z``) above the 95th percentile of their ``|z|`` in the
        null twins instead of the interval excluding 0; the interval is widened by the
        same factor (:func:`lib.planning.power.plan`). For analyses whose nominal interval is too
        narrow.
    """

    name: str
    help: str
    run: str
    votes_only: bool = False
    calibrated: bool = True
    null_calibrated: bool = False


ANALYSES: dict[str, Analysis] = {a.name: a for a in (
    Analysis("grm_map", "the project's graded response model, MAP item parameters, theta by quadrature "
             "(lib.irt.fit.fit_map); its nominal interval ignores the uncertainty of the MAP item "
             "parameters (13% false detections at 5%), so it is calibrated by simulation under the null: "
             "a detection is |EAP / SD| above the 95th percentile of the same studies with no difference, "
             "and the interval is widened by the same factor (docs/planner.md)",
             "lib.planning.analyses:grm_map", votes_only=True, null_calibrated=True),
    Analysis("grm_bank", "the GRM with the calibrated bank's alpha and b, theta by quadrature per "
             "comparison", "lib.planning.analyses:grm_bank", votes_only=True),
    Analysis("t_test", "paired t-test on the mean rating difference per prompt", "lib.planning.analyses:t_test"),
    Analysis("wilcoxon", "Wilcoxon signed-rank test on the mean rating difference per prompt",
             "lib.planning.analyses:wilcoxon"),
    Analysis("sign_test", "exact sign test on the pairwise votes (ties left out)", "lib.planning.analyses:sign_test"),
)}
"""The analysis registry, name -> :class:`Analysis`."""

GRM_ANALYSES = ("grm_map", "grm_bank")
"""The analyses a NUTS fit of the GRM is compared with (:func:`lib.planning.nuts.nuts_check`)."""

NUTS_CHECK_SETTINGS = FitSettings(chains=2, draws=500, tune=500)
"""The NUTS check's default: short chains, enough to compare 95% intervals of theta, not for a
reported fit."""

STRATEGIES = {
    "random": "prompts drawn at random from the bank",
    "top_alpha": "the most discriminating prompts of the bank (IRT-informed; Sedoc & Ungar 2020)",
}
"""Prompt-choice strategies, name -> help text."""

RESPONSES = {
    "votes": "each annotator gives an ordered judgment drawn from the GRM (A better / tie / B better)",
    "normal": "each annotator gives a difference score ~ N(theta, 1) (the t-test's textbook model)",
}
"""Response models of the simulated annotators, name -> help text."""


@dataclass
class PilotBank:
    """What a pilot study tells the planner (:func:`assumptions_from_pilot`).

    Attributes
    ----------
    theta : ndarray, shape (D, I)
        Abilities of the pilot's I comparisons, D draws (posterior draws, or 1 for a MAP point).
    pairs : ndarray, shape (I, 2), int
        System index of ``system_a`` and ``system_b`` of each comparison.
    alpha : ndarray, shape (J,)
        Discrimination of each pilot prompt (the bank prompts are chosen from).
    b : ndarray, shape (J, K-1)
        Its thresholds (logits).
    categories : ndarray, shape (K,)
        The pilot's ordered scores, e.g. -3..3.
    prompt_ids : ndarray, shape (J,), str
    """

    theta: np.ndarray
    pairs: np.ndarray
    alpha: np.ndarray
    b: np.ndarray
    categories: np.ndarray
    prompt_ids: np.ndarray


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

    def validate(self) -> None:
        """Check the values.

        Raises
        ------
        SettingsError
            A value out of range, named with the allowed range.
        """
        if self.pilot is None and self.n_systems < 2:
            raise SettingsError(f"at least 2 systems are needed to compare (got {self.n_systems})")
        if not np.isfinite(self.effect) or self.effect < 0:
            raise SettingsError(f"the effect must be a non-negative number of logits (got {self.effect})")
        if not (0 <= self.tie_rate < 1):
            raise SettingsError(f"the tie rate must be in [0, 1) (got {self.tie_rate})")
        if self.skill_sd < 0 or self.log_alpha_sd < 0:
            raise SettingsError("skill_sd and log_alpha_sd must not be negative")
        if self.comparisons is not None and self.comparisons < 1:
            raise SettingsError(f"comparisons must be at least 1 (got {self.comparisons})")
        if self.bank_size < 1:
            raise SettingsError(f"the prompt bank needs at least 1 prompt (got {self.bank_size})")
        if self.response not in RESPONSES:
            raise SettingsError(f"unknown response model '{self.response}'; choose one of {', '.join(RESPONSES)}")
        if self.pilot is not None and self.response != "votes":
            raise SettingsError("a pilot's judgments are ordered categories: use the 'votes' response model")


@dataclass(frozen=True)
class Design:
    """One candidate study: prompts per comparison, annotators per (comparison, prompt), how the
    prompts are chosen (:data:`STRATEGIES`) and how the study is analysed (:data:`ANALYSES`)."""

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
        if self.strategy not in STRATEGIES:
            raise SettingsError(f"unknown prompt strategy '{self.strategy}'; choose one of {', '.join(STRATEGIES)}")
        if self.analysis not in ANALYSES:
            raise SettingsError(f"unknown analysis '{self.analysis}'; choose one of {', '.join(ANALYSES)}")
        if self.prompts < 1 or self.annotators < 1:
            raise SettingsError(f"a design needs at least 1 prompt and 1 annotator (got {self.prompts}, "
                                f"{self.annotators})")
        bank = len(assumptions.pilot.alpha) if assumptions.pilot is not None else assumptions.bank_size
        if self.prompts > bank:
            raise SettingsError(f"{self.prompts} prompts asked but the prompt bank holds {bank}")
        if ANALYSES[self.analysis].votes_only and assumptions.response != "votes":
            raise SettingsError(f"the '{self.analysis}' analysis needs ordered judgments, not the "
                                f"'{assumptions.response}' response model")


MAX_PILOT_DRAWS = 200
"""Posterior draws of a pilot fit kept for the posterior predictive (they travel with every task)."""


def assumptions_from_pilot(data, fit=None, *, effect: float = 0.3) -> Assumptions:
    """Assumptions whose truths and prompt bank come from a pilot study.

    Each simulated study takes one posterior draw of the pilot's thetas as the truth (posterior
    predictive; the MAP point when the fit has no draws), and chooses its prompts from the
    pilot's prompts by their estimated alpha and b (posterior means).

    Parameters
    ----------
    data : lib.inputs.AnalysisInput
        The pilot (its rating matrix and comparisons).
    fit : lib.irt.fit.GRMFit or lib.irt.fit.GRMPoint, optional
        Its fit; None fits the MAP point now (:func:`lib.irt.fit.fit_map`).
    effect : float
        Smallest difference worth detecting, logits.

    Returns
    -------
    Assumptions
        With ``pilot`` set; ``n_systems`` is the pilot's.

    Raises
    ------
    SettingsError
        The pilot is item-response data (persons and items, no system comparisons).
    """
    from lib.irt.fit import GRMPoint, fit_map
    from lib.irt.settings import default_cutpoints

    if default_cutpoints(data.fmt) != "antisymmetric":
        raise SettingsError(f"the planner needs a pilot of system comparisons, not '{data.fmt}' data")
    rm = data.matrix
    if fit is None:
        fit = fit_map(rm.codes(), len(rm.categories))
    if isinstance(fit, GRMPoint):
        theta, alpha, b = fit.theta[None, :], fit.alpha, fit.b
    else:
        post = fit.idata.posterior
        draws = post["theta"].stack(sample=("chain", "draw")).transpose("sample", ...).to_numpy()
        keep = np.linspace(0, len(draws) - 1, min(len(draws), MAX_PILOT_DRAWS)).round().astype(int)
        theta = draws[keep]
        alpha = post["alpha"].mean(("chain", "draw")).to_numpy()
        b = post["b"].mean(("chain", "draw")).to_numpy()
    systems = sorted(set(rm.comparisons["system_a"].astype(str)) | set(rm.comparisons["system_b"].astype(str)))
    index = {s: k for k, s in enumerate(systems)}
    pairs = np.array([[index[a], index[b_]] for a, b_ in zip(rm.comparisons["system_a"].astype(str),
                                                            rm.comparisons["system_b"].astype(str), strict=True)])
    pilot = PilotBank(theta=np.asarray(theta, float), pairs=pairs, alpha=np.asarray(alpha, float),
                      b=np.asarray(b, float), categories=np.asarray(rm.categories), prompt_ids=rm.prompt_ids)
    out = Assumptions(n_systems=len(systems), effect=effect, pilot=pilot)
    out.validate()
    return out
