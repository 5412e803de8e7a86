"""Prediction-powered Bradley–Terry skills: human votes, judge votes and both together (PPI++).

The unit is an *item*, a prompt and a system pair. On item i with design row ``x_i = e_low - e_high``
the human score ``y_i`` is the mean human score of the first system of the pair (1 win, 0.5 tie, 0
loss) and the judge's ``yhat_i`` the mean of its usable verdicts. Bradley–Terry is the logistic
M-estimator ``theta* = argmin E l(theta; x, y)``, ``l(theta; x, y) = -y x'theta + log(1 + exp(x'theta))``
(the Bernoulli log-likelihood, a quasi-likelihood for fractional scores, so ties count half).

With n labelled items L (human and judge) and N unlabelled items U (judge only), the PPI++ estimate
minimises the rectified loss (Angelopoulos, Duchi & Zrnic 2023, "PPI++: Efficient
Prediction-Powered Inference", arXiv:2311.01453, eq. 3; PPI with lambda = 1: Angelopoulos et al.
2023, Science 382, eq. 3)::

    L_lambda(theta) = 1/n sum_L l(theta; y) + lambda (1/N sum_U l(theta; yhat) - 1/n sum_L l(theta; yhat))

and its covariance is the sandwich (PPI++ Theorem 1 and eq. 6)::

    Sigma = H^-1 (Cov_L(g - lambda ghat) + n/N lambda^2 Cov_U(ghat)) H^-1 / n

with ``g = x (mu - y)``, ``ghat = x (mu - yhat)``, ``mu = logistic(x'theta)`` and H the Fisher
information averaged over L and U. lambda is power-tuned (PPI++ eq. 7, the trace over coordinates,
clipped to [0, 1]): lambda = 0 is the human-only estimate, so the combination is never worse than the
humans alone in the limit. Boyeau et al. 2024 ("AutoEval Done Right", arXiv:2403.07008, sec. 3.2) use
this estimator for Bradley–Terry coefficients. ``ppi_py.ppi_logistic_ci`` computes the same for 0/1
outcomes (tests/judges check ours against it); it cannot take ties (fractional scores) nor give the
full covariance the rank-sets need, hence this module.

Skills are identified by their sum being zero (logits). Rank-sets (Chatzi et al. 2024,
"Prediction-Powered Ranking of Large Language Models", NeurIPS, sec. 3) come from simultaneous
Bonferroni intervals on every pairwise difference: system i ranks after every j whose difference
interval lies above it and before every j whose interval lies below it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit
from scipy.stats import norm

from lib.errors import DesignError

MAX_LOGIT = 25.0
"""A skill difference beyond this many logits means the votes give no finite estimate (a system that
never wins or never loses): the fit is refused instead of reporting it."""

_MAX_STEPS = 100
_TOL = 1e-10


@dataclass(frozen=True)
class SkillFit:
    """Skills of K systems (logits, summing to zero) and their covariance.

    Attributes
    ----------
    skill : ndarray (K,)
    cov : ndarray (K, K)
        Sandwich covariance of ``skill``.
    lam : float
        The PPI++ weight of the judge (0: human-only).
    """

    skill: np.ndarray
    cov: np.ndarray
    lam: float

    def interval(self, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
        """Marginal normal intervals ``skill +- z sd``, each (K,)."""
        half = norm.ppf(0.5 + level / 2) * np.sqrt(np.diag(self.cov))
        return self.skill - half, self.skill + half


def design(low: np.ndarray, high: np.ndarray, k: int) -> np.ndarray:
    """Design rows ``x = e_low - e_high`` without the first system's column (its skill is the reference).

    Parameters
    ----------
    low, high : ndarray (m,) of int
        The systems of each item, as indices in 0..k-1.

    Returns
    -------
    ndarray (m, k - 1)
    """
    x = np.zeros((len(low), k))
    rows = np.arange(len(low))
    x[rows, low] += 1.0
    x[rows, high] -= 1.0
    return x[:, 1:]


def _loss(theta, x_l, y, yhat_l, x_u, yhat_u, lam):
    """The rectified loss ``L_lambda`` (module docstring) at theta."""

    def mean_loss(x, target):
        eta = x @ theta
        return float(np.mean(np.logaddexp(0.0, eta) - target * eta)) if len(x) else 0.0

    return mean_loss(x_l, y) + (lam * (mean_loss(x_u, yhat_u) - mean_loss(x_l, yhat_l)) if lam else 0.0)


def _minimise(x_l, y, yhat_l, x_u, yhat_u, lam: float, what: str) -> np.ndarray:
    """Damped Newton on the convex rectified loss (its Hessian ``(1 - lam) H_L + lam H_U`` is positive
    for lam in [0, 1] once the items link every system).

    Raises
    ------
    DesignError
        No finite minimiser (a skill difference passes :data:`MAX_LOGIT`) or a singular Hessian.
    """
    theta = np.zeros(x_l.shape[1])
    args = (x_l, y, yhat_l, x_u, yhat_u, lam)
    n, big_n = len(x_l), max(len(x_u), 1)
    for _ in range(_MAX_STEPS):
        mu_l, mu_u = expit(x_l @ theta), expit(x_u @ theta)
        grad = x_l.T @ (mu_l - y) / n + lam * (x_u.T @ (mu_u - yhat_u) / big_n - x_l.T @ (mu_l - yhat_l) / n)
        hess = (1 - lam) * (x_l.T * (mu_l * (1 - mu_l))) @ x_l / n + lam * (x_u.T * (mu_u * (1 - mu_u))) @ x_u / big_n
        try:
            step = np.linalg.solve(hess, grad)
        except np.linalg.LinAlgError:
            raise DesignError(_no_estimate(what)) from None
        t, base = 1.0, _loss(theta, *args)
        while _loss(theta - t * step, *args) > base + 1e-12 and t > 1e-8:
            t /= 2
        theta = theta - t * step
        if np.abs(theta).max(initial=0.0) > MAX_LOGIT:
            raise DesignError(_no_estimate(what))
        if np.abs(t * step).max(initial=0.0) < _TOL:
            return theta
    raise DesignError(_no_estimate(what))


def _no_estimate(what: str) -> str:
    return (
        f"the {what} give no finite Bradley–Terry skills: some system never wins or never loses against the "
        "others (directly or through other systems), or the pairs judged do not link every system"
    )


def _stats(theta, x_l, y, yhat_l, x_u, yhat_u, use_unlabelled: bool):
    """Per-item gradients on L (human, judge), on U (judge) and the inverse Hessian (ppi_py's
    ``_logistic_get_stats``: H over L and U when the judge is used, else over L)."""
    mu_l, mu_u = expit(x_l @ theta), expit(x_u @ theta)
    w_l, w_u = mu_l * (1 - mu_l), mu_u * (1 - mu_u)
    h = (x_l.T * w_l) @ x_l
    h = (h + (x_u.T * w_u) @ x_u) / (len(x_l) + len(x_u)) if use_unlabelled else h / len(x_l)
    return x_l * (mu_l - y)[:, None], x_l * (mu_l - yhat_l)[:, None], x_u * (mu_u - yhat_u)[:, None], np.linalg.inv(h)


def _power_tuned_lambda(g, ghat, ghat_u, h_inv) -> float:
    """PPI++ eq. 7 (trace form, ppi_py's ``_calc_lam_glm`` with ``clip=True``): the lambda that
    minimises the trace of the asymptotic covariance, clipped to [0, 1]."""
    n, big_n = len(g), len(ghat_u)
    gc, hc = g - g.mean(axis=0), ghat - ghat.mean(axis=0)
    cross = (gc.T @ hc + hc.T @ gc) / n
    var_hat = np.atleast_2d(np.cov(np.concatenate([ghat, ghat_u]).T))
    lam = np.trace(h_inv @ cross @ h_inv) / (2 * (1 + n / big_n) * np.trace(h_inv @ var_hat @ h_inv))
    return float(np.clip(lam, 0.0, 1.0))


def _cov(m: np.ndarray) -> np.ndarray:
    return np.atleast_2d(np.cov(m.T)) if len(m) > 1 else np.zeros((m.shape[1], m.shape[1]))


def rectified_fit(
    x_l: np.ndarray,
    y: np.ndarray,
    yhat_l: np.ndarray,
    x_u: np.ndarray,
    yhat_u: np.ndarray,
    *,
    lam: float | None = None,
    what: str = "votes",
) -> tuple[np.ndarray, np.ndarray, float]:
    """The PPI++ logistic estimate (reference-coded) with its sandwich covariance.

    Parameters
    ----------
    x_l : ndarray (n, d)
        Design rows of the labelled items (:func:`design`).
    y : ndarray (n,)
        Human scores in [0, 1].
    yhat_l : ndarray (n,)
        Judge scores on the labelled items.
    x_u : ndarray (N, d)
    yhat_u : ndarray (N,)
        Design rows and judge scores of the unlabelled items.
    lam : float, optional
        The judge's weight; None tunes it (PPI++ eq. 7), 0 is the classical estimate on L.
    what : str
        Names the votes in messages.

    Returns
    -------
    (theta, cov, lam)
        theta (d,), its covariance (d, d) and the lambda used.

    Raises
    ------
    DesignError
        No finite estimate (:func:`_minimise`).
    """
    if lam is None:
        # lambda is tuned at a consistent first estimate: plain PPI's (as ppi_py does), or the humans' own
        # when the judge-only items alone do not link every system (lambda = 1 has no finite estimate then)
        try:
            theta = _minimise(x_l, y, yhat_l, x_u, yhat_u, 1.0, what)
        except DesignError:
            theta = _minimise(x_l, y, yhat_l, x_u, yhat_u, 0.0, what)
        g, ghat, ghat_u, h_inv = _stats(theta, x_l, y, yhat_l, x_u, yhat_u, True)
        lam = _power_tuned_lambda(g, ghat, ghat_u, h_inv)
    theta = _minimise(x_l, y, yhat_l, x_u, yhat_u, lam, what)
    g, ghat, ghat_u, h_inv = _stats(theta, x_l, y, yhat_l, x_u, yhat_u, lam != 0)
    n = len(x_l)
    middle = _cov(g - lam * ghat) + (n / len(x_u) * lam**2 * _cov(ghat_u) if lam else 0.0)
    return theta, h_inv @ middle @ h_inv / n, lam


def centred(theta: np.ndarray, cov: np.ndarray, lam: float) -> SkillFit:
    """Reference-coded (d = K - 1) estimates as skills summing to zero: ``s = A theta``, ``A = (I -
    11'/K) [0; I]``, covariance ``A cov A'``."""
    k = len(theta) + 1
    a = (np.eye(k) - 1.0 / k)[:, 1:]
    return SkillFit(a @ theta, a @ cov @ a.T, lam)


def skill_fit(x_l, y, yhat_l, x_u, yhat_u, *, lam: float | None = None, what: str = "votes") -> SkillFit:
    """:func:`rectified_fit` as skills summing to zero (:func:`centred`)."""
    return centred(*rectified_fit(x_l, y, yhat_l, x_u, yhat_u, lam=lam, what=what))


def classical_fit(x: np.ndarray, y: np.ndarray, *, what: str) -> SkillFit:
    """The Bradley–Terry M-estimate of one kind of vote alone (lambda = 0), sandwich covariance."""
    empty = np.zeros((0, x.shape[1]))
    return skill_fit(x, y, y, empty, np.zeros(0), lam=0.0, what=what)


def rank_sets(fit: SkillFit, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Rank-sets with simultaneous coverage ``level`` (Chatzi et al. 2024, sec. 3).

    The K (K - 1) / 2 differences ``s_i - s_j`` get Bonferroni intervals at ``1 - (1 - level) / (K (K
    - 1) / 2)``; when they all hold, so do the rank-sets ``[1 + #{j: s_j > s_i surely}, K - #{j: s_i >
    s_j surely}]`` of every system at once.

    Returns
    -------
    (low, high) : ndarray (K,) of int
        Best and worst rank (1 = best) of each system.
    """
    k = len(fit.skill)
    m = k * (k - 1) / 2
    z = norm.ppf(1 - (1 - level) / (2 * m))
    var = np.diag(fit.cov)
    diff = fit.skill[:, None] - fit.skill[None, :]  # s_i - s_j
    sd = np.sqrt(np.maximum(var[:, None] + var[None, :] - 2 * fit.cov, 0.0))
    above = diff - z * sd > 0  # s_i > s_j surely
    return 1 + above.sum(axis=0), k - above.sum(axis=1)
