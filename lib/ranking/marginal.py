"""The votes likelihood with each prompt's discrimination integrated out exactly (Gauss-Hermite quadrature).

In the votes likelihood (:mod:`lib.ranking.model`) a prompt's discrimination alpha_j enters only that prompt's
votes, so the likelihood of everything else (the skills, the shared cutpoints, the spread sigma_alpha, the
position effect gamma, the style coefficients) is a product over prompts of one-dimensional integrals::

    p(votes_j | theta) = integral of prod_{v in j} p(y_v | exp(sigma_alpha z) (s_B - s_A + ...), b) phi(z) dz
                      ~= sum_k w_jk prod_{v in j} p(y_v | exp(sigma_alpha z_jk) ..., b)

(log alpha_j = sigma_alpha z_j, z_j ~ N(0, 1), the model's non-centred form; sigma_alpha = 0.5 fixed where the
spread is not learnt, :func:`lib.ranking.model.learns_alpha_spread`) with K = :data:`NODES` Gauss-Hermite nodes a
prompt, adaptive (Pinheiro & Bates 1995, lme4's nAGQ): z_jk = m_j + s_j x_k, centred at the conditional mode m_j of
z_j and scaled by its conditional curvature s_j, with weights w_k s_j phi(z_jk) / phi(x_k) (the prior exactly). A
prompt of many votes has a posterior of z_j far narrower than the prior's, which the standard normal's nodes would
miss between them (:meth:`Marginal.adapt`). The nodes are held while the mode is searched, and placed again at the
mode found until it stays (:meth:`Marginal.fit`). What is left is a model of about as many variables as systems:
its mode is found by Newton steps from the mode with every alpha_j = 1 (:meth:`Marginal._warm_start`), each with
the exact Hessian (:meth:`Marginal.hessian`: the log-sum-exp's Hessian is the node-weighted mean of the votes'
Hessians plus the covariance over nodes of each prompt's gradient), and the posterior is the Gaussian there (MAP +
Laplace of the marginal, Tierney & Kadane 1986), where the full model's Laplace fit (:mod:`lib.inference.laplace`)
approximated 20,000 one-dimensional integrals by Gaussians too. Each alpha_j's posterior given the rest (mean and
SD of log alpha_j) comes from the same nodes' weights (:func:`alpha_readouts`).

A pass over the votes is one compiled loop a prompt (:mod:`lib.ranking.marginal_loops`, numba) over the votes'
win terms (:class:`_Terms`), in chunks of whole prompts run in two threads; no PyMC model is built and JAX is not
imported. Where the votes model has more than the skills, cutpoints, sigma_alpha, gamma and style (pair
deviations, skills by category) or alpha_j is fixed, :func:`not_applicable` says why and the fit takes the full
model's path.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import dataclasses
import functools
import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from lib.engine.blas import one_blas_thread
from lib.errors import ExactFitError, SettingsError
from lib.inference.progress import Tracker
from lib.inference.samplers import Draws
from lib.inference.settings import NutsSettings

NODES = 15
"""Gauss-Hermite nodes per prompt integral, centred and scaled to each prompt's conditional posterior of z_j
(:meth:`Marginal.adapt`): the mode and SDs of a simulated arena change by less than 1e-9 SDs from 15 to 30 nodes,
and on 400 votes a prompt they agree with 200 nodes at the prior's scale where 15 of those miss by 1-2 SDs
(``tests/ranking/test_rank_marginal.py``)."""
LARGEST_SCALE = 1.0
"""The widest nodes' scale: the prior's of z_j (its conditional posterior is at most as wide where the votes'
log-likelihood is concave in z_j)."""
ADAPT_ROUNDS = 5
ADAPT_TOL = 1e-6
"""The nodes are placed at the warm start, the mode found with them held, then placed again at that mode and the
mode found again, until it moves no variable by more than ADAPT_TOL (at most ADAPT_ROUNDS placements; a mode still
moving after them is not the quadrature's: the fit falls back to the full model's, :meth:`Marginal.fit`)."""
CHUNK_CELLS = 1 << 24
"""Cells of a chunk's covariance matrix (prompts x NODES, variables; 128 MB of float64): many systems, fewer prompts a
chunk."""
THREADS = 2
"""Threads a pass runs its chunks in (the machines this runs on have 2 cores)."""
DRAW_BLOCK = 1 << 18
"""Values of alpha drawn, scaled, shifted and exponentiated at once (1 MB of float32, :func:`lognormal_draws`)."""
CHUNK_TERMS = 1 << 17
"""Win terms per chunk of a pass (whole prompts; memory ~ CHUNK_TERMS x NODES x a few float64 arrays, and the
covariance's (prompts x NODES, variables) matrix of the chunk)."""
NEWTON_MAX = 50
NEWTON_TOL = 1e-7
MAX_STEP = 1.0
WARM_TOL = 1e-3
"""At most NEWTON_MAX Newton steps, exact Hessian at each, until the next step would move no variable by more than
NEWTON_TOL; no variable moves more than MAX_STEP (unconstrained units) in one step. The search starts from the
mode with every alpha_j = 1 (Bradley-Terry with ties: the same passes with one node, at a fifteenth of the cost),
found to WARM_TOL."""
SKILL_PRIOR_SD = 1.0
B_PRIOR_SD = 2.0
SIGMA_ALPHA_PRIOR_SD = 0.5
FIXED_SIGMA_ALPHA = 0.5
EFFECT_PRIOR_SD = 1.0
"""The full model's priors (:mod:`lib.ranking.model`): skills N(0, 1) (sum to zero or a baseline at 0), the
positive cutpoint b ~ N(0, 2) on b > 0, sigma_alpha ~ HalfNormal(0.5) (or log alpha ~ N(0, 0.5)), gamma and the
style coefficients N(0, 1)."""
NOTE = (
    "MAP + Laplace on the skills with each prompt's discrimination alpha_j integrated out exactly "
    "(Gauss-Hermite quadrature, {nodes} nodes a prompt); alpha_j's mean and SD are its posterior's given the "
    "skills at their mode."
)
FALLBACK_NOTE = (
    "MAP + Laplace of the full model (each prompt's alpha_j integrated by a Gaussian approximation): the exact "
    "quadrature over alpha_j does not apply here ({reason})."
)


def not_applicable(obs, *, intransitivity: bool, fixed_alpha: bool) -> str | None:
    """Why the quadrature fit does not apply to these observations and model, or None where it does.

    It applies to votes whose only per-prompt variable is alpha_j: skills (sum to zero or a baseline), the shared
    cutpoints, sigma_alpha, and optionally gamma, style coefficients and vote weights."""
    if fixed_alpha:
        return "alpha_j = 1 for every prompt: nothing to integrate"
    if intransitivity:
        return "pair deviations"
    if obs.category is not None:
        return "skills by category"
    return None


@dataclass
class _Terms:
    """The votes as win terms log sigmoid(alpha_j t), t = sign (s_B - s_A + covariates) + kappa b, sorted by prompt.

    A better: t = -d - b; B better: t = d - b; a tie: t = d + b and t = -d + b, and log(1 - exp(-2 alpha_j b))
    (the votes likelihood's P(tie) = sigmoid(alpha (d + b)) - sigmoid(alpha (d - b)), factored); without ties b = 0.
    """

    a: np.ndarray  # (T,) int: system A
    b: np.ndarray  # (T,) int: system B
    sign: np.ndarray  # (T,) float: +1 or -1
    kappa: np.ndarray  # (T,) float: t's multiple of the cut b (0 without ties)
    weight: np.ndarray  # (T,) float: the vote's weight
    dense: np.ndarray  # (T, q) float: the location's linear covariates (side shown first, style)
    prompt: np.ndarray  # (T,) int: the term's prompt's ordinal among the prompts with votes
    starts: np.ndarray  # (J + 1,) int: each prompt's first term, and T
    ties: np.ndarray  # (J,) float: each prompt's weighted number of ties
    prompts: np.ndarray  # (J,) int: index into obs.prompts
    chunks: list[tuple[int, int]]  # ranges of prompts, of at most CHUNK_TERMS terms (or one prompt)


def _terms(obs, dense: np.ndarray, weight: np.ndarray, ties: bool, n_full: int) -> _Terms:
    """The win terms of the votes (:class:`_Terms`); ``n_full``: the model's full coordinates."""
    code = np.asarray(obs.code)
    tie = (code == 1) if ties else np.zeros(len(code), dtype=bool)
    second = np.flatnonzero(tie)
    vote = np.r_[np.arange(len(code)), second]
    sign = np.r_[np.where(code == 0, -1.0, 1.0), -np.ones(len(second))]
    kappa = np.r_[np.where(tie, 1.0, -1.0), np.ones(len(second))] if ties else np.zeros(len(vote))
    order = np.argsort(obs.prompt[vote], kind="stable")
    vote, sign, kappa = vote[order], sign[order], kappa[order]
    prompt = obs.prompt[vote]
    first = np.flatnonzero(np.r_[True, prompt[1:] != prompt[:-1]])
    ordinal = np.cumsum(np.r_[0, (prompt[1:] != prompt[:-1]).astype(np.int64)])
    starts = np.r_[first, len(vote)]
    vote_ordinal = np.empty(len(code), dtype=np.int64)
    vote_ordinal[vote] = ordinal  # a tie's two terms share the prompt
    tie_count = np.bincount(vote_ordinal, weights=weight * tie, minlength=len(first))
    # at most CHUNK_TERMS terms (or one prompt), and a covariance matrix (prompts x nodes, variables) of at most
    # CHUNK_CELLS cells
    prompts_per_chunk = max(1, CHUNK_CELLS // (NODES * (n_full)))
    block = (first // CHUNK_TERMS) * (len(first) + 1) + np.arange(len(first)) // prompts_per_chunk
    bounds = np.r_[0, np.flatnonzero(np.diff(block)) + 1, len(first)]
    return _Terms(
        np.asarray(obs.system_a, dtype=np.int64)[vote],
        np.asarray(obs.system_b, dtype=np.int64)[vote],
        sign,
        kappa,
        weight[vote],
        dense[vote],
        ordinal,
        starts,
        tie_count,
        prompt[first],
        [(int(lo), int(hi)) for lo, hi in itertools.pairwise(bounds)],
    )


@dataclass
class Layout:
    """The marginal model's variables.

    Full coordinates (what a vote reads): skills (n), then ``y`` = log b (ties only), ``u`` = log sigma_alpha
    (learnt only), then the location's linear covariates' coefficients (gamma, style; ``q``; the ratings' fit
    puts its thresholds' unconstrained values and log sigma_eta there, :mod:`lib.ranking.marginal_ratings`). Reduced
    coordinates (what is fitted): the skills on the sum-to-zero subspace (an orthonormal basis, as
    ``pm.ZeroSumNormal``'s prior is isotropic there) or with the baseline's skill fixed at 0, the rest as is.
    """

    n: int
    ties: bool
    learnt: bool
    q: int
    basis: np.ndarray  # (n, n - 1): skills = basis @ z
    gamma: bool = False  # the first covariate is the side shown first (position bias)

    @property
    def full(self) -> int:
        """The number of full coordinates."""
        return self.n + self.ties + self.learnt + self.q

    @property
    def reduced(self) -> int:
        """The number of reduced coordinates."""
        return self.basis.shape[1] + self.ties + self.learnt + self.q

    def transform(self) -> np.ndarray:
        """T (full, reduced): full = T reduced."""
        t = np.zeros((self.full, self.reduced))
        k = self.basis.shape[1]
        t[: self.n, :k] = self.basis
        t[self.n :, k:] = np.eye(self.full - self.n)
        return t


def skill_basis(n: int, baseline: int | None) -> np.ndarray:
    """(n, n - 1): an orthonormal basis of the sum-to-zero subspace (Helmert's contrasts), or the identity with
    the baseline's row left at 0."""
    if baseline is not None:
        return np.delete(np.eye(n), baseline, axis=1)
    basis = np.zeros((n, n - 1))
    for k in range(1, n):
        basis[:k, k - 1] = 1.0
        basis[k, k - 1] = -k
        basis[:, k - 1] /= np.sqrt(k * (k + 1))
    return basis


def normal_rule(nodes: int) -> tuple[np.ndarray, np.ndarray]:
    """The Gauss-Hermite rule of ``nodes`` points for the standard normal: the points x_k and the logs of their
    weights, sum_k exp(log_w_k) f(x_k) ~= E f(x), x ~ N(0, 1) (numpy's ``hermegauss``, weights / sqrt(2 pi)); the
    quadrature fits place them at each prompt's mode (:meth:`Marginal._place`,
    :meth:`lib.ranking.marginal_ratings.RatingsMarginal._place`)."""
    points, weights = np.polynomial.hermite_e.hermegauss(nodes)
    return points, np.log(weights / np.sqrt(2 * np.pi))


def _tie_constant(alpha: np.ndarray, xi: np.ndarray, b: float) -> tuple[np.ndarray, ...]:
    """A tie's log(1 - exp(-beta)), beta = 2 alpha b, at each node (J, K), and its derivatives in y = log b and
    u = log sigma_alpha (alpha = exp(xi), xi = sigma_alpha z_jk): value, c_y, c_u, c_yy, c_yu, c_uu."""
    beta = 2 * alpha * b
    value = np.log(-np.expm1(-beta))
    with np.errstate(over="ignore"):  # a node far out (alpha_j in the thousands): q1 = 0
        q1 = 1 / np.expm1(beta)  # dc / dbeta
    q2 = -q1 * (1 + q1)  # d2c / dbeta2
    return (
        value,
        q1 * beta,
        q1 * beta * xi,
        q2 * beta**2 + q1 * beta,
        (q2 * beta**2 + q1 * beta) * xi,
        q2 * beta**2 * xi**2 + q1 * beta * xi * (xi + 1),
    )


@dataclass
class _Pass:
    """What one pass over the votes gives (full coordinates, log-likelihood): its value, and as asked its gradient,
    Hessian and each prompt's posterior weights of the nodes (J, K)."""

    value: float = 0.0
    grad: np.ndarray | None = None
    hess: np.ndarray | None = None
    weights: np.ndarray | None = None


@functools.cache
def _kernel() -> Callable[..., float]:
    """The compiled per-prompt loops of a pass (:func:`lib.ranking.marginal_loops.prompts`): importing them
    compiles them, or loads them from numba's cache on disk."""
    from lib.ranking.marginal_loops import prompts

    return prompts


@dataclass
class MarginalFit:
    """The mode of the marginal model and the Gaussian there.

    Attributes
    ----------
    layout : Layout
    mode : ndarray (reduced,)
    precision : ndarray (reduced, reduced)
        The negative log posterior's Hessian at the mode.
    weights : ndarray (J, K)
        Each prompt's posterior weights of the quadrature nodes at the mode.
    nodes : ndarray (J, K)
        Each prompt's nodes z_jk (log alpha_j = sigma_alpha z_jk).
    newton_steps : int
    last_pass_s : float
        Wall seconds of the pass at the mode, which gave its Hessian (the fit's phase "Hessian").
    """

    layout: Layout
    mode: np.ndarray
    precision: np.ndarray
    weights: np.ndarray
    nodes: np.ndarray
    newton_steps: int
    last_pass_s: float = 0.0

    def full_mode(self) -> np.ndarray:
        """The mode in full coordinates."""
        return self.layout.transform() @ self.mode

    def sigma_alpha(self, full: np.ndarray) -> np.ndarray | float:
        """sigma_alpha of full vector(s) (..., full)."""
        lay = self.layout
        return np.exp(full[..., lay.n + lay.ties]) if lay.learnt else FIXED_SIGMA_ALPHA


def _prior(lay: Layout, theta: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """The negative log prior of the reduced vector (Jacobians of log b and log sigma_alpha included), its
    gradient and (diagonal) Hessian."""
    k = lay.basis.shape[1]
    value, grad, hess = 0.0, np.zeros_like(theta), np.zeros(len(theta))
    z = theta[:k]
    value += 0.5 * z @ z / SKILL_PRIOR_SD**2
    grad[:k], hess[:k] = z / SKILL_PRIOR_SD**2, 1 / SKILL_PRIOR_SD**2
    i = k
    for present, sd in ((lay.ties, B_PRIOR_SD), (lay.learnt, SIGMA_ALPHA_PRIOR_SD)):
        if present:  # t = log of a positive variable with a (half-)normal prior: 0.5 e^2t / sd^2 - t
            with np.errstate(over="ignore"):  # a trial point far out: an infinite value, refused by the search
                e2 = np.exp(2 * theta[i]) / sd**2
            value += 0.5 * e2 - theta[i]
            grad[i], hess[i] = e2 - 1, 2 * e2
            i += 1
    rest = theta[i:]
    value += 0.5 * rest @ rest / EFFECT_PRIOR_SD**2
    grad[i:], hess[i:] = rest / EFFECT_PRIOR_SD**2, 1 / EFFECT_PRIOR_SD**2
    return value, grad, np.diag(hess)


class Marginal:
    """The marginal model of one set of votes: its negative log posterior, gradient and Hessian (reduced
    coordinates), each pass over the votes in numpy (no compilation)."""

    def __init__(self, obs, *, baseline: int | None, position_bias: bool, learnt: bool, nodes: int = NODES) -> None:
        columns = [obs.side[:, None]] if position_bias else []
        if obs.features is not None:
            columns.append(np.asarray(obs.features, dtype=np.float64))
        dense = np.hstack(columns) if columns else np.zeros((len(obs.code), 0))
        weight = np.ones(len(obs.code)) if obs.weight is None else np.asarray(obs.weight, dtype=np.float64)
        ties = len(obs.categories) == 3
        layout = Layout(
            len(obs.systems), ties, learnt, dense.shape[1], skill_basis(len(obs.systems), baseline), position_bias
        )
        self._setup(layout, _terms(obs, dense, weight, ties, layout.full), len(obs.prompts), nodes)

    def _setup(self, layout: Layout, terms: _Terms, n_prompts: int, nodes: int) -> None:
        self.layout, self.terms, self.n_prompts = layout, terms, n_prompts
        self.nodes, self.log_w = normal_rule(nodes)
        self.transform = layout.transform()
        self._place(np.zeros(len(terms.prompts)), np.ones(len(terms.prompts)))

    def _place(self, centre: np.ndarray, scale: np.ndarray) -> None:
        """Each prompt's nodes z_jk = centre_j + scale_j x_k (J, K) and their log weights: the rule's, times
        scale_j phi(z_jk) / phi(x_k), so that sum_k w_jk f(z_jk) integrates f against the N(0, 1) prior of z_j
        (Pinheiro & Bates 1995, eq. 11)."""
        self.centre, self.scale = centre, scale
        self.z = centre[:, None] + scale[:, None] * self.nodes
        self.log_wj = self.log_w + np.log(scale)[:, None] + 0.5 * (self.nodes**2 - self.z**2)

    def adapt(self, theta: np.ndarray) -> None:
        """Centre each prompt's nodes at the conditional mode of its z_j given the reduced vector ``theta`` and
        scale them by the conditional curvature there (adaptive Gauss-Hermite quadrature, Pinheiro & Bates 1995;
        lme4's nAGQ > 1): a prompt whose alpha_j many votes determine has a posterior of z_j far narrower than the
        prior's, which fixed nodes at the prior's scale would miss between them. Scales are at most
        :data:`LARGEST_SCALE` (the prior's, where the votes say little or the log posterior is not concave)."""
        from lib.ranking.marginal_loops import modes

        lay, tm, full = self.layout, self.terms, self.transform @ theta
        b = float(np.exp(full[lay.n])) if lay.ties else 0.0
        sigma = float(np.exp(full[lay.n + lay.ties])) if lay.learnt else FIXED_SIGMA_ALPHA
        centre, scale = self.centre.copy(), np.empty(len(tm.prompts))

        def chunk(bounds: tuple[int, int]) -> None:
            lo, hi = bounds
            span = slice(tm.starts[lo], tm.starts[hi])
            t = self._t(full, span, b)
            modes(
                t,
                tm.weight[span],
                tm.starts[lo : hi + 1] - tm.starts[lo],
                tm.ties[lo:hi],
                b,
                sigma,
                centre[lo:hi],
                scale[lo:hi],
                LARGEST_SCALE,
            )

        threads = min(THREADS, len(tm.chunks))
        with concurrent.futures.ThreadPoolExecutor(threads) if threads > 1 else contextlib.nullcontext() as pool:
            list((pool.map if pool is not None else map)(chunk, tm.chunks))
        self._place(centre, scale)

    def _pass(self, full: np.ndarray, order: int) -> _Pass:
        """The log-likelihood at the full vector: its value; ``order`` >= 1: its gradient and the node weights; 2: its
        Hessian without the covariance over nodes of each prompt's gradient; 3: the exact Hessian (module docstring).
        Chunks of prompts run in :data:`THREADS` threads (the compiled loops release the GIL)."""
        lay, tm = self.layout, self.terms
        n, size, k_nodes = lay.n, lay.full, len(self.nodes)
        b = float(np.exp(full[n])) if lay.ties else 0.0
        sigma = float(np.exp(full[n + lay.ties])) if lay.learnt else FIXED_SIGMA_ALPHA
        xi = sigma * self.z
        with np.errstate(over="ignore"):  # a trial point far out: an infinite value, refused by the search
            alpha = np.exp(xi)
        tie = np.stack(_tie_constant(alpha, xi, b), axis=1) if lay.ties else np.zeros((len(xi), 6, k_nodes))
        out = _Pass()
        if order:
            out.grad, out.weights = np.zeros(size), np.zeros((len(tm.prompts), k_nodes))
        if order >= 2:
            out.hess = np.zeros((size, size))

        def chunk(bounds: tuple[int, int]) -> _Pass:
            part = _Pass(grad=None if out.grad is None else np.zeros(size))
            part.hess = None if out.hess is None else np.zeros((size, size))
            part.value = self._chunk(full, order, bounds, b, alpha, xi, tie, part, out.weights)
            return part

        threads = min(THREADS, len(tm.chunks))
        with concurrent.futures.ThreadPoolExecutor(threads) if threads > 1 else contextlib.nullcontext() as pool:
            for part in (pool.map if pool is not None else map)(chunk, tm.chunks):
                out.value += part.value
                if part.grad is not None:
                    out.grad += part.grad
                if part.hess is not None:
                    out.hess += part.hess
        if out.hess is not None:
            out.hess[n:, :n] = out.hess[:n, n:].T
        return out

    def _chunk(self, full, order, bounds, b, alpha, xi, tie, part: _Pass, weights) -> float:
        """One chunk's share of :meth:`_pass` (prompts ``bounds``): its value; its gradient and Hessian added to
        ``part``'s, its node weights written into ``weights``' rows."""
        lay, tm = self.layout, self.terms
        n, size, k_nodes = lay.n, lay.full, len(self.nodes)
        lo, hi = bounds
        span = slice(tm.starts[lo], tm.starts[hi])
        t = self._t(full, span, b)
        alpha, xi, tie = alpha[lo:hi], xi[lo:hi], tie[lo:hi]
        psi = self._psi(span, b) if order >= 2 else np.zeros((len(t), 0))
        pi = np.zeros((hi - lo, k_nodes))
        terms = np.zeros((5, len(t) if order else 0))
        c = np.zeros(((hi - lo) * k_nodes if order >= 3 else 0, size))
        value = _kernel()(
            order,
            t,
            tm.weight[span],
            tm.sign[span],
            tm.a[span],
            tm.b[span],
            psi,
            tm.starts[lo : hi + 1] - tm.starts[lo],
            tm.ties[lo:hi],
            tie,
            alpha,
            xi,
            self.log_wj[lo:hi],
            n,
            0 if lay.ties else -1,
            int(lay.ties) if lay.learnt else -1,
            pi,
            terms,
            c,
        )
        if order:
            weights[lo:hi] = pi
            tie_means = np.einsum("jk,jrk->rj", pi, tie)  # (6, J_c): each prompt's node-weighted tie constant
            self._add_gradient(part.grad, span, slice(lo, hi), terms, tie_means, b)
        if order >= 2:
            self._add_curvature(part.hess, span, slice(lo, hi), terms, psi, tie_means, b)
            part.hess += c.T @ c
        return value

    def _t(self, full: np.ndarray, span: slice, b: float) -> np.ndarray:
        """Each term's t (:class:`_Terms`) at the full vector."""
        lay, tm = self.layout, self.terms
        d = full[tm.b[span]] - full[tm.a[span]]
        if lay.q:
            d = d + tm.dense[span] @ full[lay.n + lay.ties + lay.learnt :]
        return tm.sign[span] * d + tm.kappa[span] * b

    def _psi(self, span: slice, b: float) -> np.ndarray:
        """(T_c, globals): the globals' part of each term's dt (y: kappa b; u: 0; covariates: sign x)."""
        lay, tm = self.layout, self.terms
        psi = np.zeros((span.stop - span.start, lay.full - lay.n))
        if lay.ties:
            psi[:, 0] = tm.kappa[span] * b
        if lay.q:
            psi[:, lay.ties + lay.learnt :] = tm.sign[span, None] * tm.dense[span]
        return psi

    def _add_gradient(self, grad, span, prompts, terms, tie, b) -> None:
        """A chunk's gradient from its terms' node-weighted dl/dt, dl/du and its prompts' node-weighted tie
        constant's derivatives ``tie`` (6, J_c)."""
        lay, tm = self.layout, self.terms
        n, iu = lay.n, lay.n + lay.ties
        a, bb, sign, w = tm.a[span], tm.b[span], tm.sign[span], tm.weight[span]
        wg = w * terms[0]
        om = sign * wg
        grad[:n] += np.bincount(bb, om, n) - np.bincount(a, om, n)
        if lay.q:
            grad[iu + lay.learnt :] += tm.dense[span].T @ om
        if lay.ties:
            grad[n] += b * (tm.kappa[span] @ wg) + tm.ties[prompts] @ tie[1]
        if lay.learnt:
            grad[iu] += w @ terms[1] + tm.ties[prompts] @ tie[2]

    def _add_curvature(self, hess, span, prompts, terms, psi, tie, b) -> None:
        """A chunk's node-weighted Hessian (without the covariance over nodes): the skills' weighted Laplacian, the
        skills' cross terms with the globals, the globals' block."""
        lay, tm = self.layout, self.terms
        n, iu = lay.n, int(lay.ties)  # u's column among the globals
        a, bb, sign, w = tm.a[span], tm.b[span], tm.sign[span], tm.weight[span]
        wh = w * terms[2]
        pairs = np.bincount(a * n + bb, wh, n * n).reshape(n, n)
        hess[:n, :n] += np.diag(pairs.sum(0) + pairs.sum(1)) - pairs - pairs.T
        cross = wh[:, None] * psi
        block = psi.T @ cross
        ties = tm.ties[prompts]
        if lay.learnt:
            wtu = w * terms[3]
            cross[:, iu] += wtu
            column = psi.T @ wtu
            block[:, iu] += column
            block[iu, :] += column
            block[iu, iu] += w @ terms[4] + ties @ tie[5]
        cross *= sign[:, None]  # the skills' side of dt: sign (e_B - e_A)
        for col in range(lay.full - n):
            hess[:n, n + col] += np.bincount(bb, cross[:, col], n) - np.bincount(a, cross[:, col], n)
        if lay.ties:
            block[0, 0] += b * (tm.kappa[span] @ (w * terms[0])) + ties @ tie[3]
            if lay.learnt:
                yu = ties @ tie[4]
                block[0, iu] += yu
                block[iu, 0] += yu
        hess[n:, n:] += block

    def evaluate(self, theta: np.ndarray, order: int) -> _Pass:
        """The negative log posterior (up to a constant) at the reduced vector, as :meth:`_pass` gives the
        log-likelihood (``order``), with the prior (:func:`_prior`), in reduced coordinates."""
        p = self._pass(self.transform @ theta, order)
        value, grad, hess = _prior(self.layout, theta)
        p.value = value - p.value
        if p.grad is not None:
            p.grad = grad - self.transform.T @ p.grad
        if p.hess is not None:
            p.hess = hess - self.transform.T @ p.hess @ self.transform
        return p

    def value_grad(self, theta: np.ndarray) -> tuple[float, np.ndarray]:
        """The negative log posterior (up to a constant) of the reduced vector and its gradient."""
        p = self.evaluate(theta, 1)
        assert p.grad is not None
        return p.value, p.grad

    def hessian(self, theta: np.ndarray, exact: bool = True) -> np.ndarray:
        """The negative log posterior's Hessian at the reduced vector: exact, or (``exact`` False) without the
        covariance over nodes of each prompt's gradient (the curvature lost to not knowing alpha_j), which
        makes it larger."""
        p = self.evaluate(theta, 3 if exact else 2)
        assert p.hess is not None
        return p.hess

    def node_weights(self, theta: np.ndarray) -> np.ndarray:
        """(J, K) each prompt's posterior weights of the nodes at the reduced vector (prompts in ``obs.prompts``
        order; a prompt without votes keeps the prior's weights)."""
        p = self.evaluate(theta, 1)
        return self._by_prompt(p.weights, np.exp(self.log_w))

    def _by_prompt(self, rows, prior) -> np.ndarray:
        """(J, K) ``rows`` of the prompts with votes, ``prior`` (K,) for the prompts without."""
        out = np.tile(prior, (self.n_prompts, 1))
        out[self.terms.prompts] = rows
        return out

    def start(self) -> np.ndarray:
        """Skills 0, b = 0.7 and sigma_alpha = 0.3 (the full model's initial b)."""
        theta = np.zeros(self.layout.reduced)
        i = self.layout.basis.shape[1]
        if self.layout.ties:
            theta[i] = np.log(0.7)
            i += 1
        if self.layout.learnt:
            theta[i] = np.log(0.3)
        return theta

    def fit(self) -> MarginalFit:
        """The mode by Newton steps with the exact Hessian (halved until the value falls), from the mode with
        every alpha_j = 1 (:meth:`_warm_start`), and the Hessian there.

        Raises
        ------
        ExactFitError
            The mode still moved by more than :data:`ADAPT_TOL` after :data:`ADAPT_ROUNDS` placements of the nodes:
            the nodes are not at the mode they integrate around (:data:`FALLBACK_NOTE` with the reason).
        SettingsError
            The Hessian at the mode is not positive definite, or the search did not converge.
        """
        with one_blas_thread():  # small matrices: BLAS threads only contend on a shared machine
            theta, p, steps, seconds = adaptive_mode(self, self._warm_start(), FALLBACK_NOTE)
        assert p.hess is not None and p.weights is not None
        nodes = self._by_prompt(self.z, self.nodes)
        return MarginalFit(
            self.layout, theta, p.hess, self._by_prompt(p.weights, np.exp(self.log_w)), nodes, steps, seconds
        )

    def _warm_start(self) -> np.ndarray:
        """The start of the search: the mode of the same votes with every alpha_j = 1 (one node at 0: Bradley-Terry
        with ties), sigma_alpha = 0.3."""
        warm = Marginal.__new__(Marginal)
        warm._setup(dataclasses.replace(self.layout, learnt=False), self.terms, self.n_prompts, 1)
        found = newton(warm.evaluate, warm.start(), WARM_TOL, 2)[0]
        theta = self.start()
        k = self.layout.basis.shape[1] + self.layout.ties
        theta[:k] = found[:k]
        theta[k + self.layout.learnt :] = found[k:]
        return theta


def newton(
    evaluate: Callable[[np.ndarray, int], _Pass], theta: np.ndarray, tol: float, order: int
) -> tuple[np.ndarray, _Pass, int, float]:
    """Newton steps from ``theta`` with the Hessian of ``order`` (``evaluate(theta, order)``: the negative log
    posterior, its gradient and Hessian, :meth:`Marginal.evaluate`) until the next would move no variable by more
    than ``tol``: the point, its pass, the number of steps and the seconds of its pass."""
    began = time.perf_counter()
    p = evaluate(theta, order)
    seconds = time.perf_counter() - began
    for steps in range(NEWTON_MAX + 1):
        assert p.grad is not None and p.hess is not None
        if not np.isfinite(p.hess).all():
            raise SettingsError("the quadrature fit's Hessian is not finite; fit with a NUTS sampler")
        step = _newton_step(p.hess, p.grad)
        if np.abs(step).max() < tol:
            return theta, p, steps, seconds
        scale = min(1.0, MAX_STEP / np.abs(step).max())  # far from the mode sigma_alpha could overflow alpha
        while True:
            trial = theta - scale * step
            with np.errstate(over="ignore", invalid="ignore"):
                began = time.perf_counter()
                new = evaluate(trial, order)
                seconds = time.perf_counter() - began
            if (
                np.isfinite(new.value)
                and np.isfinite(new.grad if new.grad is not None else np.nan).all()
                and new.value <= p.value + 1e-12 * abs(p.value)
            ):
                break
            scale /= 2
            if scale < 1e-6:
                raise SettingsError("the quadrature fit's Newton steps found no lower value; fit with a NUTS sampler")
        theta, p = trial, new
    raise SettingsError("the quadrature fit's Newton steps did not converge; fit with a NUTS sampler")


def adaptive_mode(model: Any, theta: np.ndarray, fallback: str) -> tuple[np.ndarray, _Pass, int, float]:
    """The mode of a quadrature model (``model.adapt(theta)`` places its nodes, ``model.evaluate(theta, order)``
    as :meth:`Marginal.evaluate`) from ``theta``: its nodes placed, the mode found with them held by Newton steps
    with the exact Hessian (:func:`newton`), placed again at that mode and so on until it moves no variable by more
    than :data:`ADAPT_TOL` (at most :data:`ADAPT_ROUNDS` placements): the mode, its pass, the Newton steps and the
    seconds of the last pass. ``fallback``: the model's note of the full model's fit, with a ``{reason}`` field.

    Raises
    ------
    ExactFitError
        The mode still moved by more than :data:`ADAPT_TOL` after :data:`ADAPT_ROUNDS` placements of the nodes:
        the nodes are not at the mode they integrate around (``fallback`` with the reason).
    SettingsError
        The Hessian at the mode is not positive definite, or the search did not converge.
    """
    steps = 0
    for _ in range(ADAPT_ROUNDS):
        model.adapt(theta)
        found, p, taken, seconds = newton(model.evaluate, theta, NEWTON_TOL, 3)
        steps += taken
        moved, theta = np.abs(found - theta).max(), found
        if moved < ADAPT_TOL:
            break
    else:
        reason = (
            f"the nodes did not settle: after {ADAPT_ROUNDS} placements the mode still moved {moved:.1e} "
            f"(more than {ADAPT_TOL:g})"
        )
        raise ExactFitError(fallback.format(reason=reason))
    assert p.hess is not None
    try:
        np.linalg.cholesky(p.hess)
    except np.linalg.LinAlgError as err:
        raise SettingsError(
            "the Laplace approximation failed: the Hessian at the mode is not positive definite; fit with a "
            "NUTS sampler"
        ) from err
    return theta, p, steps, seconds


def _newton_step(hess: np.ndarray, grad: np.ndarray) -> np.ndarray:
    """H^-1 g, H shifted until positive definite far from the mode (a no-op near it)."""
    shift = 0.0
    eye = np.eye(len(grad))
    while True:
        try:
            chol = np.linalg.cholesky(hess + shift * eye)
            break
        except np.linalg.LinAlgError:
            shift = max(2 * shift, 1e-3 * max(1.0, np.abs(np.diag(hess)).max()))
    from scipy.linalg import cho_solve

    return cho_solve((chol, True), grad)


def alpha_readouts(fit: MarginalFit) -> tuple[np.ndarray, np.ndarray]:
    """Each prompt's log alpha_j posterior mean and SD given the rest at the mode, (J,) each: the moments of
    sigma_alpha z_jk under the prompt's node weights."""
    sigma = fit.sigma_alpha(fit.full_mode())
    log_alpha = sigma * fit.nodes  # (J, K)
    mean = (fit.weights * log_alpha).sum(1)
    var = np.maximum((fit.weights * log_alpha**2).sum(1) - mean**2, 0.0)
    return mean, np.sqrt(var)


def lognormal_draws(mean: np.ndarray, sd: np.ndarray, draws: int, rng: np.random.Generator) -> np.ndarray:
    """(draws, J) float32 draws of exp(x_j), x_j ~ Normal(``mean`` (J,), ``sd`` (J,)): each prompt's alpha_j from its
    posterior given the rest (log alpha_j's mean and SD, :func:`alpha_readouts`).

    float32: an arena's 20,000,000 draws are 80 MB, not 160, and their logs (the alpha_j medians of
    :func:`lib.ranking.clusters.cluster_by_prompt`) take 0.02 s, not 0.1-0.4; the read-outs take their means, summed in
    float64, whose Monte-Carlo error (SD / sqrt(draws)) is far above float32's rounding (1e-7).
    Drawn in blocks of :data:`DRAW_BLOCK` values, each scaled, shifted and exponentiated while it is in the cache, in
    :data:`THREADS` threads, each with its own stream spawned from ``rng`` (numpy's multithreaded generation: the same
    draws for the same ``rng`` whatever the threads' timing)."""
    out = np.empty((draws, len(mean)), dtype=np.float32)
    mean32, sd32 = np.asarray(mean, dtype=np.float32), np.asarray(sd, dtype=np.float32)
    rows = max(1, DRAW_BLOCK // max(len(mean), 1))

    def fill(stream: np.random.Generator, first: int, last: int) -> None:
        for start in range(first, last, rows):
            block = out[start : min(start + rows, last)]
            stream.standard_normal(out=block, dtype=np.float32)
            block *= sd32
            block += mean32
            np.exp(block, out=block)

    bounds = np.linspace(0, draws, THREADS + 1).astype(int)
    with concurrent.futures.ThreadPoolExecutor(THREADS) as pool:  # numpy's generators and ufuncs release the GIL
        list(pool.map(fill, rng.spawn(THREADS), bounds[:-1], bounds[1:]))
    return out


def sample_marginal(obs, settings: Any, tracker: Tracker, *, learnt: bool) -> Draws:
    """The quadrature fit of ``obs`` (module docstring) as a posterior of ``settings.draws`` independent draws in
    one chain: ``skill`` (system), ``alpha`` (prompt, float32; log alpha_j drawn from a normal with its posterior mean
    and SD given the rest, :func:`lognormal_draws`), ``b`` (threshold), and as the model has them ``sigma_alpha``,
    ``gamma``, ``style`` (feature); with their values at the mode (alpha: its posterior mean given the rest).

    ``settings``: a :class:`lib.ranking.fit.RankSettings` (its baseline, position bias, draws and seed).
    """

    def build() -> Marginal:
        return Marginal(
            obs,
            baseline=None if settings.baseline is None else obs.systems.index(settings.baseline),
            position_bias=settings.position_bias,
            learnt=learnt,
        )

    return quadrature_draws(settings, tracker, "alpha", build, functools.partial(_posterior, obs), compile=_kernel)


def quadrature_draws(
    settings: Any,
    tracker: Tracker,
    what: str,
    build: Callable[[], Any],
    posterior: Callable[[Any, int, np.random.Generator], Draws],
    compile: Callable[[], object] | None = None,
) -> Draws:
    """A quadrature fit's phases and progress: its model built (``build()``, the phase "model build"), its loops
    compiled (``compile()``, "compile"), its mode found (``model.fit()``: "optimise", and its last pass "Hessian"),
    then ``posterior(fit, draws, rng)`` ("draws"), ``settings.draws`` draws (1,000 for settings without sizes) with
    ``settings.seed``; ``what``: the prompt variables integrated out, as the progress says them."""
    draws = settings.draws if isinstance(settings, NutsSettings) else 1000
    tracker.stage(0.02, f"building the quadrature over each prompt's {what}")
    with tracker.timer.phase("model build"):
        model = build()
    if compile is not None:
        with tracker.timer.phase("compile"):  # numba's, or its cache's on disk
            compile()
    tracker.stage(0.1, f"finding the mode (Newton steps on the skills, {what} integrated out)")
    began = time.perf_counter()
    fit = model.fit()
    tracker.timer.add("optimise", time.perf_counter() - began - fit.last_pass_s)
    tracker.timer.add("Hessian", fit.last_pass_s)
    tracker.stage(0.8, "drawing from the Gaussian")
    with tracker.timer.phase("draws"), one_blas_thread():  # (prompts, draws) products: threads only contend
        return posterior(fit, draws, np.random.default_rng(settings.seed))


def gaussian_rows(mode: np.ndarray, precision: np.ndarray, draws: int, rng: np.random.Generator) -> np.ndarray:
    """(1 + draws, reduced): the mode, then ``draws`` draws of the Gaussian with that mean and ``precision``."""
    from scipy.linalg import solve_triangular

    chol = np.linalg.cholesky(precision)
    return np.vstack([mode, mode + solve_triangular(chol.T, rng.standard_normal((len(mode), draws)), lower=False).T])


def as_draws(obs, mode: dict[str, np.ndarray], posterior: dict[str, np.ndarray], dims: dict[str, list[str]]) -> Draws:
    """A quadrature fit's posterior (name -> (draws, ...)) as one chain of an InferenceData, and its ``mode``; the
    coordinates ``system``, ``prompt``, ``threshold``, ``feature`` of ``obs`` where ``dims`` name them."""
    import arviz as az

    coords = {
        "system": np.asarray(obs.systems),
        "prompt": np.asarray(obs.prompts),
        "threshold": np.arange(1, len(obs.categories)),
        "feature": np.asarray(obs.feature_names),
    }
    dims = {k: d for k, d in dims.items() if k in posterior}
    coords = {c: v for c, v in coords.items() if any(c in d for d in dims.values())}
    return Draws(az.from_dict(posterior={k: v[None] for k, v in posterior.items()}, coords=coords, dims=dims), mode)


def _posterior(obs, fit: MarginalFit, draws: int, rng: np.random.Generator) -> Draws:
    """The draws as an InferenceData and the mode (:func:`sample_marginal`)."""
    lay = fit.layout
    full = gaussian_rows(fit.mode, fit.precision, draws, rng) @ lay.transform().T  # row 0: the mode
    alpha = lognormal_draws(*alpha_readouts(fit), draws, rng)
    values = {"skill": full[:, : lay.n]}
    i = lay.n
    if lay.ties:
        b = np.exp(full[:, i])
        values["b"] = np.stack([-b, b], axis=1)
        i += 1
    else:
        values["b"] = np.zeros((len(full), 1))
    if lay.learnt:
        values["sigma_alpha"] = np.exp(full[:, i])
        i += 1
    if lay.gamma:
        values["gamma"] = full[:, i]
        i += 1
    if obs.features is not None:
        values["style"] = full[:, i : i + obs.features.shape[1]]
    alpha_mean = (fit.weights * np.exp(fit.sigma_alpha(full[0]) * fit.nodes)).sum(1)
    mode = {k: v[0] for k, v in values.items()} | {"alpha": alpha_mean}
    posterior = {k: v[1:] for k, v in values.items()} | {"alpha": alpha}
    dims = {"skill": ["system"], "alpha": ["prompt"], "b": ["threshold"], "style": ["feature"]}
    return as_draws(obs, mode, posterior, dims)


def laplace_fit(obs, settings: Any, fixed_alpha: bool) -> tuple[Callable[..., Any] | None, str]:
    """The votes likelihood's own MAP + Laplace fit (:attr:`lib.ranking.likelihoods.Likelihood.laplace`): the
    quadrature fit of ``obs`` (:func:`sample_marginal`) and :data:`NOTE` where it applies (:func:`not_applicable`),
    else None (the full model's Laplace fit runs) and :data:`FALLBACK_NOTE`.

    The fit is called as ``fit(settings, tracker)`` (:attr:`lib.inference.settings.LaplaceSettings.exact_fit`) and
    builds no PyMC model; the full model's refusals (a baseline that is not a system, ...) are made here, before it."""
    from lib.ranking.model import check_effects, learns_alpha_spread

    reason = not_applicable(obs, intransitivity=settings.intransitivity, fixed_alpha=fixed_alpha)
    if reason is not None:
        return None, FALLBACK_NOTE.format(reason=reason)
    check_effects(
        obs,
        baseline=settings.baseline,
        intransitivity=False,
        position_bias=settings.position_bias,
        annotator_effect=False,
    )
    learnt = learns_alpha_spread(obs)
    return functools.partial(sample_marginal, obs, learnt=learnt), NOTE.format(nodes=NODES)
