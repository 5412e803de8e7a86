"""Prediction-powered Bradley–Terry skills: human votes, judge votes and both together (PPI++).

The unit is an *item*, a prompt and a system pair. On item i with design row ``x_i = e_low - e_high``
the human score ``y_i`` is the mean human score of the first system of the pair (1 win, 0.5 tie, 0
loss) and judge k's ``yhat_ik`` the mean of its usable verdicts. Bradley–Terry is the logistic
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
information averaged over L and U. Boyeau et al. 2024 ("AutoEval Done Right", arXiv:2403.07008,
sec. 3.2) use this estimator for Bradley–Terry coefficients. ``ppi_py.ppi_logistic_ci`` computes the same
for 0/1 outcomes (tests/judges check ours against it); it cannot take ties (fractional scores), several
judges, clusters, nor give the full covariance the rank-sets need, hence this module.

**Several judges.** Each judge k gets its own weight ``lambda_k`` (``lambda ghat`` above becomes
``sum_k lambda_k ghat_k``): the judges' predictions are control variates of the human gradient, weighted as
multiple control variates are (Lavenberg & Welch 1981; Glynn & Szechtman 2002), i.e. the variance-minimising
mixture of the predictors ("Prediction-powered inference by mixture of experts", arXiv:2604.27892, 2026;
several predictors in PPI: Cowen-Breen et al. 2026, "Multiple-Prediction-Powered Inference",
arXiv:2603.27414). Since the loss is linear in the score, the estimate is PPI++ with the single prediction
``sum_k lambda_k yhat_k / Lambda`` and weight ``Lambda = sum_k lambda_k``.

**Power tuning.** The weights minimise the trace of the estimated covariance of the skills (summing to zero)
itself, at a first, consistent estimate (the human-only one), over ``lambda_k >= 0`` and ``Lambda <= 1``
(PPI++ eq. 7 clips one lambda to [0, 1]; ``Lambda <= 1`` keeps the rectified loss convex). The trace is
quadratic in the weights, so its minimum is found exactly (:func:`optimal_weights`); with one judge this is
eq. 7 with each part's own covariance. All weights 0 is the human-only estimate. With several judges, each
judge's own tuned weight (the others at 0) is refitted too and the narrowest (trace) of these and the joint
fit is kept: several judges are never worse than the best one.

**Prompt clusters.** When a prompt carries several items (pairs), their gradients are not independent:
the meat of the sandwich is then cluster-robust by prompt (Liang & Zeger 1986; CR1, factor G / (G - 1) for
G prompts), each prompt's labelled and unlabelled gradients summed after centring each part on its
mean. With every prompt a single item this is the independent formula above up to the small-sample
factors (``lib.judges.run`` clusters only when some prompt carries several items).

Skills are identified by their sum being zero (logits). Rank-sets (Chatzi et al. 2024,
"Prediction-Powered Ranking of Large Language Models", NeurIPS, sec. 3) come from simultaneous intervals
on every pairwise difference: system i ranks after every j whose difference interval lies above it and
before every j whose interval lies below it. The simultaneous critical value is the Gaussian max-t, the
95% quantile of ``max_ij |Z_i - Z_j| / sd(Z_i - Z_j)`` for ``Z ~ N(0, Sigma)`` (Hothorn, Bretz & Westfall
2008; Chatzi et al. 2024), by quasi-Monte Carlo: sharper than Bonferroni, which ignores the differences'
correlation.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.optimize import minimize
from scipy.sparse import csr_matrix
from scipy.special import expit, ndtri
from scipy.stats import norm, qmc

from lib.engine.blas import one_blas_thread
from lib.errors import DesignError
from lib.ranking.bradley_terry import Loss, gram, pair_design

MAX_T_DRAWS = 2**15
"""Quasi-Monte Carlo draws of the max-t critical value (:func:`max_t_critical`): its error is about 0.003
(standard deviation over seeds, against Tukey's exact value for 2 to 20 independent systems), far below the
critical value's distance to Bonferroni's (3.54 against 3.66 for 20 systems)."""


@dataclass(frozen=True)
class SkillFit:
    """Skills of K systems (logits, summing to zero) and their covariance.

    Attributes
    ----------
    skill : ndarray (K,)
    cov : ndarray (K, K)
        Sandwich covariance of ``skill``.
    lam : float
        The total PPI++ weight of the judges, ``sum_k lambda_k`` (0: human-only).
    weights : ndarray (J,)
        Each judge's weight ``lambda_k`` (empty for a fit of one kind of vote).
    """

    skill: np.ndarray
    cov: np.ndarray
    lam: float
    weights: np.ndarray = field(default_factory=lambda: np.zeros(0))

    def interval(self, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
        """Marginal normal intervals ``skill +- z sd``, each (K,)."""
        half = norm.ppf(0.5 + level / 2) * np.sqrt(np.diag(self.cov))
        return self.skill - half, self.skill + half


def design(low: np.ndarray, high: np.ndarray, k: int) -> np.ndarray:
    """Design rows ``x = e_low - e_high`` without the first system's column (its skill is the reference):
    the Bradley–Terry core's encoding (:func:`lib.ranking.bradley_terry.pair_design`), dense as ``ppi_py`` takes it.

    Parameters
    ----------
    low, high : ndarray (m,) of int
        The systems of each item, as indices in 0..k-1.

    Returns
    -------
    ndarray (m, k - 1)
    """
    return pair_design(np.asarray(low), np.asarray(high), k, reference=0).toarray()


def rectified_loss(x_l, y, yhat_l, x_u, yhat_u, lam: float) -> Loss:
    """The rectified loss ``L_lambda`` (module docstring) of one (combined) prediction as one Bradley–Terry
    loss (:class:`lib.ranking.bradley_terry.Loss`): the labelled items with the human scores and weight 1 / n,
    the unlabelled ones with the prediction and weight lambda / N, and the labelled ones again with the
    prediction and weight -lambda / n (its Hessian ``(1 - lambda) H_L + lambda H_U`` is positive for lambda in
    [0, 1] once the items link every system)."""
    n, big_n = len(x_l), max(len(x_u), 1)
    if not lam:
        return Loss(x_l, y, np.full(n, 1.0 / n))
    weight = np.concatenate([np.full(n, 1.0 / n), np.full(len(x_u), lam / big_n), np.full(n, -lam / n)])
    return Loss(np.vstack([x_l, x_u, x_l]), np.concatenate([y, yhat_u, yhat_l]), weight)


def _combined(yhat: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, float]:
    """The single prediction ``sum_k w_k yhat_k / Lambda`` and ``Lambda``: the rectified loss of several
    weighted judges is that of this prediction with weight Lambda (the loss is linear in the score)."""
    total = float(weights.sum())
    return (yhat @ weights / total if total > 0 else yhat.mean(axis=1)), total


class _Units:
    """The meat of the sandwich as a sum over independent units (items, or prompts when clustered).

    ``meat(w) = sum_c f_c (u_c - V_c w)(u_c - V_c w)'``, ``u_c`` the unit's summed centred human gradients /
    n, ``V_c`` (d, J) its judges' centred gradients (labelled / n minus unlabelled / N). Items: ``f`` is n / (n
    - 1) on L and N / (N - 1) on U, which gives ``Cov_L(g - sum w ghat) / n + Cov_U(sum w ghat) / N``;
    prompts: ``f = G / (G - 1)``.
    """

    def __init__(self, g, ghat_l, ghat_u, clusters_l, clusters_u):
        n, big_n = len(g), len(ghat_u)
        u_l = (g - g.mean(axis=0)) / n
        v_l = (ghat_l - ghat_l.mean(axis=0)) / n
        v_u = -(ghat_u - ghat_u.mean(axis=0)) / big_n if big_n else ghat_u
        u_u = np.zeros(v_u.shape[:2])
        u, v = np.concatenate([u_l, u_u]), np.concatenate([v_l, v_u])
        if clusters_l is None:
            f = np.concatenate([np.full(n, n / (n - 1) if n > 1 else 0.0), np.full(big_n, big_n / max(big_n - 1, 1))])
        else:
            codes, names = pd.factorize(np.concatenate([np.asarray(clusters_l), np.asarray(clusters_u)]))
            sums = csr_matrix((np.ones(len(codes)), (codes, np.arange(len(codes)))), shape=(len(names), len(codes)))
            u, v = sums @ u, (sums @ v.reshape(len(v), -1)).reshape(len(names), *v.shape[1:])
            f = np.full(len(names), len(names) / (len(names) - 1) if len(names) > 1 else 0.0)
        self.u, self.v, self.f = u, v, f

    def meat(self, weights: np.ndarray) -> np.ndarray:
        r = self.u - self.v @ weights
        return (r.T * self.f) @ r

    def trace_terms(self, to_skill: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(quad, lin)`` with ``tr(T meat(w) T') = w' quad w - 2 lin' w + const`` for ``T = to_skill`` (K, d)."""
        a = self.u @ to_skill.T  # (c, K)
        b = np.tensordot(self.v, to_skill, axes=([1], [1]))  # (c, J, K)
        weighted = b * self.f[:, None, None]
        return np.tensordot(weighted, b, axes=([0, 2], [0, 2])), np.tensordot(weighted, a, axes=([0, 2], [0, 1]))


def optimal_weights(quad: np.ndarray, lin: np.ndarray) -> np.ndarray:
    """The judges' weights minimising ``w' quad w - 2 lin' w`` over ``w >= 0``, ``sum w <= 1``.

    One judge: PPI++ eq. 7's ``lin / quad`` clipped to [0, 1]. Several: each judge alone is a candidate and
    the best of them starts a sequential quadratic programme (``scipy.optimize.minimize``, SLSQP) on this
    convex quadratic programme; its answer is kept only when it is no worse than that start.

    Parameters
    ----------
    quad : ndarray (J, J)
        Positive semi-definite.
    lin : ndarray (J,)

    Returns
    -------
    ndarray (J,)
    """
    scale = max(float(np.trace(quad)), float(np.abs(lin).max(initial=0.0))) or 1.0
    quad, lin = quad / scale, lin / scale
    j = len(lin)

    def objective(w):
        return float(w @ quad @ w - 2 * lin @ w)

    start = np.zeros(j)
    for k in range(j):
        alone = np.zeros(j)
        alone[k] = np.clip(lin[k] / quad[k, k], 0.0, 1.0) if quad[k, k] > 0 else 0.0
        if objective(alone) < objective(start):
            start = alone
    if j == 1:
        return start
    found = minimize(
        objective,
        start,
        jac=lambda w: 2 * (quad @ w - lin),
        bounds=[(0.0, 1.0)] * j,
        constraints=[{"type": "ineq", "fun": lambda w: 1.0 - w.sum(), "jac": lambda w: -np.ones(j)}],
        method="SLSQP",
        options={"ftol": 1e-14, "maxiter": 500},
    ).x
    found = np.clip(found, 0.0, 1.0)
    found = found / max(1.0, float(found.sum()))
    return found if objective(found) <= objective(start) else start


def _stats(theta, x_l, y, yhat_l, x_u, yhat_u, use_unlabelled: bool):
    """Per-item gradients on L (human (n, d); judges (n, d, J)), on U (judges (N, d, J)) and the inverse
    Hessian (ppi_py's ``_logistic_get_stats``: H over L and U when the judges are used, else over L)."""
    mu_l, mu_u = expit(x_l @ theta), expit(x_u @ theta)
    h = gram(x_l, mu_l * (1 - mu_l))
    h = (h + gram(x_u, mu_u * (1 - mu_u))) / (len(x_l) + len(x_u)) if use_unlabelled else h / len(x_l)
    g = x_l * (mu_l - y)[:, None]
    ghat_l = x_l[:, :, None] * (mu_l[:, None] - yhat_l)[:, None, :]
    ghat_u = x_u[:, :, None] * (mu_u[:, None] - yhat_u)[:, None, :]
    return g, ghat_l, ghat_u, np.linalg.inv(h)


def rectified_fit(
    x_l: np.ndarray,
    y: np.ndarray,
    yhat_l: np.ndarray,
    x_u: np.ndarray,
    yhat_u: np.ndarray,
    *,
    lam: float | np.ndarray | None = None,
    clusters_l: np.ndarray | None = None,
    clusters_u: np.ndarray | None = None,
    what: str = "votes",
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The PPI++ logistic estimate (reference-coded) with its sandwich covariance, for one or several judges.

    Parameters
    ----------
    x_l : ndarray (n, d)
        Design rows of the labelled items (:func:`design`).
    y : ndarray (n,)
        Human scores in [0, 1].
    yhat_l : ndarray (n,) or (n, J)
        The judges' scores on the labelled items (one column per judge).
    x_u : ndarray (N, d)
    yhat_u : ndarray (N,) or (N, J)
        Design rows and judges' scores of the unlabelled items.
    lam : float or ndarray (J,), optional
        The judges' weights; None tunes them (module docstring), 0 is the classical estimate on L.
    clusters_l, clusters_u : ndarray (n,) and (N,), optional
        The prompt of each item: given, the covariance is cluster-robust by prompt (module docstring).
    what : str
        Names the votes in messages.

    Returns
    -------
    (theta, cov, weights)
        theta (d,), its covariance (d, d) and the weights used (J,).

    Raises
    ------
    DesignError
        No finite estimate (:meth:`lib.ranking.bradley_terry.Loss.minimise`).
    """
    j = 1 if np.ndim(yhat_l) == 1 else np.shape(yhat_l)[1]
    yhat_l, yhat_u = np.reshape(yhat_l, (len(x_l), j)), np.reshape(yhat_u, (len(x_u), j))
    clusters = (clusters_l, clusters_u)
    with one_blas_thread():  # a small problem: BLAS threads only contend (lib.engine.blas)
        if lam is not None:
            weights = np.broadcast_to(np.asarray(lam, dtype=float), (j,)).copy()
            return _final(x_l, y, yhat_l, x_u, yhat_u, weights, clusters, what)
        # tuned at a consistent first estimate that every subset of the judges shares: the humans' own, or plain
        # PPI with the judges' mean when the human items alone do not link every system
        try:
            theta = rectified_loss(x_l, y, yhat_l.mean(axis=1), x_u, yhat_u.mean(axis=1), 0.0).minimise(what=what)
        except DesignError:
            theta = rectified_loss(x_l, y, yhat_l.mean(axis=1), x_u, yhat_u.mean(axis=1), 1.0).minimise(what=what)
        g, ghat_l, ghat_u, h_inv = _stats(theta, x_l, y, yhat_l, x_u, yhat_u, True)
        a = _to_skills(x_l.shape[1])
        quad, lin = _Units(g, ghat_l, ghat_u, *clusters).trace_terms(a @ h_inv)
        # the joint weights, and each judge alone (what a file of that judge alone would be tuned to): the
        # narrowest at the final estimate, so that several judges are never worse than the best one
        candidates = [optimal_weights(quad, lin)]
        candidates += [optimal_weights(quad[k, k][None, None], lin[k][None]) * np.eye(j)[k] for k in range(j) if j > 1]
        fits = [_final(x_l, y, yhat_l, x_u, yhat_u, w, clusters, what, start=theta) for w in candidates]
        return min(fits, key=lambda fit: float(np.trace(a @ fit[1] @ a.T)))


def _final(x_l, y, yhat_l, x_u, yhat_u, weights, clusters, what, start=None):
    """The estimate at these judges' weights and its sandwich covariance: ``(theta, cov, weights)``."""
    (comb_l, total), (comb_u, _) = _combined(yhat_l, weights), _combined(yhat_u, weights)
    theta = rectified_loss(x_l, y, comb_l, x_u, comb_u, total).minimise(start, what=what)
    g, ghat_l, ghat_u, h_inv = _stats(theta, x_l, y, yhat_l, x_u, yhat_u, total != 0)
    meat = _Units(g, ghat_l, ghat_u, *clusters).meat(weights)
    return theta, h_inv @ meat @ h_inv, weights


def _to_skills(d: int) -> np.ndarray:
    """``A = (I - 11'/K) [0; I]`` (K, d = K - 1): reference-coded estimates to skills summing to zero."""
    return (np.eye(d + 1) - 1.0 / (d + 1))[:, 1:]


def centred(theta: np.ndarray, cov: np.ndarray, weights: float | np.ndarray) -> SkillFit:
    """Reference-coded (d = K - 1) estimates as skills summing to zero: ``s = A theta``, ``A = (I -
    11'/K) [0; I]``, covariance ``A cov A'``."""
    a = _to_skills(len(theta))
    weights = np.atleast_1d(np.asarray(weights, dtype=float))
    return SkillFit(a @ theta, a @ cov @ a.T, float(weights.sum()), weights)


def skill_fit(
    x_l, y, yhat_l, x_u, yhat_u, *, lam=None, clusters_l=None, clusters_u=None, what: str = "votes"
) -> SkillFit:
    """:func:`rectified_fit` as skills summing to zero (:func:`centred`)."""
    return centred(
        *rectified_fit(x_l, y, yhat_l, x_u, yhat_u, lam=lam, clusters_l=clusters_l, clusters_u=clusters_u, what=what)
    )


def classical_fit(x: np.ndarray, y: np.ndarray, *, what: str, clusters: np.ndarray | None = None) -> SkillFit:
    """The Bradley–Terry M-estimate of one kind of vote alone (weight 0), sandwich covariance (cluster-robust by
    prompt when ``clusters`` gives each item's prompt)."""
    empty = np.zeros((0, x.shape[1]))
    none = None if clusters is None else np.zeros(0, dtype=np.asarray(clusters).dtype)
    fit = skill_fit(x, y, y, empty, np.zeros(0), lam=0.0, clusters_l=clusters, clusters_u=none, what=what)
    return SkillFit(fit.skill, fit.cov, 0.0)


def max_t_critical(cov: np.ndarray, level: float = 0.95, *, seed: int = 0, draws: int = MAX_T_DRAWS) -> float:
    """The simultaneous critical value of every pairwise difference ``s_i - s_j`` (Gaussian max-t).

    The ``level`` quantile of ``max_{i<j} |Z_i - Z_j| / sd(Z_i - Z_j)``, ``Z ~ N(0, cov)``, by ``draws``
    scrambled Sobol draws with a fixed seed (``scipy.stats.qmc.MultivariateNormalQMC``; Hothorn, Bretz &
    Westfall 2008, sec. 3, compute the same quantile by quasi-Monte Carlo; Chatzi et al. 2024). With
    independent equal-variance skills it is Tukey's studentized range / sqrt(2). Never above Bonferroni's
    ``z_{1 - (1 - level) / (2 m)}`` for the m differences, which bounds it.

    Parameters
    ----------
    cov : ndarray (K, K)
        Covariance of the skills (may be singular: skills summing to zero).
    level : float
        Simultaneous coverage.

    Returns
    -------
    float
        The critical value z: every ``|s_i - s_j - (true difference)| <= z sd_ij`` at once with probability ``level``.
    """
    k = len(cov)
    i, j = np.triu_indices(k, 1)
    var = np.diag(cov)
    sd = np.sqrt(np.maximum(var[i] + var[j] - 2 * cov[i, j], 0.0))
    i, j, sd = i[sd > 0], j[sd > 0], sd[sd > 0]
    if not len(sd):
        return float(ndtri(0.5 + level / 2))
    values, vectors = np.linalg.eigh(cov)  # a root of a singular covariance too
    root = vectors * np.sqrt(np.maximum(values, 0.0))
    with one_blas_thread():
        z = _standard_normal(k, draws, seed) @ root.T  # as MultivariateNormalQMC(cov_root=root.T) draws
        maxima = [(np.abs(c[:, i] - c[:, j]) / sd).max(axis=1) for c in np.array_split(z, -(-draws // 2048))]
    bonferroni = float(ndtri(1 - (1 - level) / (2 * len(sd))))  # a valid bound: never above it
    return min(float(np.quantile(np.concatenate(maxima), level)), bonferroni)


@functools.lru_cache(maxsize=16)
def _standard_normal(k: int, draws: int, seed: int) -> np.ndarray:
    """Scrambled Sobol draws of N(0, I_k), kept: they do not depend on the covariance (read-only)."""
    z = qmc.MultivariateNormalQMC(np.zeros(k), seed=seed).random(draws)
    z.flags.writeable = False
    return z


def rank_sets(fit: SkillFit, level: float = 0.95, *, z: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Rank-sets with simultaneous coverage ``level`` (Chatzi et al. 2024, sec. 3).

    Every difference ``s_i - s_j`` gets the interval ``+- z sd_ij`` with the max-t critical value
    (:func:`max_t_critical`); when they all hold, so do the rank-sets ``[1 + #{j: s_j > s_i surely}, K -
    #{j: s_i > s_j surely}]`` of every system at once.

    Parameters
    ----------
    fit : SkillFit
    level : float
    z : float, optional
        Another critical value (e.g. Bonferroni's, to compare); None: the max-t one.

    Returns
    -------
    (low, high) : ndarray (K,) of int
        Best and worst rank (1 = best) of each system.
    """
    k = len(fit.skill)
    z = max_t_critical(fit.cov, level) if z is None else z
    var = np.diag(fit.cov)
    diff = fit.skill[:, None] - fit.skill[None, :]  # s_i - s_j
    sd = np.sqrt(np.maximum(var[:, None] + var[None, :] - 2 * fit.cov, 0.0))
    above = diff - z * sd > 0  # s_i > s_j surely
    return 1 + above.sum(axis=0), k - above.sum(axis=1)
