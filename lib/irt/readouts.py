"""Numpy read-outs of the graded response model: category probabilities, information, EAP.

Notation as in :mod:`lib.irt.model`: ``theta`` is a comparison's ability, ``alpha`` (J,) the
prompts' discriminations and ``b`` (J, K-1) their ordered thresholds in logits, so that
``P(u >= k | theta) = logistic(alpha_j (theta - b_jk))`` for k = 1..K-1 (Samejima 1969).

Item parameters may carry leading draw dimensions, ``alpha`` (..., J) and ``b`` (..., J, K-1);
the results then keep those dimensions in front (posterior draws are averaged by the caller, or
by :func:`eap`, which marginalises them).
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit, logsumexp

DEFAULT_GRID = np.linspace(-6.0, 6.0, 241)
"""Theta grid for quadrature: step 0.05, fine against posterior SDs down to about 0.05."""


LOG_FLOOR = -700.0
"""Smallest per-rating log-likelihood used in sums (exp(-700) ~ 1e-304)."""


def _log1mexp(x: np.ndarray) -> np.ndarray:
    """log(1 - exp(x)) for x <= 0, accurate at both ends (Maechler 2012)."""
    with np.errstate(divide="ignore"):
        return np.where(x > -np.log(2.0), np.log(-np.expm1(x)), np.log1p(-np.exp(x)))


def _softplus(x: np.ndarray) -> np.ndarray:
    return np.logaddexp(0.0, x)


def _log_prob_between(hi: np.ndarray, lo: np.ndarray) -> np.ndarray:
    """``log(sigmoid(hi) - sigmoid(lo))`` for logits ``hi >= lo`` (infinite ones allowed), computed
    stably as ``-softplus(-hi) - softplus(lo) + log1mexp(lo - hi)``: the GRM's category
    log-likelihood, numpy's one copy (the model's pytensor one is in :mod:`lib.irt.model`)."""
    with np.errstate(invalid="ignore"):
        return -_softplus(-hi) - _softplus(lo) + _log1mexp(lo - hi)


def _edges(b: np.ndarray) -> np.ndarray:
    """Thresholds (..., J, K-1) padded to every category's two edges (..., J, K+1): -inf, b, +inf."""
    lead = b.shape[:-1]
    return np.concatenate([np.full((*lead, 1), -np.inf), b, np.full((*lead, 1), np.inf)], axis=-1)


def log_category_probs(theta: np.ndarray, alpha: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Log probability of every category, computed stably.

    ``log P_k = log(sigmoid(hi) - sigmoid(lo)) = -softplus(-hi) - softplus(lo) + log1mexp(lo - hi)``
    with ``hi = alpha (theta - b_k)``, ``lo = alpha (theta - b_k+1)``, ``b_0 = -inf``, ``b_K = +inf``.

    Parameters
    ----------
    theta : array_like, shape (n_theta,)
    alpha : ndarray, shape (..., J), positive
    b : ndarray, shape (..., J, K-1), ordered along the last axis

    Returns
    -------
    ndarray, shape (..., n_theta, J, K), float64
    """
    theta = np.atleast_1d(np.asarray(theta, dtype=float))
    alpha = np.asarray(alpha, dtype=float)
    b = np.asarray(b, dtype=float)
    # (..., n_theta, J, K+1); +-inf edges give logits of -+inf, handled by softplus/log1mexp.
    z = alpha[..., None, :, None] * (theta[:, None, None] - _edges(b)[..., None, :, :])
    return _log_prob_between(z[..., :-1], z[..., 1:])


def judgment_probs(theta: np.ndarray, alpha: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``P(u = k)`` of judgments that each have a theta of their own (a prompt or annotator effect added),
    computed as :func:`log_category_probs` does.

    Parameters
    ----------
    theta : ndarray, shape (...)
    alpha : ndarray, broadcasting to ``theta``
    b : ndarray, broadcasting to (..., K-1), ordered along the last axis

    Returns
    -------
    ndarray, shape (..., K), float64; sums to 1 over the last axis.
    """
    b = np.asarray(b, dtype=float)
    z = np.asarray(alpha, dtype=float)[..., None] * (np.asarray(theta, dtype=float)[..., None] - _edges(b))
    return np.exp(_log_prob_between(z[..., :-1], z[..., 1:]))


def category_probs(theta: np.ndarray, alpha: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Category response curves ``P(u = k | theta)`` of the GRM: the exponential of :func:`log_category_probs`
    (the same parameters and shape, (..., n_theta, J, K)); sums to 1 over the last axis."""
    return np.exp(log_category_probs(theta, alpha, b))


def expected_score(theta: np.ndarray, alpha: np.ndarray, b: np.ndarray, categories: np.ndarray) -> np.ndarray:
    """Expected score ``sum_k categories[k] P(u = k | theta)`` (e.g. the expected net rating).

    Parameters
    ----------
    theta : array_like, shape (n_theta,)
    alpha, b : item parameters, shapes (..., J) and (..., J, K-1)
    categories : array_like, shape (K,)
        Value of each category, e.g. ``-3..3`` for net ratings.

    Returns
    -------
    ndarray, shape (..., n_theta, J)
    """
    return category_probs(theta, alpha, b) @ np.asarray(categories, dtype=float)


def item_information(theta: np.ndarray, alpha: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Fisher information of each prompt about theta under the GRM.

    Samejima's graded-response information (Samejima 1969, Psychometrika Monograph 17; in the
    form of Baker & Kim 2004, *Item Response Theory*, 2nd ed., sec. 8.4)::

        I_j(theta) = sum_k (P*'_jk - P*'_j,k+1)^2 / P_jk,   P*'_jk = alpha_j P*_jk (1 - P*_jk)

    where ``P*_jk = P(u >= k)`` (``P*_j0 = 1``, ``P*_jK = 0``) and ``P_jk = P*_jk - P*_j,k+1``.
    It equals ``-E[d^2 log P(u | theta) / d theta^2]``.

    Parameters
    ----------
    theta, alpha, b
        As in :func:`log_category_probs`.

    Returns
    -------
    ndarray, shape (..., n_theta, J), float64, non-negative, in 1/theta^2 units.
    """
    theta = np.atleast_1d(np.asarray(theta, dtype=float))
    alpha = np.asarray(alpha, dtype=float)
    b = np.asarray(b, dtype=float)
    pstar = expit(alpha[..., None, :, None] * (theta[:, None, None] - b[..., None, :, :]))
    pad_shape = (*pstar.shape[:-1], 1)
    pstar = np.concatenate([np.ones(pad_shape), pstar, np.zeros(pad_shape)], axis=-1)
    dstar = alpha[..., None, :, None] * pstar * (1.0 - pstar)  # (..., n, J, K+1)
    dprob = dstar[..., :-1] - dstar[..., 1:]
    prob = category_probs(theta, alpha, b)
    terms = np.divide(dprob**2, prob, out=np.zeros_like(prob), where=prob > 0)
    return terms.sum(axis=-1)


def test_information(
    theta: np.ndarray, alpha: np.ndarray, b: np.ndarray, items: np.ndarray | None = None
) -> np.ndarray:
    """Test information: the sum of GRM item informations over the chosen prompts.

    Parameters
    ----------
    theta : array_like, shape (n_theta,)
    alpha, b : item parameters, shapes (..., J) and (..., J, K-1)
    items : array_like of int or bool, optional
        Prompts to include (indices or a (J,) mask); all by default.

    Returns
    -------
    ndarray, shape (..., n_theta). ``1 / sqrt(test_information)`` is the asymptotic SE of theta.
    """
    info = item_information(theta, alpha, b)
    if items is not None:
        info = info[..., np.asarray(items)]
    return info.sum(axis=-1)


def item_loglik(codes_row: np.ndarray, alpha: np.ndarray, b: np.ndarray, grid: np.ndarray | None = None) -> np.ndarray:
    """Log-likelihood of one comparison's rating on each prompt at each grid point.

    Parameters
    ----------
    codes_row : array_like of int, shape (J,)
        Category index 0..K-1, -1 where missing (missing prompts contribute 0).
    alpha, b : item parameters, shapes (..., J) and (..., J, K-1)
    grid : array_like, shape (G,), optional
        Theta values; :data:`DEFAULT_GRID` by default.

    Returns
    -------
    ndarray, shape (..., J, G)
    """
    grid = DEFAULT_GRID if grid is None else np.asarray(grid, dtype=float)
    codes_row = np.asarray(codes_row, dtype=np.int64)
    alpha = np.asarray(alpha, dtype=float)
    b = np.asarray(b, dtype=float)
    observed = codes_row >= 0
    index = np.where(observed, codes_row, 0)
    edges = _edges(b)
    prompts = np.arange(len(codes_row))
    # Only the observed category's two edges: K times less work than all category probabilities.
    e_hi, e_lo = edges[..., prompts, index], edges[..., prompts, index + 1]  # (..., J)
    slope = alpha[..., None, :]
    hi = slope * (grid[:, None] - e_hi[..., None, :])  # (..., G, J)
    lo = slope * (grid[:, None] - e_lo[..., None, :])
    picked = _log_prob_between(hi, lo)
    # A category impossible under the estimate (tied thresholds) gets log p = -700, not -inf, so
    # that sums over chosen prompts (mask x log-likelihood) stay finite.
    picked = np.where(observed, np.maximum(picked, LOG_FLOOR), 0.0)
    return np.swapaxes(picked, -1, -2)


def posterior_on_grid(
    loglik: np.ndarray, grid: np.ndarray | None = None, log_weights: np.ndarray | None = None
) -> np.ndarray:
    """Normalised posterior of theta on the grid from a summed log-likelihood.

    Parameters
    ----------
    loglik : ndarray, shape (..., S, G)
        Log-likelihood of the observed ratings at each grid point, per draw s of the item
        parameters (S = 1 for a point estimate).
    grid : array_like, shape (G,), optional
    log_weights : ndarray, shape (S,), optional
        Log importance weights of the draws (normalised or not); equal weights by default.

    Returns
    -------
    ndarray, shape (..., G): posterior weights summing to 1, prior theta ~ N(0, 1), item
    parameters marginalised as ``p(theta | u) ∝ N(theta) sum_s w_s p(u | theta, items_s)``.
    """
    grid = DEFAULT_GRID if grid is None else np.asarray(grid, dtype=float)
    n_draws = loglik.shape[-2]
    if n_draws == 1:  # a point estimate: nothing to marginalise
        logpost = loglik[..., 0, :] - 0.5 * grid**2
    else:
        lw = np.full(n_draws, -np.log(n_draws)) if log_weights is None else log_weights - logsumexp(log_weights)
        logpost = logsumexp(loglik + lw[:, None], axis=-2) - 0.5 * grid**2
    logpost -= logpost.max(axis=-1, keepdims=True)
    post = np.exp(logpost)
    return post / post.sum(axis=-1, keepdims=True)


def grid_moments(post: np.ndarray, grid: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Mean and SD of theta from posterior weights on the grid, shapes (...,) each."""
    grid = DEFAULT_GRID if grid is None else np.asarray(grid, dtype=float)
    mean = post @ grid
    var = post @ grid**2 - mean**2
    return mean, np.sqrt(np.maximum(var, 0.0))


def eap(
    codes_row: np.ndarray,
    alpha: np.ndarray,
    b: np.ndarray,
    grid: np.ndarray | None = None,
    log_weights: np.ndarray | None = None,
) -> tuple[float, float]:
    """Expected-a-posteriori ability of one comparison by quadrature (Bock & Mislevy 1982).

    Parameters
    ----------
    codes_row : array_like of int, shape (J,)
        Category index 0..K-1 per prompt, -1 where missing.
    alpha : ndarray, shape (J,) or (S, J)
        Discriminations; with S posterior draws the likelihood is averaged over draws, so item
        uncertainty widens the posterior SD.
    b : ndarray, shape (J, K-1) or (S, J, K-1)
    grid : array_like, shape (G,), optional
        Theta grid (:data:`DEFAULT_GRID`, -6..6 by 0.05, by default).
    log_weights : ndarray, shape (S,), optional
        Importance weights of the draws (e.g. Pareto-smoothed leave-one-out weights).

    Returns
    -------
    mean, sd : float
        Posterior mean and SD of theta under the prior N(0, 1). With no observed prompt they are
        the prior's, 0 and 1.
    """
    alpha = np.asarray(alpha, dtype=float)
    b = np.asarray(b, dtype=float)
    if alpha.ndim == 1:
        alpha, b = alpha[None], b[None]
    loglik = item_loglik(codes_row, alpha, b, grid).sum(axis=-2)  # (S, G)
    mean, sd = grid_moments(posterior_on_grid(loglik, grid, log_weights), grid)
    return float(mean), float(sd)
