"""The ratings likelihood with each prompt's effect and discrimination integrated out (adaptive Gauss-Hermite).

In the ratings likelihood (:func:`lib.ranking.model.ratings_terms`) a score y of system k on prompt j has
P(y >= c) = logistic(alpha_j (s_k + eta_j - b_c)), with eta_j = sigma_eta z_j and log alpha_j = 0.5 w_j
(z_j, w_j ~ N(0, 1); the model's log alpha_j ~ N(0, 0.5)). The prompt's (w_j, z_j) enter only its own scores, so
the likelihood of the rest (the skills, the ordered thresholds b, sigma_eta) is a product over prompts of
two-dimensional integrals::

    p(scores_j | s, b, sigma_eta) = integral of prod_{i in j} p(y_i | exp(0.5 w) (s_k + sigma_eta z - b)) phi(w) phi(z)

each taken by a product rule of :data:`lib.ranking.marginal.NODES` x NODES Gauss-Hermite nodes, adaptive
(Pinheiro & Bates 1995, lme4's nAGQ for a vector random effect): centred at the prompt's conditional mode of
(w_j, z_j) and turned and scaled by the Cholesky factor of its conditional covariance there, with weights
w_k |L_j| phi(v_jk) / phi(x_k) (the prior exactly, :meth:`RatingsMarginal.adapt`). Where each (prompt, system) cell
holds one score alpha_j = 1 (:func:`lib.ranking.model.one_score_a_cell`) and the integral is one-dimensional, in
z_j. The search (Newton steps with the exact Hessian, the nodes placed again at each mode found), the Laplace
approximation at the mode and the Gaussian draws are the votes' (:mod:`lib.ranking.marginal`): this module holds
the ratings' passes over the scores (numpy, one (scores x nodes) array at a time) and their read-outs.

A score is two win terms and a gap (the full model's :func:`lib.irt.model.ordinal_logp`)::

    log P(y = c) = log sigmoid(t1) + log sigmoid(-t2) + log(1 - exp(-(t1 - t2))),
    t1 = alpha (m - b_c), t2 = alpha (m - b_{c+1}), m = s_k + sigma_eta z

(the first term absent for the lowest category, the second for the highest, the gap for both), whose derivatives
in m, b_c, b_{c+1} are in closed form (:meth:`RatingsMarginal._pass`); sigma_eta enters through m (dm / dsigma =
z), the thresholds as the full model's ordered transform (b_1 = y_1, b_c = b_{c-1} + exp(y_c)) and sigma_eta as its
logarithm, with their Jacobians. Annotator severities (a global per annotator, not a prompt's) are not
integrated here: a fit with them runs NUTS (:func:`lib.ranking.fit.nuts_reason`), and :func:`laplace_fit` says
so where asked.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import sparse
from scipy.special import expit, logsumexp

from lib.engine.blas import one_blas_thread
from lib.inference.progress import Tracker
from lib.inference.samplers import Draws
from lib.irt.settings import B_PRIOR_SD, LOG_ALPHA_PRIOR_SD
from lib.ranking.marginal import (
    LARGEST_SCALE,
    NODES,
    WARM_TOL,
    Layout,
    _Pass,
    adaptive_mode,
    as_draws,
    gaussian_rows,
    newton,
    normal_rule,
    quadrature_draws,
    skill_basis,
)
from lib.ranking.model import SIGMA_ETA_PRIOR_SD, SKILL_PRIOR_SD

MODE_STEPS = 100
HALVINGS = 60
MODE_TOL = 1e-10
"""A prompt's conditional mode of (w_j, z_j): at most MODE_STEPS Newton steps (each at most 1 in every coordinate,
halved at most HALVINGS times until the log posterior rises), until none moves more than MODE_TOL."""
NOTE = (
    "MAP + Laplace on the skills, thresholds and sigma_eta with each prompt's effect eta_j{alpha} integrated out "
    "exactly (adaptive Gauss-Hermite quadrature, {nodes} nodes a prompt); eta_j's and alpha_j's draws are their "
    "posterior's given the rest, to first order in it."
)
FALLBACK_NOTE = (
    "MAP + Laplace of the full model: the quadrature over each prompt's eta_j and alpha_j does not apply here "
    "({reason})."
)


@dataclass
class RatingsFit:
    """The mode of the ratings' marginal model, the Gaussian there and each prompt's read-outs.

    Attributes
    ----------
    layout : Layout
        Full coordinates: the skills (n), the thresholds' unconstrained y (C - 1), log sigma_eta.
    mode : ndarray (reduced,)
    precision : ndarray (reduced, reduced)
        The negative log posterior's Hessian at the mode.
    mean : ndarray (J, D)
        Each prompt's posterior mean of (w_j, z_j) (D = 2), or of z_j (D = 1, alpha_j = 1), given the rest at the mode.
    cov : ndarray (J, D, D)
        Their posterior covariance given the rest at the mode.
    slope : ndarray (J, D, reduced)
        The derivative of that mean in the reduced vector at the mode: the covariance over the nodes of (w, z)
        and the prompt's log-likelihood gradient.
    alpha : ndarray (J,)
        Each prompt's posterior mean of alpha_j given the rest at the mode.
    newton_steps : int
    last_pass_s : float
        Wall seconds of the pass at the mode, which gave its Hessian (the fit's phase "Hessian").
    """

    layout: Layout
    mode: np.ndarray
    precision: np.ndarray
    mean: np.ndarray
    cov: np.ndarray
    slope: np.ndarray
    alpha: np.ndarray
    newton_steps: int
    last_pass_s: float = 0.0


class RatingsMarginal:
    """The marginal model of one set of ratings (module docstring): its negative log posterior, gradient and exact
    Hessian in reduced coordinates (:class:`lib.ranking.marginal.Layout`: the skills on the sum-to-zero subspace or
    with the baseline's at 0, the thresholds' y, log sigma_eta), with each prompt's nodes held between placements
    (:meth:`adapt`)."""

    def __init__(self, obs, *, baseline: int | None, fixed_alpha: bool, nodes: int = NODES) -> None:
        if obs.paired or obs.weight is not None:
            raise ValueError("the ratings' quadrature fit takes the ratings likelihood's (unweighted) scores")
        self.obs, self.baseline, self.fixed_alpha = obs, baseline, fixed_alpha
        order = np.argsort(obs.prompt, kind="stable")
        prompt, code = obs.prompt[order], obs.code[order]
        n, cuts = len(obs.systems), len(obs.categories) - 1
        self.layout = Layout(n, False, False, cuts + 1, skill_basis(n, baseline))
        self.n, self.cuts, self.size = n, cuts, n + cuts + 1
        first = np.flatnonzero(np.r_[True, prompt[1:] != prompt[:-1]])
        if len(first) != len(obs.prompts):  # the ratings' prompts are their scores' (:func:`score_observations`)
            raise ValueError("every prompt of the ratings' quadrature fit needs a score")
        self.starts = first
        self.ordinal = prompt
        self.system = obs.system_b[order]
        self.has_lo, self.has_hi = code > 0, code < cuts
        self.both = self.has_lo & self.has_hi
        self.lo, self.hi = np.maximum(code - 1, 0), np.minimum(code, cuts - 1)
        # the full coordinates each score's four derivatives (m, b_lo, b_hi, sigma_eta) fall on
        self.columns = np.stack([self.system, n + self.lo, n + self.hi, np.full(len(code), n + cuts)], axis=1)
        mask = np.stack([np.ones(len(code), bool), self.has_lo, self.has_hi, np.ones(len(code), bool)], axis=1)
        t = len(code)
        rows = (self.ordinal[:, None] * self.size + self.columns)[mask]
        cols = (np.arange(4)[None, :] * t + np.arange(t)[:, None])[mask]
        self.incidence = sparse.csr_matrix(
            (np.ones(len(rows)), (rows, cols)), shape=(len(first) * self.size, 4 * t)
        )  # (prompts x full, 4 x scores): each prompt's gradient at each node from its scores' derivatives
        self.dim = 1 if fixed_alpha else 2
        points, log_w = normal_rule(nodes)
        grid = np.stack(np.meshgrid(*[points] * self.dim, indexing="ij"), axis=-1).reshape(-1, self.dim)
        self.x = grid
        self.log_w = np.add.reduce(np.meshgrid(*[log_w] * self.dim, indexing="ij")).ravel()
        self.transform = self.layout.transform()
        j = len(first)
        self._place(np.zeros((j, self.dim)), np.tile(np.eye(self.dim), (j, 1, 1)))

    def _place(self, centre: np.ndarray, chol: np.ndarray) -> None:
        """Each prompt's nodes v_jk = centre_j + L_j x_k (J, K, D) and their log weights: the rule's, times
        |L_j| phi(v_jk) / phi(x_k), so that sum_k w_jk f(v_jk) integrates f against the N(0, I) prior of
        (w_j, z_j) (Pinheiro & Bates 1995, eq. 11)."""
        self.centre, self.chol = centre, chol
        self.v = centre[:, None, :] + np.einsum("jab,kb->jka", chol, self.x)
        log_det = np.log(np.abs(np.diagonal(chol, axis1=1, axis2=2))).sum(1)
        self.log_wj = self.log_w + log_det[:, None] + 0.5 * ((self.x**2).sum(1) - (self.v**2).sum(2))
        self.z = self.v[..., -1]
        self.alpha = np.ones_like(self.z) if self.fixed_alpha else np.exp(LOG_ALPHA_PRIOR_SD * self.v[..., 0])

    def adapt(self, theta: np.ndarray) -> None:
        """Centre each prompt's nodes at the conditional mode of its (w_j, z_j) given the reduced vector ``theta``
        (damped Newton steps, all prompts at once) and turn and scale them by the Cholesky factor of the
        conditional covariance there, its variances at most :data:`lib.ranking.marginal.LARGEST_SCALE` squared
        (the prior's, where the scores say little or the log posterior is not concave)."""
        full = self.transform @ theta
        v = self.centre.copy()
        value, grad, hess = self._conditional(full, v)
        for _ in range(MODE_STEPS):
            curvature = -hess
            concave = np.linalg.eigvalsh(curvature).min(1) > 0
            step = np.where(
                concave[:, None],
                np.linalg.solve(np.where(concave[:, None, None], curvature, np.eye(self.dim)), grad[..., None])[..., 0],
                grad,
            )
            step /= np.maximum(1.0, np.abs(step).max(1))[:, None]
            moved = np.abs(step).max(1) < MODE_TOL  # found
            if moved.all():
                break
            scale = np.ones(len(v))
            for _ in range(HALVINGS):
                trial = v + scale[:, None] * step
                rises = ~moved & (self._conditional(full, trial)[0] >= value - 1e-12 * np.abs(value))
                v[rises], moved = trial[rises], moved | rises
                if moved.all():
                    break
                scale[~moved] /= 2
            value, grad, hess = self._conditional(full, v)
        values, vectors = np.linalg.eigh(-hess)
        values = np.maximum(values, 1 / LARGEST_SCALE**2)
        cov = np.einsum("jab,jb,jcb->jac", vectors, 1 / values, vectors)
        self._place(v, np.linalg.cholesky(cov))

    def _conditional(self, full: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Each prompt's log posterior of (w_j, z_j) = ``v`` (J, D) given the full vector, up to a constant, its
        gradient (J, D) and Hessian (J, D, D). With u = log alpha: d/du of a score's terms is t1 e1 + t2 e2 + d q
        and d2/du2 adds t1^2 h1 + t2^2 h2 + d^2 g'' (:meth:`_scores`)."""
        s, b, sigma = self._natural(full)
        o = self.ordinal
        z = v[:, -1]
        alpha = np.ones(len(v)) if self.fixed_alpha else np.exp(LOG_ALPHA_PRIOR_SD * v[:, 0])
        a = alpha[o]
        sc = self._scores(a, s[self.system] + sigma * z[o], b, 2)
        ell, e1, e2, q, h1, h2, g2, t1, t2, d = sc

        def per_prompt(x):
            return np.add.reduceat(x, self.starts)

        value = per_prompt(ell) - 0.5 * (v**2).sum(1)
        grad = np.empty_like(v)
        hess = np.empty((len(v), self.dim, self.dim))
        grad[:, -1] = sigma * per_prompt(a * (e1 + e2)) - z
        hess[:, -1, -1] = sigma**2 * per_prompt(a**2 * (h1 + h2)) - 1
        if not self.fixed_alpha:
            r = LOG_ALPHA_PRIOR_SD
            grad[:, 0] = r * per_prompt(t1 * e1 + t2 * e2 + d * q) - v[:, 0]
            hess[:, 0, 0] = r**2 * per_prompt(t1 * e1 + t1**2 * h1 + t2 * e2 + t2**2 * h2 + d * q + d**2 * g2) - 1
            hess[:, 0, 1] = hess[:, 1, 0] = r * sigma * per_prompt(a * (e1 + e2 + t1 * h1 + t2 * h2))
        return value, grad, hess

    def _natural(self, full: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
        """The skills, the ordered thresholds and sigma_eta of the full vector."""
        n, cuts = self.n, self.cuts
        y = full[n : n + cuts]
        with np.errstate(over="ignore"):  # a trial point far out: an infinite value, refused by the search
            b = np.cumsum(np.r_[y[0], np.exp(y[1:])])
            return full[:n], b, float(np.exp(full[-1]))

    def _scores(self, a, m, b, order: int) -> tuple[np.ndarray, ...]:
        """Each score's log-likelihood (module docstring) at discrimination ``a`` and location ``m`` (scores, ...)
        and, ``order`` >= 1, the pieces of its derivatives: e1 = dlog sigmoid(t1)/dt1, e2 = dlog sigmoid(-t2)/dt2,
        q = g'(d) of the gap g(d) = log(1 - exp(-d)), d = t1 - t2; ``order`` >= 2: h1, h2 (their second
        derivatives) and g''(d); and t1, t2, d. Absent terms are 0."""
        extra = (slice(None),) + (None,) * (np.ndim(m) - 1)
        has_lo, has_hi, both = self.has_lo[extra], self.has_hi[extra], self.both[extra]
        t1 = a * (m - b[self.lo][extra])
        t2 = a * (m - b[self.hi][extra])
        d = np.where(both, t1 - t2, 1.0)
        with np.errstate(over="ignore", divide="ignore"):
            q = np.where(both, 1 / np.expm1(d), 0.0)
            gap = np.where(both, np.log(-np.expm1(-d)), 0.0)
        ell = np.where(has_lo, -np.logaddexp(0, -t1), 0.0) + np.where(has_hi, -np.logaddexp(0, t2), 0.0) + gap
        f1, f2 = expit(-t1), expit(t2)  # sigmoid(-t1), sigmoid(t2)
        e1 = np.where(has_lo, f1, 0.0)
        e2 = np.where(has_hi, -f2, 0.0)
        if order < 2:
            return ell, e1, e2, q
        h1 = np.where(has_lo, -f1 * (1 - f1), 0.0)
        h2 = np.where(has_hi, -f2 * (1 - f2), 0.0)
        g2 = -q * (1 + q)
        return ell, e1, e2, q, h1, h2, g2, t1, t2, np.where(both, d, 0.0)

    def _pass(self, full: np.ndarray, order: int) -> _Pass:
        """The log-likelihood at the full vector in natural coordinates (skills, b, sigma_eta): its value;
        ``order`` >= 1: its gradient and the node weights; 2: its Hessian without the covariance over nodes of each
        prompt's gradient; 3: the exact Hessian. With each score's derivatives in m, b_lo, b_hi (t1 = a (m - b_lo),
        t2 = a (m - b_hi), d = a (b_hi - b_lo)): dm = a (e1 + e2), db_lo = -a (e1 + q), db_hi = a (q - e2);
        d2 m m = a^2 (h1 + h2), d2 m b_lo = -a^2 h1, d2 m b_hi = -a^2 h2, d2 b_lo b_lo = a^2 (h1 + g''),
        d2 b_hi b_hi = a^2 (h2 + g''), d2 b_lo b_hi = -a^2 g''; sigma_eta as m, times z."""
        s, b, sigma = self._natural(full)
        o = self.ordinal
        a, z = self.alpha[o], self.z[o]  # (T, K)
        sc = self._scores(a, s[self.system][:, None] + sigma * z, b, order)
        log_j = np.add.reduceat(sc[0], self.starts, axis=0) + self.log_wj  # (J, K)
        total = logsumexp(log_j, axis=1)
        out = _Pass(value=float(total.sum()))
        if not order:
            return out
        weights = np.exp(log_j - total[:, None])
        out.weights = weights
        pw = weights[o]  # (T, K)
        e1, e2, q = sc[1:4]
        dm, dlo, dhi = a * (e1 + e2), -a * (e1 + q), a * (q - e2)
        local = [dm, dlo, dhi, z * dm]
        out.grad = np.bincount(
            self.columns.ravel(), np.stack([(pw * x).sum(1) for x in local], axis=1).ravel(), self.size
        )
        if order < 2:
            return out
        h1, h2, g2 = sc[4:7]
        a2 = a**2
        hmm, hmlo, hmhi = a2 * (h1 + h2), -a2 * h1, -a2 * h2
        entries = {
            (0, 0): hmm,
            (0, 1): hmlo,
            (0, 2): hmhi,
            (0, 3): z * hmm,
            (1, 1): a2 * (h1 + g2),
            (1, 2): -a2 * g2,
            (1, 3): z * hmlo,
            (2, 2): a2 * (h2 + g2),
            (2, 3): z * hmhi,
            (3, 3): z**2 * hmm,
        }
        hess = np.zeros(self.size * self.size)
        for (r, c), x in entries.items():
            weighted = (pw * x).sum(1)
            hess += np.bincount(self.columns[:, r] * self.size + self.columns[:, c], weighted, self.size**2)
            if r != c:
                hess += np.bincount(self.columns[:, c] * self.size + self.columns[:, r], weighted, self.size**2)
        out.hess = hess.reshape(self.size, self.size)
        if order >= 3:
            centred = self._centred(local, weights)
            out.hess += np.einsum("jpk,jqk->pq", centred, centred)
        return out

    def _node_gradients(self, local: list[np.ndarray]) -> np.ndarray:
        """(J, full, K): each prompt's log-likelihood gradient (natural coordinates) at each node, from its scores'
        derivatives ``local`` (4 of (T, K): in m, b_lo, b_hi, sigma_eta)."""
        stacked = self.incidence @ np.concatenate(local, axis=0)
        return np.asarray(stacked).reshape(len(self.starts), self.size, -1)

    def _centred(self, local: list[np.ndarray], weights: np.ndarray) -> np.ndarray:
        """(J, full, K): each prompt's gradient at each node less its node-weighted mean, times sqrt(weight)."""
        g = self._node_gradients(local)
        return (g - np.einsum("jpk,jk->jp", g, weights)[..., None]) * np.sqrt(weights)[:, None, :]

    def _jacobian(self, full: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The Jacobian d natural / d full (full, full) and, per full coordinate, the second derivative of the
        natural coordinates in it that a natural gradient g multiplies (full,): of the thresholds (b_c = y_1 +
        sum_{2 <= l <= c} exp(y_l)) and of sigma_eta = exp(u)."""
        n, cuts = self.n, self.cuts
        jac = np.eye(self.size)
        grow = np.exp(full[n + 1 : n + cuts])
        block = np.tril(np.ones((cuts, cuts)))
        block[:, 1:] *= grow
        jac[n : n + cuts, n : n + cuts] = block
        sigma = np.exp(full[-1])
        jac[-1, -1] = sigma
        second = np.zeros(self.size)
        second[n + 1 : n + cuts] = grow
        second[-1] = sigma
        return jac, second

    def evaluate(self, theta: np.ndarray, order: int) -> _Pass:
        """The negative log posterior (up to a constant) at the reduced vector, its gradient and Hessian as
        :meth:`_pass` gives them (``order``), in reduced coordinates: the priors (skills N(0, 1), b ~ N(0, 2),
        sigma_eta ~ HalfNormal(1)) added in natural coordinates, the chain rule to the full ones, the log Jacobian
        of the ordered transform and of log sigma_eta subtracted."""
        full = self.transform @ theta
        n, cuts = self.n, self.cuts
        p = self._pass(full, order)
        s, b, sigma = self._natural(full)
        scales = np.r_[np.full(n, SKILL_PRIOR_SD), np.full(cuts, B_PRIOR_SD), SIGMA_ETA_PRIOR_SD]
        natural = np.r_[s, b, sigma]
        log_jacobian = full[n + 1 : n + cuts].sum() + full[-1]
        p.value = 0.5 * float(((natural / scales) ** 2).sum()) - log_jacobian - p.value
        if not order:
            return p
        assert p.grad is not None
        jac, second = self._jacobian(full)
        g = natural / scales**2 - p.grad  # natural coordinates
        tail = np.zeros(self.size)  # d2 natural / d full2 times g: each threshold's gap sums the g of those above it
        tail[n + 1 : n + cuts] = np.cumsum(g[n : n + cuts][::-1])[::-1][1:]
        tail[-1] = g[-1]
        minus_log_jacobian = np.zeros(self.size)
        minus_log_jacobian[n + 1 : n + cuts] = minus_log_jacobian[-1] = -1.0
        p.grad = self.transform.T @ (jac.T @ g + minus_log_jacobian)
        if p.hess is not None:
            hess = jac.T @ (np.diag(1 / scales**2) - p.hess) @ jac + np.diag(second * tail)
            p.hess = self.transform.T @ hess @ self.transform
        return p

    def start(self) -> np.ndarray:
        """Skills 0, the full model's initial thresholds (evenly spaced on [-1.5, 1.5]), sigma_eta = 1."""
        theta = np.zeros(self.layout.reduced)
        k = self.layout.basis.shape[1]
        b = np.linspace(-1.5, 1.5, self.cuts)
        theta[k : k + self.cuts] = np.r_[b[0], np.log(np.diff(b))]
        return theta

    def _warm_start(self) -> np.ndarray:
        """The start of the search: the mode of the same scores with every eta_j = 0 and alpha_j = 1 (one node at
        0: the ordinal logit without a prompt effect), sigma_eta at its prior's mode (it has no other)."""
        warm = RatingsMarginal(self.obs, baseline=self.baseline, fixed_alpha=self.fixed_alpha, nodes=1)
        return newton(warm.evaluate, warm.start(), WARM_TOL, 2)[0]

    def fit(self) -> RatingsFit:
        """The mode by Newton steps with the exact Hessian (:func:`lib.ranking.marginal.adaptive_mode`) from
        :meth:`_warm_start`, the Hessian there and each prompt's read-outs (:class:`RatingsFit`).

        Raises
        ------
        ExactFitError
            The nodes did not settle (:func:`lib.ranking.marginal.adaptive_mode`): the fit takes the full model's.
        SettingsError
            The Hessian at the mode is not positive definite, or the search did not converge.
        """
        with one_blas_thread():  # small matrices: BLAS threads only contend on a shared machine
            theta, p, steps, seconds = adaptive_mode(self, self._warm_start(), FALLBACK_NOTE)
            assert p.hess is not None and p.weights is not None
            mean, cov, slope = self._readouts(theta, p.weights)
        alpha = (p.weights * self.alpha).sum(1)
        return RatingsFit(self.layout, theta, p.hess, mean, cov, slope, alpha, steps, seconds)

    def _readouts(self, theta: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, ...]:
        """Each prompt's posterior mean (J, D) and covariance (J, D, D) of its nodes' (w, z) given the reduced
        vector, and the mean's derivative in it (J, D, reduced): sum_k p_k (v_k - mean) (g_k - mean g)', with g_k the
        prompt's log-likelihood gradient at node k (the nodes held; dp_k = p_k (g_k - mean g))."""
        full = self.transform @ theta
        s, b, sigma = self._natural(full)
        o = self.ordinal
        a, z = self.alpha[o], self.z[o]
        _, e1, e2, q = self._scores(a, s[self.system][:, None] + sigma * z, b, 1)
        dm = a * (e1 + e2)
        centred = self._centred([dm, -a * (e1 + q), a * (q - e2), z * dm], weights)  # (J, full, K), sqrt(p) in
        jac, _ = self._jacobian(full)
        reduced = np.einsum("rf,fp,jpk->jrk", self.transform.T, jac.T, centred)
        mean = np.einsum("jk,jkd->jd", weights, self.v)
        dev = self.v - mean[:, None, :]
        cov = np.einsum("jk,jkd,jke->jde", weights, dev, dev)
        slope = np.einsum("jk,jkd,jrk->jdr", np.sqrt(weights), dev, reduced)
        return mean, cov, slope


def _posterior(obs, fit: RatingsFit, draws: int, rng: np.random.Generator) -> Draws:
    """The draws of ``skill`` (system), ``b`` (threshold), ``sigma_eta``, and of ``eta`` and ``alpha`` (prompt):
    each prompt's (w_j, z_j) drawn from the normal with its posterior mean given the drawn rest (to first order,
    ``fit.slope``) and covariance given the rest at the mode; with the values at the mode (alpha and eta: their
    posterior means given the rest there)."""
    lay = fit.layout
    n, cuts = lay.n, lay.full - lay.n - 1
    rows = gaussian_rows(fit.mode, fit.precision, draws, rng)  # row 0: the mode
    full = rows @ lay.transform().T
    b = np.cumsum(np.hstack([full[:, n : n + 1], np.exp(full[:, n + 1 : n + cuts])]), axis=1)
    sigma = np.exp(full[:, -1])
    values, vectors = np.linalg.eigh(fit.cov)
    root = vectors * np.sqrt(np.maximum(values, 0.0))[:, None, :]  # root root' = cov
    noise = np.einsum("jde,sje->sjd", root, rng.standard_normal((draws, *fit.mean.shape)))
    v = fit.mean + np.einsum("jdr,sr->sjd", fit.slope, rows[1:] - fit.mode) + noise
    alpha = np.ones((draws, len(fit.mean))) if fit.mean.shape[1] == 1 else np.exp(LOG_ALPHA_PRIOR_SD * v[..., 0])
    mode = {
        "skill": full[0, :n],
        "b": b[0],
        "sigma_eta": sigma[0],
        "eta": sigma[0] * fit.mean[:, -1],
        "alpha": fit.alpha,
    }
    posterior = {
        "skill": full[1:, :n],
        "b": b[1:],
        "sigma_eta": sigma[1:],
        "eta": sigma[1:, None] * v[..., -1],
        "alpha": alpha,
    }
    dims = {"skill": ["system"], "alpha": ["prompt"], "b": ["threshold"], "eta": ["prompt"]}
    return as_draws(obs, mode, posterior, dims)


def sample_ratings(obs, settings: Any, tracker: Tracker, *, fixed_alpha: bool) -> Draws:
    """The quadrature fit of ratings ``obs`` (module docstring) as a posterior of ``settings.draws`` independent
    draws in one chain (:func:`_posterior`); ``settings``: a :class:`lib.ranking.fit.RankSettings` (its baseline,
    draws and seed)."""
    baseline = None if settings.baseline is None else obs.systems.index(settings.baseline)
    what = "effect eta_j" + ("" if fixed_alpha else " and discrimination alpha_j")
    return quadrature_draws(
        settings,
        tracker,
        what,
        lambda: RatingsMarginal(obs, baseline=baseline, fixed_alpha=fixed_alpha),
        functools.partial(_posterior, obs),
    )


def laplace_fit(obs, settings: Any, fixed_alpha: bool) -> tuple[Any, str]:
    """The ratings likelihood's own MAP + Laplace fit (:attr:`lib.ranking.likelihoods.Likelihood.laplace`): the
    quadrature fit of ``obs`` (:func:`sample_ratings`) and :data:`NOTE`, or, with annotator severities (globals of
    their own, fitted by NUTS: :func:`lib.ranking.fit.nuts_reason`), None and :data:`FALLBACK_NOTE`.

    The full model's refusals (a baseline that is not a system, ...) are made here, before the fit."""
    from lib.ranking.model import check_effects

    if settings.annotator_effect:
        return None, FALLBACK_NOTE.format(reason="annotator severities")
    check_effects(
        obs,
        baseline=settings.baseline,
        intransitivity=settings.intransitivity,
        position_bias=settings.position_bias,
        annotator_effect=False,
    )
    nodes = f"{NODES}" if fixed_alpha else f"{NODES} x {NODES}"
    note = NOTE.format(alpha="" if fixed_alpha else " and discrimination alpha_j", nodes=nodes)
    return functools.partial(sample_ratings, obs, fixed_alpha=fixed_alpha), note
