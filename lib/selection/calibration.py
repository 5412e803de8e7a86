"""Leave-one-comparison-out calibration of the prompt bank, fast (MAP) or full (posterior draws).

For a held-out comparison i the prompts are calibrated on the other comparisons only (the paper's
leave-one-out design, Sedoc & Ungar 2020 sec. 6.2), and the ``group`` strategy re-estimates them
within i's group of systems.

``fast``
    One MAP fit per held-out comparison (``lib.irt.map.fit_map`` with i's weight 0). Joint MAP
    shrinks or stretches the theta scale, which makes posterior SDs over-confident, so the fit is
    put back on the prior's scale: thetas of the calibration comparisons get root-mean-square 1
    (antisymmetric cutpoints keep 0 = no preference) or mean 0 and SD 1 (free cutpoints), and
    alpha and b follow (``ItemParams.linked``).
``full``
    One posterior fit (``lib.irt.fit.fit_grm``) of all comparisons; the item-parameter draws are
    re-weighted to leave comparison i out by Pareto-smoothed importance sampling (PSIS,
    Vehtari, Gelman & Gabry 2017), with weights ``1 / p(u_i | items_s)`` where the marginal
    likelihood ``p(u_i | items_s) = ∫ N(theta) prod_j P(u_ij | theta, items_s) dtheta`` is taken by
    quadrature. The Pareto k-hat of each held-out comparison is kept (``khat``); above 0.7 the
    importance estimate is unreliable.

Groups (the paper's "Prompt and Model Weighted"): systems are ranked by their mean signed ability
over all comparisons (theta if the system is B, -theta if it is A) on the all-data calibration and
split into the better half (rounded up) and the rest. A comparison between two systems of the same
group is calibrated on that group's other comparisons; the group's scale is linked to the global one
(mean-sigma linking: equal RMS, and equal means for free cutpoints, of the thetas both calibrations
share). Comparisons across groups, and groups too small to calibrate (fewer than 2 other
comparisons), have no group calibration.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Protocol

import numpy as np
import pandas as pd
from scipy.special import logsumexp

from lib.errors import DesignError, SettingsError
from lib.inference.settings import gives_posterior, posterior_samplers
from lib.irt.readouts import DEFAULT_GRID
from lib.irt.settings import FULL_MODE_SETTINGS, FitSettings, check_cutpoints
from lib.selection.bank import ItemParams
from lib.selection.settings import check_mode

SYSTEM_GROUPS = ("better", "weaker")
"""The halves of the systems, ranked by their mean signed ability (see the module docstring)."""

PSIS_KHAT_LIMIT = 0.7
"""Above this Pareto k-hat the PSIS leave-one-out weights are unreliable (Vehtari et al. 2017)."""

MIN_COMPARISONS = 3
"""Leave-one-out needs one comparison held out and at least two to calibrate the prompts on."""

FEW_COMPARISONS = 10
"""Below this many comparisons each prompt's alpha and b rest on a handful of net ratings, so the
posterior stays close to the prior (log alpha ~ N(0, 0.5), b ~ N(0, 2)) and the ranking of prompts
is mostly noise."""


def check_selection_data(rm) -> list[str]:
    """Raise unless the data can support a leave-one-out selection; return what weakens it.

    Parameters
    ----------
    rm : lib.judgments.ratings.RatingMatrix

    Returns
    -------
    list of str
        A warning when fewer than :data:`FEW_COMPARISONS` comparisons have ratings (the design
        warnings of :func:`lib.irt.data_checks.check_design` are the Data page's).

    Raises
    ------
    DesignError
        When :func:`lib.irt.data_checks.check_design` finds the data cannot support a fit, or fewer than
        :data:`MIN_COMPARISONS` comparisons have ratings.
    """
    from lib.irt.data_checks import check_design

    check_design(rm)
    n_comp = int((rm.codes() >= 0).any(axis=1).sum())
    if n_comp < MIN_COMPARISONS:
        raise DesignError(
            f"leave-one-out selection needs at least {MIN_COMPARISONS} comparisons with ratings; the data has {n_comp}"
        )
    if n_comp >= FEW_COMPARISONS:
        return []
    return [
        f"only {n_comp} comparisons: each leave-one-out calibration estimates the prompts' alpha and b "
        f"from {n_comp - 1} of them, so they are mostly prior; SEs and prompt rankings need "
        f"{FEW_COMPARISONS} or more comparisons to mean much"
    ]


def _scale_to(theta: np.ndarray, target: np.ndarray | None, centred: bool) -> tuple[float, float]:
    """Linking constants ``(scale, shift)`` mapping ``theta`` onto ``target`` (None: onto N(0, 1))."""
    t = np.asarray(theta, float)
    if centred:
        to_mean, to_sd = (0.0, 1.0) if target is None else (np.mean(target), np.std(target))
        scale = to_sd / max(np.std(t), 1e-9)
        return scale, to_mean - scale * np.mean(t)
    to_rms = 1.0 if target is None else np.sqrt(np.mean(np.square(target)))
    return to_rms / max(np.sqrt(np.mean(t**2)), 1e-9), 0.0


def system_groups(comparisons: pd.DataFrame, theta: np.ndarray) -> pd.Series:
    """Group of each comparison: ``better``, ``weaker`` or None (across groups).

    Parameters
    ----------
    comparisons : DataFrame
        I rows with ``system_a`` and ``system_b``; theta > 0 means B is better.
    theta : ndarray, shape (I,)
        All-data abilities.

    Returns
    -------
    Series of object, length I.
    """
    signed = pd.concat(
        [
            pd.DataFrame({"system": comparisons["system_b"].to_numpy(), "ability": theta}),
            pd.DataFrame({"system": comparisons["system_a"].to_numpy(), "ability": -np.asarray(theta)}),
        ]
    )
    means = signed.groupby("system")["ability"].mean().sort_values(ascending=False)
    better = set(means.index[: (len(means) + 1) // 2])
    a_better = comparisons["system_a"].isin(better).to_numpy()
    b_better = comparisons["system_b"].isin(better).to_numpy()
    out = np.full(len(comparisons), None, dtype=object)
    out[a_better & b_better] = "better"
    out[~a_better & ~b_better] = "weaker"
    return pd.Series(out, index=comparisons.index, dtype=object)


def _has_systems(comparisons: pd.DataFrame | None) -> bool:
    return (
        comparisons is not None
        and {"system_a", "system_b"} <= set(comparisons.columns)
        and comparisons[["system_a", "system_b"]].notna().all().all()
        and (comparisons[["system_a", "system_b"]].astype(str) != "").all().all()  # response data
    )


class Calibration(Protocol):
    """Leave-one-out item parameters of a prompt bank, as the curve, the subsets and the what-if
    read them (:class:`FastCalibration`, :class:`FullCalibration`).

    Attributes
    ----------
    mode : str
        A name of :data:`lib.selection.settings.MODES`.
    whole : ItemParams
        Items calibrated on all comparisons.
    groups : Series or None
        System group of each comparison (:func:`system_groups`); None without named systems.
    """

    mode: str
    whole: ItemParams
    groups: pd.Series | None

    def loo(self, i: int) -> ItemParams:
        """Items calibrated without comparison i."""

    def group_params(self, name: str) -> ItemParams | None:
        """Items calibrated within system group ``name`` (None when it cannot be calibrated)."""

    def group_loo(self, i: int) -> ItemParams | None:
        """Items calibrated within comparison i's group without i (None outside a group)."""

    def khat_max(self) -> float | None:
        """Worst Pareto k-hat of the leave-one-out weights made so far (None: no weights)."""


class FastCalibration:
    """Leave-one-out MAP calibrations rescaled to the prior's theta scale (see module docstring).

    Parameters
    ----------
    codes : ndarray of int, shape (I, J)
        Category index per comparison and prompt, -1 where missing.
    n_categories : int
    comparisons : DataFrame, optional
        ``system_a``, ``system_b`` per comparison; needed for the ``group`` strategy.
    cutpoints : {"antisymmetric", "free"}
    fit : callable, optional
        ``fit(codes, n_categories, cutpoints=..., weights=...) -> GRMPoint``;
        ``lib.irt.map.fit_map`` by default.
    """

    mode = "fast"

    def __init__(self, codes, n_categories, comparisons=None, *, cutpoints="antisymmetric", fit=None):
        if fit is None:
            from lib.irt.map import fit_map as fit
        self.codes = np.asarray(codes, dtype=np.int64)
        self.n_categories = int(n_categories)
        self.cutpoints = cutpoints
        self._fit = fit
        self._centred = cutpoints == "free"
        self._cache: dict[int, tuple[ItemParams, np.ndarray]] = {}
        whole, theta = self._calibrate(np.ones(len(self.codes)))
        self.whole, self.theta = whole, theta
        self.groups = system_groups(comparisons, theta) if _has_systems(comparisons) else None

    def _calibrate(self, weights: np.ndarray, target: np.ndarray | None = None):
        point = self._fit(self.codes, self.n_categories, cutpoints=self.cutpoints, weights=weights)
        used = weights > 0
        scale, shift = _scale_to(point.theta[used], None if target is None else target[used], self._centred)
        params = ItemParams.point(point.alpha, point.b).linked(scale, shift)
        return params, scale * np.asarray(point.theta) + shift

    def loo(self, i: int) -> ItemParams:
        """Items calibrated without comparison i."""
        if i not in self._cache:
            weights = np.ones(len(self.codes))
            weights[i] = 0.0
            self._cache = {i: self._calibrate(weights)}  # one at a time: the curve walks i in order
        return self._cache[i][0]

    def group_params(self, name: str) -> ItemParams | None:
        """Items calibrated on all comparisons within group ``name`` ("better" / "weaker")."""
        if self.groups is None or (self.groups == name).sum() < 2:
            return None
        weights = (self.groups == name).to_numpy().astype(float)
        return self._calibrate(weights, target=self.theta)[0]

    def group_loo(self, i: int) -> ItemParams | None:
        """Items calibrated within comparison i's group without i, linked to the global scale."""
        if self.groups is None or self.groups.iloc[i] is None:
            return None
        weights = (self.groups == self.groups.iloc[i]).to_numpy().astype(float)
        weights[i] = 0.0
        if weights.sum() < 2:
            return None
        self.loo(i)
        return self._calibrate(weights, target=self._cache[i][1])[0]

    def khat_max(self) -> None:
        """None: MAP leave-one-out refits, no importance weights."""
        return None


def _psis(log_ratios: np.ndarray) -> tuple[np.ndarray, float]:
    import arviz as az

    lw, khat = az.psislw(log_ratios)
    return np.asarray(lw), float(np.asarray(khat))


def loo_log_weights(params: ItemParams, codes_row: np.ndarray, grid=DEFAULT_GRID) -> tuple[np.ndarray, float]:
    """PSIS weights leaving one comparison out of a posterior fit, and their Pareto k-hat.

    The raw log ratio of draw s is ``-log p(u_i | items_s)``, the comparison's marginal likelihood
    with theta integrated out by quadrature against its N(0, 1) prior; the ratios are smoothed by
    ``arviz.psislw`` (Vehtari, Gelman & Gabry 2017).

    Parameters
    ----------
    params : ItemParams
        S equally weighted posterior draws of a fit that included the comparison.
    codes_row : ndarray of int, shape (J,)
        The comparison's category indices, -1 where missing.
    grid : ndarray, shape (G,)
        Quadrature grid of theta.

    Returns
    -------
    log_weights : ndarray, shape (S,), normalised
    khat : float
        Pareto k-hat; above :data:`PSIS_KHAT_LIMIT` the weights are unreliable.
    """
    loglik = params.loglik(codes_row, grid).sum(axis=1) - 0.5 * grid**2  # (S, G)
    return _psis(-logsumexp(loglik, axis=1))


ItemSampler = Callable[[object], tuple[np.ndarray, np.ndarray, np.ndarray]]
"""``sample(rating_matrix) -> (alpha (S, J), b (S, J, K-1), theta posterior mean (I,))``."""


class FullCalibration:
    """Leave-one-out calibrations from posterior draws re-weighted by PSIS (see module docstring).

    Parameters
    ----------
    rm : lib.judgments.ratings.RatingMatrix
    sample : callable
        Fits a rating matrix (see :data:`ItemSampler`); :func:`posterior_sampler` wraps ``fit_grm``.
    cutpoints : {"antisymmetric", "free"}

    Attributes
    ----------
    khat : dict
        ``(i, "global" | "group") -> Pareto k-hat`` of every leave-one-out weighting made.
    """

    mode = "full"

    def __init__(self, rm, sample: ItemSampler, *, cutpoints: str = "antisymmetric"):
        self.codes = rm.codes()
        self.n_categories = len(rm.categories)
        self._centred = cutpoints == "free"
        self.khat: dict[tuple[int, str], float] = {}
        alpha, b, theta = sample(rm)
        self.whole, self.theta = ItemParams.draws(alpha, b), np.asarray(theta)
        self.groups = system_groups(rm.comparisons, self.theta) if _has_systems(rm.comparisons) else None
        self._group_fits: dict[str, tuple[np.ndarray, ItemParams]] = {}
        if self.groups is not None:
            for name in SYSTEM_GROUPS:
                rows = np.flatnonzero((self.groups == name).to_numpy())
                if len(rows) < 3:
                    continue
                sub = dataclasses.replace(
                    rm,
                    u=rm.u[rows],
                    comparisons=rm.comparisons.iloc[rows].reset_index(drop=True),
                    n_votes=rm.n_votes[rows],
                )
                g_alpha, g_b, g_theta = sample(sub)
                scale, shift = _scale_to(g_theta, self.theta[rows], self._centred)
                self._group_fits[name] = (rows, ItemParams.draws(g_alpha, g_b).linked(scale, shift))

    def group_params(self, name: str) -> ItemParams | None:
        """Posterior draws of the items fitted within group ``name`` ("better" / "weaker")."""
        return self._group_fits[name][1] if name in self._group_fits else None

    def loo(self, i: int) -> ItemParams:
        """Posterior draws of the items re-weighted to leave comparison i out."""
        lw, khat = loo_log_weights(self.whole, self.codes[i])
        self.khat[(i, "global")] = khat
        return self.whole.reweighted(lw)

    def group_loo(self, i: int) -> ItemParams | None:
        """The group fit's draws re-weighted to leave comparison i out (None outside a group)."""
        if self.groups is None or self.groups.iloc[i] not in self._group_fits:
            return None
        _, params = self._group_fits[self.groups.iloc[i]]
        lw, khat = loo_log_weights(params, self.codes[i])
        self.khat[(i, "group")] = khat
        return params.reweighted(lw)

    def khat_max(self) -> float | None:
        """The largest Pareto k-hat of the leave-one-out weights computed so far (None before any)."""
        return max(self.khat.values()) if self.khat else None


def posterior_sampler(settings: FitSettings, *, max_draws: int = 200, progress=None) -> ItemSampler:
    """An :data:`ItemSampler` running ``lib.irt.fit.fit_grm`` with ``settings`` (its sampler, cutpoints,
    chains, draws, tune and seed), thinned to ``max_draws`` draws."""

    def sample(rm):
        from lib.irt.fit import fit_grm

        post = fit_grm(rm, settings, progress=progress).idata["posterior"]
        alpha = post["alpha"].stack(s=("chain", "draw")).transpose("s", "prompt").to_numpy()
        b = post["b"].stack(s=("chain", "draw")).transpose("s", "prompt", "threshold").to_numpy()
        keep = np.linspace(0, len(alpha) - 1, min(max_draws, len(alpha))).round().astype(int)
        theta = post["theta"].mean(("chain", "draw")).to_numpy()
        return alpha[keep], b[keep], theta

    return sample


def make_calibration(rm, mode: str = "fast", settings: FitSettings | None = None, *, progress=None) -> Calibration:
    """The leave-one-out calibration of a rating matrix in the chosen mode.

    Parameters
    ----------
    rm : lib.judgments.ratings.RatingMatrix
    mode : {"fast", "full"}
        :data:`lib.selection.settings.MODES`.
    settings : FitSettings, optional
        Cutpoints of both modes, and the full mode's posterior fits (all comparisons, then each
        system group): sampler, chains, draws, tune, seed. Default: antisymmetric cutpoints,
        numpyro with :data:`lib.irt.settings.FULL_MODE_SETTINGS`.
    progress : callable, optional
        ``progress(fraction, message)`` of the full mode's fits.

    Raises
    ------
    SettingsError
        Unknown mode, sampler or cutpoints, antisymmetric cutpoints with an even number of
        categories, or a full mode whose sampler gives no posterior draws.
    DesignError
        Data that cannot support the selection (:func:`check_selection_data`).
    """
    settings = settings or FitSettings(**FULL_MODE_SETTINGS)
    check_mode(mode)
    settings.validate()
    check_cutpoints(settings.cutpoints, len(rm.categories))
    check_selection_data(rm)
    if mode == "fast":
        return FastCalibration(rm.codes(), len(rm.categories), rm.comparisons, cutpoints=settings.cutpoints)
    if not gives_posterior(settings.sampler):
        raise SettingsError(f"the full mode needs posterior draws: use {posterior_samplers()}, not {settings.sampler}")
    return FullCalibration(rm, posterior_sampler(settings, progress=progress), cutpoints=settings.cutpoints)
