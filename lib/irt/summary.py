"""Tables of a fitted GRM: abilities per comparison and discriminations per prompt (arviz HDIs)."""

from __future__ import annotations

import arviz as az
import numpy as np
import pandas as pd

from lib.irt.contraction import contraction
from lib.irt.fit import GRMFit
from lib.judgments.ratings import RatingMatrix, item_total_correlation

HDI_PROB = 0.94
"""arviz's default credible mass: an interval, not a 95% significance test."""

ABILITY_DATA = ("comparison", "system_a", "system_b")
PROMPT_DATA = ("prompt_id", "n_comparisons", "item_total_corr", "group")
"""The columns of :func:`ability_table` and :func:`prompt_table` that describe the data, not the fit: all
that is kept of a fit whose chains did not converge (:func:`lib.inference.diagnostics.withhold`)."""


def _hdi(draws: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """HDI of (chain, draw, n) draws, per last axis; a single draw gives the point itself."""
    if draws.shape[0] * draws.shape[1] < 2:
        point = draws[0, 0]
        return point, point
    h = az.hdi(draws, hdi_prob=HDI_PROB)  # (n, 2)
    return h[..., 0], h[..., 1]


def ability_table(fit: GRMFit, rm: RatingMatrix) -> pd.DataFrame:
    """One row per comparison (or person): posterior of theta.

    Returns
    -------
    DataFrame
        ``comparison, system_a, system_b, theta_mean, theta_sd, hdi_low, hdi_high, p_b_better,
        contraction``; theta in logits, theta > 0 means system_b is better; ``p_b_better`` =
        P(theta > 0); ``contraction`` = 1 - posterior var / prior var of theta
        (:mod:`lib.irt.contraction`; near 0: the data do not inform it). For a MAP fit sd,
        p_b_better and contraction are NaN (a point has no probability or variance) and the HDI
        collapses to the point.
    """
    th = fit.idata["posterior"]["theta"].transpose("chain", "draw", "comparison").to_numpy()
    lo, hi = _hdi(th)
    flat = th.reshape(-1, th.shape[-1])
    point = flat.shape[0] < 2
    return pd.DataFrame(
        {
            "comparison": rm.comparisons["comparison"].to_numpy(),
            "system_a": rm.comparisons["system_a"].to_numpy(),
            "system_b": rm.comparisons["system_b"].to_numpy(),
            "theta_mean": flat.mean(axis=0),
            "theta_sd": np.nan if point else flat.std(axis=0, ddof=1),
            "hdi_low": lo,
            "hdi_high": hi,
            "p_b_better": np.nan if point else (flat > 0).mean(axis=0),
            "contraction": contraction(fit.idata["posterior"], fit.settings.cutpoints)["theta"],
        }
    )


def prompt_table(fit: GRMFit, rm: RatingMatrix) -> pd.DataFrame:
    """One row per prompt (or redundancy group): posterior of alpha and data checks.

    Returns
    -------
    DataFrame
        ``prompt_id, alpha_mean, alpha_sd, alpha_hdi_low, alpha_hdi_high, n_comparisons,
        item_total_corr, group, alpha_contraction, b_contraction`` and ``b_mean`` (posterior mean
        thresholds, logits, as a list); ``group`` lists the original prompts averaged into this
        one, separated by ";"; ``alpha_contraction`` is the prior-to-posterior contraction of
        log alpha, ``b_contraction`` the smallest over the prompt's thresholds
        (:mod:`lib.irt.contraction`; near 0: the data do not inform it; NaN for MAP).
    """
    al = fit.idata["posterior"]["alpha"].transpose("chain", "draw", "prompt").to_numpy()
    b = fit.idata["posterior"]["b"].transpose("chain", "draw", "prompt", "threshold").to_numpy()
    lo, hi = _hdi(al)
    flat = al.reshape(-1, al.shape[-1])
    members = rm.groups.groupby("group", sort=False)["prompt_id"].agg(";".join)
    contr = contraction(fit.idata["posterior"], fit.settings.cutpoints)
    return pd.DataFrame(
        {
            "prompt_id": rm.prompt_ids,
            "alpha_mean": flat.mean(axis=0),
            "alpha_sd": flat.std(axis=0, ddof=1) if flat.shape[0] > 1 else np.nan,
            "alpha_hdi_low": lo,
            "alpha_hdi_high": hi,
            "n_comparisons": (~np.isnan(rm.u)).sum(axis=0),
            "item_total_corr": item_total_correlation(rm.u),
            "group": members.reindex(rm.prompt_ids).to_numpy(),
            "alpha_contraction": contr["alpha"],
            "b_contraction": contr["b"].min(axis=1),
            "b_mean": list(np.round(b.mean(axis=(0, 1)), 4)),
        }
    )
