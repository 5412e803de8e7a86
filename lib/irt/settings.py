"""What a GRM fit can be asked for: cutpoints, priors and fit settings (no heavy imports).

The one home of the GRM's names the command line, the pages and :class:`FitSettings` offer, so that
``--help`` and the pages can list them without importing pymc or JAX. Its samplers are those of the
registry made for it (:data:`SAMPLERS`, a view of :data:`lib.inference.settings.SAMPLERS`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypedDict

from lib.errors import SettingsError
from lib.inference.settings import NutsSettings, check_known, posterior_samplers, samplers_for, sampling_sizes

CUTPOINTS = {
    "antisymmetric": "b_j,-c = -b_j,c, so theta = 0 means no preference (default for votes and ratings)",
    "shared": "one antisymmetric set of thresholds for all prompts (chosen automatically for votes and "
    "ratings when prompts have too few rated comparisons to inform their own, e.g. two systems)",
    "free": "the paper's literal model, any ordered thresholds (default for item-response data)",
}
"""Cutpoint variants of the graded response model (:mod:`lib.irt.model`), name -> help text."""

ANTISYMMETRIC = ("antisymmetric", "shared")
"""Cutpoint variants with b_-c = -b_c (theta = 0 is no preference); they need an odd K."""

THETA_PRIOR_SD = 1.0
LOG_ALPHA_PRIOR_SD = 0.5
B_PRIOR_SD = 2.0
"""Priors of the GRM (Sedoc & Ungar 2020): theta ~ N(0, 1), log alpha ~ N(0, 0.5), ordered
b ~ N(0, 2); read by the model, the simulator and the contraction of :mod:`lib.irt.contraction`."""

DECISION_LEVEL = 0.98
"""P(B better) above this says system B is better, below 1 - this that A is (the Abilities page says so).

Not 0.975 (a 95% interval excluding 0): with two systems, 40 prompts and one tie-free vote each, 26 of
40 wins gives P(B better) 0.9753, and 0.975 declares a difference in 8.07% of studies with none, exactly
(:func:`lib.irt.quadrature.null_detection_rates`); 0.98 in 3.85%, and in at most 5.67% at 10 to 150
prompts and tie rates 0 to 0.5, where 0.975 reached 6.49% at 50 prompts and 6.18% at 40 with 5% ties
(``bench/bench_null_calibration.py``; ``tests/irt/test_irt_null_calibration.py``)."""
DECISION_NOTE = (
    f"Read P(B better) above {DECISION_LEVEL:g} as B better and below {1 - DECISION_LEVEL:.2f} as A better, not "
    "0.975: with two systems and 40 prompts of one tie-free vote each, 26 of 40 wins gives 0.9753, and 0.975 "
    f"would declare a difference in 8.07% of studies with none (exact); {DECISION_LEVEL:g} does in 3.85%, and in "
    "at most 5.7% at 10-150 prompts and tie rates 0-0.5 (one vote a prompt)."
)
"""What the Abilities page says under P(B better): the decision rule and its exact null rate."""

SAMPLERS = samplers_for("grm")
"""The samplers of a GRM fit: a live view of the registry :data:`lib.inference.settings.SAMPLERS`
(the default is ``FitSettings.sampler``)."""


def check_cutpoints(cutpoints: str, n_categories: int) -> None:
    """Check the cutpoints variant against the data's number of categories K.

    Raises
    ------
    SettingsError
        An unknown variant, a single category, or antisymmetric cutpoints with an even K.
    """
    check_known("cutpoints", cutpoints, CUTPOINTS)
    if n_categories < 2:
        raise SettingsError("the scores take a single value: nothing to model")
    if cutpoints in ANTISYMMETRIC and n_categories % 2 == 0:
        raise SettingsError(
            f"{cutpoints} (antisymmetric) cutpoints need an odd number of categories (got {n_categories}); "
            "use free cutpoints for this data"
        )


def needs_posterior(what: str) -> str:
    """The message for ``what`` (e.g. "diagnostics") asked of a fit without posterior draws."""
    return f"{what} need posterior draws: fit with a NUTS sampler ({posterior_samplers()}), not the MAP preview"


def default_cutpoints(fmt: str) -> str:
    """The cutpoints for a judgment format (``lib.judgments.formats.FormatSpec.cutpoints``, their one home):
    ``free`` for item-response data, whose categories have no "no preference" middle,
    ``antisymmetric`` otherwise.

    Raises
    ------
    SettingsError
        Unknown format.
    """
    from lib.judgments.formats import format_spec  # pandas: imported on use so that this module stays light

    return format_spec(fmt).cutpoints


class ChainSizes(TypedDict):
    """NUTS chain sizes, keyword arguments of :class:`FitSettings`."""

    chains: int
    draws: int
    tune: int


FULL_MODE_SETTINGS: ChainSizes = {"chains": 2, "draws": 500, "tune": 500}
"""NUTS sizes of prompt selection's full-mode calibration fit (:mod:`lib.selection.calibration`;
its draws are re-weighted per held-out comparison, so fewer suffice than for a reported fit)."""


@dataclass
class GRMChoices:
    """The GRM's own fit choices: the cutpoints variant (:data:`CUTPOINTS`) and the sampler (:data:`SAMPLERS`)."""

    cutpoints: str = "antisymmetric"
    sampler: str = "numpyro"


@dataclass
class FitSettings(NutsSettings, GRMChoices):
    """Everything that changes a GRM fit (and so its cache key): fields ``cutpoints``, ``sampler``
    (:class:`GRMChoices`), then ``chains``, ``draws``, ``tune``, ``seed`` (:class:`NutsSettings`).

    Defaults: antisymmetric cutpoints, numpyro NUTS, 4 chains x 1000 draws after 500 tuning
    iterations, seed 0.
    """

    def validate(self) -> None:
        """Check the settings against the registries.

        Raises
        ------
        SettingsError
            An unknown sampler or cutpoints, or non-positive sizes.
        """
        check_known("sampler", self.sampler, SAMPLERS)
        check_known("cutpoints", self.cutpoints, CUTPOINTS)
        self.check_sizes()


def fit_settings(
    cutpoints: str = GRMChoices.cutpoints,
    sampler: str = GRMChoices.sampler,
    *,
    chains: int | None = None,
    draws: int | None = None,
    tune: int | None = None,
    target_ess: int | None = None,
    seed: int | None = None,
) -> FitSettings:
    """The settings of a GRM fit from what the user chose (None: not chosen), by the one rule of
    ``python -m lib fit`` and the Abilities page (:func:`lib.inference.settings.sampling_sizes`); nothing
    chosen: the defaults, which every reference test runs.

    Raises
    ------
    SettingsError
        A target ESS for a sampler that does not sample to one.
    """
    given = {k: v for k, v in (("chains", chains), ("seed", seed)) if v is not None}
    sizes = sampling_sizes("grm", sampler, draws=draws, tune=tune, target_ess=target_ess)
    return FitSettings(cutpoints=cutpoints, sampler=sampler, **given, **sizes)
