"""Prior-to-posterior contraction: which parameters the data inform and which are just the prior.

Contraction of a parameter is ``1 - posterior variance / prior variance`` (Schad, Betancourt &
Vasishth 2021, "Toward a principled Bayesian workflow in cognitive science", Psychological
Methods 26(1), Sec. "Model sensitivity"): near 1 the data pinned the parameter down, near 0 the
posterior is the prior. alpha is measured on log alpha (its prior is normal there).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from lib.irt.settings import LOG_ALPHA_PRIOR_SD, THETA_PRIOR_SD
from lib.irt.simulate import prior_thresholds

UNINFORMED_BELOW = 0.5
"""Contraction under which a parameter counts as prior-dominated (not informed by the data).

For a normal prior and likelihood, posterior precision = prior precision + data precision, so
contraction = data precision / posterior precision: the share of what is known about the
parameter that comes from the data. Below 0.5 the prior contributes more than the data, which is
what "prior-dominated" means. Measured values: on the bundled LAMP rankings (3 comparisons) 95% of
the prompts' alpha lie below 0.54 (median 0.29), so their intervals are mostly the prior's; on 60
simulated comparisons x 30 prompts every theta and alpha lies above it. The Monte Carlo error of
the estimate (relative SE of a variance sqrt(2 / ESS), 0.06 at ESS = 500) is small against 0.5."""


@lru_cache(maxsize=16)
def threshold_prior_variance(cutpoints: str, n_categories: int) -> np.ndarray:
    """Prior variance of each threshold b_jk, shape (K-1,), logits^2.

    "Ordered b ~ N(0, 2)" restricted to the ordered region is the law of the order statistics of
    K-1 independent N(0, 2) draws (``free``), or, for ``antisymmetric`` cutpoints, of H = (K-1)/2
    half-normal |N(0, 2)| draws mirrored (``b_j,-c = -b_j,c``). Their variances are below 4 and
    have no closed form, so they are estimated from 200 000 prior draws (fixed seed; relative
    Monte Carlo error 0.3%).
    """
    return prior_thresholds(np.random.default_rng(0), 200_000, n_categories, cutpoints).var(axis=0)


def contraction(posterior, cutpoints: str) -> dict[str, np.ndarray]:
    """Prior-to-posterior contraction of theta, alpha (on log alpha) and every threshold b.

    Parameters
    ----------
    posterior : xarray.Dataset
        ``theta`` (chain, draw, comparison), ``alpha`` (chain, draw, prompt), ``b`` (chain, draw,
        prompt, threshold), e.g. ``GRMFit.idata.posterior``.
    cutpoints : {"antisymmetric", "shared", "free"}
        Sets the prior of b.

    Returns
    -------
    dict
        ``theta`` (I,), ``alpha`` (J,), ``b`` (J, K-1): contraction, at most 1 (may dip below 0
        from Monte Carlo error); all NaN for a single draw (a MAP point has no posterior variance).
    """

    def var(name: str, dims: tuple[str, ...], log: bool = False) -> np.ndarray:
        draws = posterior[name].transpose("chain", "draw", *dims).to_numpy()
        flat = draws.reshape(-1, *draws.shape[2:])
        if log:
            flat = np.log(flat)
        return flat.var(axis=0, ddof=1) if len(flat) > 1 else np.full(flat.shape[1:], np.nan)

    n_categories = posterior.sizes["threshold"] + 1
    return {
        "theta": 1 - var("theta", ("comparison",)) / THETA_PRIOR_SD**2,
        "alpha": 1 - var("alpha", ("prompt",), log=True) / LOG_ALPHA_PRIOR_SD**2,
        "b": 1 - var("b", ("prompt", "threshold")) / threshold_prior_variance(cutpoints, n_categories),
    }


def uninformed(posterior, cutpoints: str, below: float = UNINFORMED_BELOW) -> list[str]:
    """Ids of the parameters the data do not inform: ``theta[<comparison>]``, ``alpha[<prompt>]``,
    ``b[<prompt>,<threshold>]`` (``b[all prompts,<threshold>]`` for shared cutpoints) with contraction
    below ``below``; empty for a MAP point."""
    c = contraction(posterior, cutpoints)
    comp = posterior["comparison"].to_numpy().astype(str)
    prompt = posterior["prompt"].to_numpy().astype(str)
    ids = [f"theta[{comp[i]}]" for i in np.flatnonzero(c["theta"] < below)]
    ids += [f"alpha[{prompt[j]}]" for j in np.flatnonzero(c["alpha"] < below)]
    threshold = posterior["threshold"].to_numpy()
    if cutpoints == "shared":  # one set for all prompts: listed once
        return ids + [f"b[all prompts,{threshold[k]}]" for k in np.flatnonzero(c["b"][0] < below)]
    ids += [f"b[{prompt[j]},{threshold[k]}]" for j, k in zip(*np.nonzero(c["b"] < below), strict=True)]
    return ids
