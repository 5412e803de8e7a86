"""Convergence checks of a NUTS posterior, shared by the GRM fit and the leaderboard fit.

One home for the thresholds and the messages: :func:`check_convergence` takes the posterior draws
and the names of the reported parameters and returns every failed check. A fit fails when

- the bulk or tail effective sample size of any reported parameter is below :data:`ESS_MIN`
  (or undefined),
- its rank-normalised split R-hat is above :data:`RHAT_MAX` or undefined (one chain, or draws that
  do not vary),
- any reported parameter's draws do not vary within a chain (a stuck chain: every proposal was
  rejected, so the "posterior" is one point and its intervals have width 0),
- any transition diverged.

Source: Vehtari, Gelman, Simpson, Carpenter & Bürkner (2021), "Rank-normalization, folding, and
localization: an improved R-hat for assessing convergence of MCMC", Bayesian Analysis 16(2),
667-718: R-hat below 1.01 and bulk and tail ESS above 100 per chain (400 for 4 chains), Sect. 4.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import arviz as az
import numpy as np

from lib.inference.chain_stats import ChainStats, chain_stats, stacked
from lib.inference.settings import TARGET_ESS

ESS_MIN = TARGET_ESS
"""Smallest acceptable bulk and tail ESS of every reported parameter (Vehtari et al. 2021: 100 per
chain for the 4 chains the fits default to). Below it quantiles and tail probabilities are too noisy."""

RHAT_MAX = 1.01
"""Largest acceptable rank-normalised split R-hat (Vehtari et al. 2021)."""


@dataclass
class Convergence:
    """The outcome of :func:`check_convergence`.

    Attributes
    ----------
    rhat_max, ess_bulk_min, ess_tail_min : float
        Worst values over the reported parameters' elements (NaN when undefined anywhere).
    divergences : int
        Divergent transitions of all chains (0 without ``sample_stats.diverging``).
    stuck : list of str
        Reported elements (``"theta[B vs A]"``) whose draws are constant within some chain.
    failures : list of str
        One message per failed check, empty when the fit passes.
    """

    rhat_max: float
    ess_bulk_min: float
    ess_tail_min: float
    divergences: int
    stuck: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    @property
    def converged(self) -> bool:
        """Whether every check passed."""
        return not self.failures


def _worst(values: np.ndarray, lowest: bool) -> float:
    """The smallest (``lowest``) or largest value, NaN if any value is NaN (undefined somewhere)."""
    if values.size == 0 or np.isnan(values).any():
        return float("nan")
    return float(values.min() if lowest else values.max())


def _element_names(da) -> list[str]:
    dims = [d for d in da.dims if d not in ("chain", "draw")]
    if not dims:
        return [str(da.name)]
    index = da.isel(chain=0, draw=0, drop=True).to_dataframe(name="_").index
    labels = index.to_flat_index() if len(dims) > 1 else index
    return [f"{da.name}[{', '.join(map(str, lab)) if isinstance(lab, tuple) else lab}]" for lab in labels]


def check_convergence(
    idata: az.InferenceData,
    var_names: list[str],
    *,
    ess_min: float = ESS_MIN,
    rhat_max: float = RHAT_MAX,
    stats: ChainStats | None = None,
) -> Convergence:
    """Check the convergence of the reported parameters of a posterior.

    Parameters
    ----------
    idata : arviz.InferenceData
        ``posterior`` with dims (chain, draw, ...); ``sample_stats.diverging`` if the sampler
        records it.
    var_names : list of str
        The reported parameters. Leave out structurally fixed ones (e.g. a parameter pinned to 0):
        constant draws are read as a stuck chain.
    ess_min, rhat_max : float
        Thresholds (defaults :data:`ESS_MIN`, :data:`RHAT_MAX`).
    stats : ChainStats, optional
        R-hat and ESS of the reported elements, laid out as ``stacked(posterior, var_names)``
        (:func:`lib.inference.chain_stats.stacked`), already computed (the sampler's last check); computed
        from the draws when None.

    Returns
    -------
    Convergence
        The worst R-hat and ESS, the divergences, the stuck elements and one message per failed
        check (``converged`` is False when any failed).

    Raises
    ------
    KeyError
        A name of ``var_names`` is not in the posterior.
    """
    post = idata["posterior"][list(var_names)]
    n_chains = post.sizes["chain"]
    if stats is None:
        stats = chain_stats(stacked(post, list(var_names)))  # arviz's numbers, vectorised
    rhat = _worst(stats.rhat, lowest=False)
    ess_bulk = _worst(stats.ess_bulk, lowest=True)
    ess_tail = _worst(stats.ess_tail, lowest=True)
    divergences = (
        int(idata["sample_stats"]["diverging"].sum())
        if "sample_stats" in idata and "diverging" in idata["sample_stats"]
        else 0
    )
    stuck = []
    for name in var_names:
        da = post[name]
        flat = (da.max("draw") == da.min("draw")).any("chain").to_numpy().ravel()
        stuck += [label for label, constant in zip(_element_names(da), flat, strict=True) if constant]

    failures = []
    if stuck:
        shown = ", ".join(stuck[:5]) + (f" and {len(stuck) - 5} more" if len(stuck) > 5 else "")
        failures.append(
            f"stuck chain: the draws of {len(stuck)} parameter(s) never change within a chain "
            f"({shown}), so their intervals have width 0 and mean nothing; run more tuning "
            "iterations and draws."
        )
    if n_chains < 2:
        failures.append(
            f"one chain: R-hat cannot be computed, so convergence cannot be checked; "
            f"run 4 chains (R-hat must be at most {rhat_max})."
        )
    elif not rhat <= rhat_max:
        shown = "undefined (draws that do not vary)" if np.isnan(rhat) else f"{rhat:.3f}"
        failures.append(
            f"R-hat up to {shown} (must be at most {rhat_max}): the chains disagree; "
            "run more tuning iterations and draws."
        )
    for kind, value in (("bulk", ess_bulk), ("tail", ess_tail)):
        if not value >= ess_min:
            shown = "undefined" if np.isnan(value) else f"{value:.0f}"
            failures.append(
                f"{kind} ESS down to {shown} (must be at least {ess_min:g}): too few effective "
                "draws for stable intervals; run more draws."
            )
    if divergences:
        failures.append(
            f"{divergences} divergent transitions: the posterior may be biased; run more tuning iterations."
        )
    return Convergence(rhat, ess_bulk, ess_tail, divergences, stuck, failures)
