"""The graded response model (Samejima 1969) as a PyMC model, as used by Sedoc & Ungar (2020).

For comparison (or person) i and prompt (or item) j with ordered category index k in 0..K-1::

    P(u_ij >= k) = logistic(alpha_j * (theta_i - b_jk)),   k = 1..K-1
    theta_i ~ N(0, 1),   log alpha_j ~ N(0, 0.5),   b_j ordered, ~ N(0, 2)

(the prior SDs are in :mod:`lib.irt.settings`).

Cutpoint variants:

``antisymmetric`` (default, net ratings)
    ``b_j = (-b_jH, ..., -b_j1, b_j1, ..., b_jH)`` with ``0 < b_j1 < ... < b_jH`` and H = (K-1)/2,
    so that P(u = c | theta) = P(u = -c | -theta): theta = 0 means exactly "no preference",
    as the paper reads its Fig. 1. Needs an odd K.
``shared``
    One antisymmetric set ``b`` for every prompt (``b_j = b``; alpha stays per prompt), for designs
    whose prompts have too few rated comparisons to inform thresholds of their own
    (:func:`lib.irt.data_checks.auto_cutpoints`); as the leaderboard's votes likelihood does.
``free``
    Any ordered ``b_j`` (the paper's literal model; needed for classic response data).

The category log-likelihood is ``log(sigmoid(hi) - sigmoid(lo))`` with ``hi = alpha(theta - b_jk)``
and ``lo = alpha(theta - b_j,k+1)``, computed stably as
``-softplus(-hi) - softplus(lo) + log1mexp(lo - hi)``; ``pm.OrderedLogistic`` as shipped gave NaNs
under ADVI and poor chains on this model.
"""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytensor.tensor as pt
from pymc.distributions import transforms

from lib.irt.settings import ANTISYMMETRIC, B_PRIOR_SD, LOG_ALPHA_PRIOR_SD, THETA_PRIOR_SD, check_cutpoints

_EDGE = 50.0
"""Linear predictor standing in for the infinite outer cutpoints (logistic(50) = 1 - 2e-22).

Set on the linear predictor, not on b, so it does not depend on alpha; and finite, because an
infinite or huge edge gives NaN gradients in JAX (numpyro), where both branches of a select are
differentiated.
"""


def observations(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Row, column and category index of every observed cell of a (I, J) code matrix (-1 = missing)."""
    i, j = np.nonzero(codes >= 0)
    return i.astype(np.int64), j.astype(np.int64), codes[i, j].astype(np.int64)


def antisymmetric_cutpoints(n_prompt: int, half: int) -> pt.TensorVariable:
    """Cutpoints (-b_H..-b_1, b_1..b_H) from positive ordered b_1 < ... < b_H ~ N(0, B_PRIOR_SD).

    Parameterised by log gaps, ``b_1 = exp(y_1)``, ``b_k = b_k-1 + exp(y_k)``, with the normal
    prior and the Jacobian (``sum y``) added as a potential. This is the prior "ordered b ~
    N(0, 2)" restricted to b > 0; log gaps keep NUTS's step size several times larger than a
    log-then-ordered transform, whose second log flattens the posterior near equal cutpoints.
    Must be called inside a ``pm.Model`` context: it adds the free variable ``b_log_gap``
    (n_prompt, half) and the potential ``b_prior``.

    Parameters
    ----------
    n_prompt : int
        Rows of cutpoints (one per prompt, or 1 for a set shared by all prompts).
    half : int
        H = (K - 1) / 2 positive cutpoints per row, K the (odd) number of categories.

    Returns
    -------
    TensorVariable, shape (n_prompt, 2 H)
        Ordered cutpoints in logits, antisymmetric around 0.
    """
    y = pm.Flat("b_log_gap", shape=(n_prompt, half), initval=np.full((n_prompt, half), np.log(0.7)))
    b_pos = pt.cumsum(pt.exp(y), axis=1)
    pm.Potential("b_prior", pt.sum(pm.logp(pm.Normal.dist(0.0, B_PRIOR_SD), b_pos)) + pt.sum(y))
    return pt.concatenate([-b_pos[:, ::-1], b_pos], axis=1)


def build_grm(
    codes: np.ndarray,
    n_categories: int,
    *,
    cutpoints: str = "antisymmetric",
    comparison_ids: np.ndarray | None = None,
    prompt_ids: np.ndarray | None = None,
) -> pm.Model:
    """Build the graded response model for a code matrix.

    Parameters
    ----------
    codes : ndarray, shape (I, J), int
        Category index 0..K-1 per comparison and prompt, -1 where missing.
    n_categories : int
        K, the number of ordered categories.
    cutpoints : {"antisymmetric", "shared", "free"}
    comparison_ids, prompt_ids : ndarray of str, optional
        Coordinates of the ``comparison`` and ``prompt`` dimensions.

    Returns
    -------
    pymc.Model
        Free variables ``theta`` (comparison), ``log_alpha`` (prompt) and ``b_log_gap``
        (antisymmetric, shared) or ``b`` (free); deterministics ``alpha`` and ``b`` (prompt,
        threshold), in logits (``shared``: every row the same). Data containers ``obs_comparison``,
        ``obs_prompt``, ``obs_category`` (one entry
        per observed cell, see :func:`observations`) hold the data, so a compiled graph can take
        them as inputs (:mod:`lib.irt.fit` does for MAP); ``weight`` (one per comparison,
        default 1) scales each comparison's log-likelihood: 0 leaves it out (its theta then
        follows the prior).

    Raises
    ------
    SettingsError
        See :func:`lib.irt.settings.check_cutpoints`.
    """
    check_cutpoints(cutpoints, n_categories)
    n_comp, n_prompt = codes.shape
    coords = {
        "comparison": comparison_ids if comparison_ids is not None else np.arange(n_comp).astype(str),
        "prompt": prompt_ids if prompt_ids is not None else np.arange(n_prompt).astype(str),
        "threshold": np.arange(1, n_categories),
    }
    ii, jj, kk = observations(codes)
    with pm.Model(coords=coords) as model:
        weight = pm.Data("weight", np.ones(n_comp), dims="comparison")
        ii = pm.Data("obs_comparison", ii, shape=(None,))
        jj = pm.Data("obs_prompt", jj, shape=(None,))
        kk = pm.Data("obs_category", kk, shape=(None,))
        theta = pm.Normal("theta", 0.0, THETA_PRIOR_SD, dims="comparison")
        log_alpha = pm.Normal("log_alpha", 0.0, LOG_ALPHA_PRIOR_SD, dims="prompt")
        alpha = pm.Deterministic("alpha", pt.exp(log_alpha), dims="prompt")
        if cutpoints in ANTISYMMETRIC:
            rows = n_prompt if cutpoints == "antisymmetric" else 1
            cut = antisymmetric_cutpoints(rows, (n_categories - 1) // 2)
            b = pm.Deterministic("b", pt.broadcast_to(cut, (n_prompt, n_categories - 1)), dims=("prompt", "threshold"))
        else:
            b = pm.Normal(
                "b",
                0.0,
                B_PRIOR_SD,
                dims=("prompt", "threshold"),
                transform=transforms.ordered,
                initval=np.tile(np.linspace(-1.5, 1.5, n_categories - 1), (n_prompt, 1)),
            )
        loglik = ordinal_logp(alpha[jj], theta[ii], b, jj, kk)
        pm.Potential("loglik", pt.sum(weight[ii] * loglik))
    return model


def ordinal_logp(slope, location, cutpoints, rows, codes):
    """Stable log P(y = k) of the ordinal logistic model ``P(y >= k) = logistic(slope (location - b_k))``.

    ``log(sigmoid(hi) - sigmoid(lo))`` with ``hi = slope (location - b_k)`` and ``lo = slope
    (location - b_k+1)``, computed as ``-softplus(-hi) - softplus(lo) + log1mexp(lo - hi)``.

    Parameters
    ----------
    slope, location : tensor, shape (N,)
        Discrimination and location (logits) of each observation.
    cutpoints : tensor, shape (R, K-1)
        Ordered thresholds, K >= 2; row ``rows[n]`` belongs to observation n (one row shared by
        all observations, or one per prompt).
    rows : tensor, shape (N,), int
        Row of ``cutpoints`` per observation.
    codes : tensor, shape (N,), int
        Observed category 0..K-1.

    Returns
    -------
    tensor, shape (N,)
    """
    n_categories = cutpoints.shape[1] + 1
    # b padded with placeholders so that b_pad[r, k] is the lower and b_pad[r, k+1] the upper
    # cutpoint of category k; the outer ones are replaced by +-_EDGE on the linear predictor.
    zeros = pt.zeros((cutpoints.shape[0], 1))
    b_pad = pt.concatenate([zeros, cutpoints, zeros], axis=1)
    hi = pt.switch(pt.eq(codes, 0), _EDGE, slope * (location - b_pad[rows, codes]))
    lo = pt.switch(pt.eq(codes, n_categories - 1), -_EDGE, slope * (location - b_pad[rows, codes + 1]))
    return -pt.softplus(-hi) - pt.softplus(lo) + pt.log1mexp(lo - hi)
