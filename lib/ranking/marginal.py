"""The votes likelihood with each prompt's discrimination integrated out exactly (Gauss-Hermite quadrature).

In the votes likelihood (:mod:`lib.ranking.model`) a prompt's discrimination alpha_j enters only that prompt's
votes, so the likelihood of everything else (the skills, the shared cutpoints, the spread sigma_alpha, the
position effect gamma, the style coefficients) is a product over prompts of one-dimensional integrals::

    p(votes_j | theta) = integral of prod_{v in j} p(y_v | exp(sigma_alpha z) (s_B - s_A + ...), b) phi(z) dz
                      ~= sum_k w_k prod_{v in j} p(y_v | exp(sigma_alpha x_k) ..., b)

with K Gauss-Hermite nodes x_k and weights w_k of the standard normal (log alpha_j = sigma_alpha z_j,
z_j ~ N(0, 1), the model's non-centred form; sigma_alpha = 0.5 fixed where the spread is not learnt,
:func:`lib.ranking.model.learns_alpha_spread`). K = :data:`NODES` computes each prompt's integral to near
machine precision for the few votes of a prompt. What is left is a model of about as many variables as
systems: its mode is found by Newton steps with the exact Hessian (:meth:`Marginal.hessian`: the log-sum-exp's
Hessian is the node-weighted mean of the votes' Hessians plus the covariance over nodes of each prompt's
gradient) and the posterior is the Gaussian there (MAP + Laplace of the marginal, Tierney & Kadane 1986),
where the full model's Laplace fit (:mod:`lib.inference.laplace`) approximated 20,000 one-dimensional
integrals by Gaussians too. Each alpha_j's posterior given the rest (mean and SD of log alpha_j) comes from
the same nodes' weights (:func:`alpha_readouts`).

Pure numpy and JAX: no PyMC model is built. Where the votes model has more than the skills, cutpoints, sigma_alpha,
gamma and style (pair deviations, skills by category) or is not the votes likelihood, :func:`not_applicable`
says why and the fit takes the full model's path.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from lib.errors import SettingsError
from lib.inference.progress import Tracker
from lib.inference.samplers import Draws
from lib.inference.settings import NutsSettings

NODES = 15
"""Gauss-Hermite nodes per prompt integral: the marginal log-likelihood of a simulated arena changes by less
than 1e-9 from 15 to 30 nodes (``tests/ranking/test_rank_marginal.py``)."""
CHUNK_VOTES = 32_768
"""Votes per chunk of the Hessian's pass (whole prompts each; memory ~ CHUNK_VOTES x NODES x variables^2)."""
NEWTON_MAX = 50
NEWTON_TOL = 1e-7
SWITCH_TOL = 1e-2
MAX_STEP = 1.0
"""At most NEWTON_MAX Newton steps: with the curvature lost to alpha left out (cheap) until no variable moves
more than SWITCH_TOL, then exact until none moves more than NEWTON_TOL; no variable moves more than MAX_STEP
(unconstrained units) in one step."""
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
class _Votes:
    """Votes sorted by prompt, in chunks of whole prompts padded to one shape (C, V) (padding: weight 0)."""

    a: np.ndarray  # (C, V) int
    b: np.ndarray
    code: np.ndarray
    weight: np.ndarray  # (C, V) float
    dense: np.ndarray  # (C, V, q): side and style features, the location's linear covariates
    seg: np.ndarray  # (C, V) int: the vote's prompt within its chunk
    prompts: np.ndarray  # (C, J_c) int: each chunk's prompts (index into obs.prompts; -1: padding)


def _chunks(obs, dense: np.ndarray, weight: np.ndarray) -> _Votes:
    """Pack the votes of whole prompts into padded chunks of at least :data:`CHUNK_VOTES` votes' room."""
    order = np.argsort(obs.prompt, kind="stable")
    prompt = obs.prompt[order]
    starts = np.flatnonzero(np.r_[True, prompt[1:] != prompt[:-1]])
    sizes = np.diff(np.r_[starts, len(prompt)])
    room = max(min(CHUNK_VOTES, len(prompt)), int(sizes.max()))
    chunk_of = np.zeros(len(starts), dtype=np.int64)  # greedy: a prompt goes into the current chunk if it fits
    filled, c = 0, 0
    for i, size in enumerate(sizes):
        if filled + size > room:
            c, filled = c + 1, 0
        chunk_of[i] = c
        filled += size
    n_chunks = c + 1
    per_chunk = np.bincount(chunk_of, minlength=n_chunks)
    j_room = int(per_chunk.max())
    first_prompt = np.r_[0, np.cumsum(per_chunk)[:-1]]
    local_prompt = np.arange(len(starts)) - first_prompt[chunk_of]
    vote_prompt = np.repeat(np.arange(len(starts)), sizes)  # ordinal of the vote's prompt among those present
    vote_chunk = chunk_of[vote_prompt]
    chunk_start = np.r_[0, np.cumsum(np.bincount(vote_chunk, minlength=n_chunks))[:-1]]
    slot = np.arange(len(prompt)) - chunk_start[vote_chunk]

    def padded(values, fill, dtype):
        out = np.full((n_chunks, room, *values.shape[1:]), fill, dtype=dtype)
        out[vote_chunk, slot] = values
        return out

    prompts = np.full((n_chunks, j_room), -1, dtype=np.int64)
    prompts[chunk_of, local_prompt] = prompt[starts]
    return _Votes(
        padded(obs.system_a[order], 0, np.int32),
        padded(obs.system_b[order], 0, np.int32),
        padded(obs.code[order], 0, np.int32),
        padded(weight[order], 0.0, np.float64),
        padded(dense[order], 0.0, np.float64),
        padded(local_prompt[vote_prompt], 0, np.int32),
        prompts,
    )


@dataclass
class Layout:
    """The marginal model's variables.

    Full coordinates (what a vote reads): skills (n), then ``y`` = log b (ties only), ``u`` = log sigma_alpha
    (learnt only), then the location's linear covariates' coefficients (gamma, style; ``q``). Reduced
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


@dataclass(frozen=True)
class _Shape:
    """What the compiled programs depend on of a :class:`Layout`."""

    n: int
    ties: bool
    learnt: bool
    q: int

    @property
    def full(self) -> int:
        """The number of full coordinates."""
        return self.n + self.ties + self.learnt + self.q


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


def _globals(lay: _Shape, full):
    """The cutpoint b (0 without ties) and sigma_alpha of a full vector."""
    import jax.numpy as jnp

    b = jnp.exp(full[lay.n]) if lay.ties else 0.0
    sigma = jnp.exp(full[lay.n + lay.ties]) if lay.learnt else FIXED_SIGMA_ALPHA
    return b, sigma


def _predictors(lay: _Shape, n_categories: int, x, full, chunk):
    """Each vote's lower and upper linear predictors h, l = alpha_k (d - c) (V, K) at each node, the cuts'
    multiples of b (V, 1) each, the outer categories (V, 1) each, alpha_k and sigma_alpha x_k (1, K) and b."""
    import jax.numpy as jnp

    a, b_idx, code, _, dense, _ = chunk
    d = full[b_idx] - full[a] + (dense @ full[lay.n + lay.ties + lay.learnt :] if lay.q else 0.0)
    b, sigma = _globals(lay, full)
    xs = (sigma * x)[None, :]
    alpha = jnp.exp(xs)
    kappa = jnp.asarray([0.0, -1.0, 1.0, 0.0]) if n_categories == 3 else jnp.zeros(3)  # each cut over b
    k_h, k_l = kappa[code][:, None], kappa[code + 1][:, None]
    bottom, top = (code == 0)[:, None], (code == n_categories - 1)[:, None]
    return alpha * (d[:, None] - k_h * b), alpha * (d[:, None] - k_l * b), k_h, k_l, bottom, top, alpha, xs, b


def _vote_logp(lay: _Shape, n_categories: int, x, full, chunk):
    """(V, K) log P(y_v) of each vote at each node: log(sigmoid(h) - sigmoid(l)), the outer categories'
    missing side left out (as :func:`lib.irt.model.ordinal_logp`, without its finite stand-in for an infinite
    cut, which large alpha_k pass)."""
    import jax
    import jax.numpy as jnp

    hi, lo, _, _, bottom, top, _, _, _ = _predictors(lay, n_categories, x, full, chunk)
    middle = ~(bottom | top)  # its inputs made safe in the outer categories (no NaN gradients)
    hi_m, lo_m = jnp.where(middle, hi, 1.0), jnp.where(middle, lo, 0.0)
    gap = lo_m - hi_m
    log1mexp = jnp.where(gap > -0.6931, jnp.log(-jnp.expm1(gap)), jnp.log1p(-jnp.exp(gap)))
    inner = -jax.nn.softplus(-hi_m) - jax.nn.softplus(lo_m) + log1mexp
    return jnp.where(bottom, -jax.nn.softplus(lo), jnp.where(top, -jax.nn.softplus(-hi), inner)) * chunk[3][:, None]


def _predictor_derivatives(lay: _Shape, lin, kap, alpha, xs, b):
    """The gradient (V, K, r) and Hessian (V, K, r, r) of one linear predictor alpha (d - kap b) in the predictor's
    variables (d, y = log b, u = log sigma_alpha; r = 1 + ties + learnt)."""
    import jax.numpy as jnp

    zero = jnp.zeros_like(lin)
    grads = [alpha + zero] + [-alpha * kap * b + zero] * lay.ties + [lin * xs] * lay.learnt
    r = len(grads)
    hess = jnp.zeros((*lin.shape, r, r))
    y_at, u_at = 1, 1 + lay.ties
    if lay.ties:
        hess = hess.at[..., y_at, y_at].set(-alpha * kap * b + zero)
    if lay.learnt:
        hess = hess.at[..., 0, u_at].set(alpha * xs + zero).at[..., u_at, 0].set(alpha * xs + zero)
        hess = hess.at[..., u_at, u_at].set(lin * xs * (xs + 1))
    if lay.ties and lay.learnt:
        cross = -alpha * kap * b * xs + zero
        hess = hess.at[..., y_at, u_at].set(cross).at[..., u_at, y_at].set(cross)
    return jnp.stack(grads, -1), hess


def _derivatives(lay: _Shape, n_categories: int, x, full, chunk):
    """Each vote's gradient (V, K, r) and Hessian (V, K, r, r) at each node in its predictor's variables
    (:func:`_predictor_derivatives`), in closed form (JAX's nested derivatives of :func:`_vote_logp` took 4 times
    as long). With h, l the lower and upper predictors: l_h = sigma(-h) / (sigma(-l) (1 - e^(l-h))),
    l_l = -sigma(l) / (sigma(h) (1 - e^(l-h))) (0 for an outer category's missing side), l_hh = l_h (1 - 2
    sigma(h)) - l_h^2, l_ll likewise, l_hl = -l_h l_l."""
    import jax
    import jax.numpy as jnp

    h, lo, k_h, k_l, bottom, top, alpha, xs, b = _predictors(lay, n_categories, x, full, chunk)
    em = -jnp.expm1(jnp.where(bottom | top, -1.0, lo - h))
    sig, log_sig = jax.nn.sigmoid, jax.nn.log_sigmoid  # ratios of sigmoids by their logs: no 0 / 0 far out
    l_h = jnp.where(bottom, 0.0, jnp.where(top, sig(-h), jnp.exp(log_sig(-h) - log_sig(-lo)) / em))
    l_l = jnp.where(top, 0.0, jnp.where(bottom, -sig(lo), -jnp.exp(log_sig(lo) - log_sig(h)) / em))
    gh, hh = _predictor_derivatives(lay, h, k_h, alpha, xs, b)
    gl, hl = _predictor_derivatives(lay, lo, k_l, alpha, xs, b)

    def outer(p, r):
        return p[..., :, None] * r[..., None, :]

    grad = l_h[..., None] * gh + l_l[..., None] * gl
    hess = (
        (l_h * (1 - 2 * sig(h)) - l_h**2)[..., None, None] * outer(gh, gh)
        + (l_l * (1 - 2 * sig(lo)) - l_l**2)[..., None, None] * outer(gl, gl)
        - (l_h * l_l)[..., None, None] * (outer(gh, gl) + outer(gl, gh))
        + l_h[..., None, None] * hh
        + l_l[..., None, None] * hl
    )
    w = chunk[3][:, None, None]
    return grad * w, hess * w[..., None]


def _to_local(lay: _Shape, dense):
    """(V, r, m): the predictor's variables (d, y, u) in a vote's own (s_A, s_B, y, u, covariates)."""
    import jax.numpy as jnp

    extra = lay.ties + lay.learnt
    jac = jnp.zeros((dense.shape[0], 1 + extra, 2 + extra + lay.q))
    jac = jac.at[:, 0, 0].set(-1.0).at[:, 0, 1].set(1.0)
    for k in range(extra):
        jac = jac.at[:, 1 + k, 2 + k].set(1.0)
    return jac.at[:, 0, 2 + extra :].set(dense) if lay.q else jac


@functools.lru_cache(maxsize=8)
def _programs(lay: _Shape, n_categories: int, nodes: int, n_seg: int):
    """The jitted per-chunk programs, kept for the next fit of the same shapes (a page's rerun compiles
    nothing): the value and gradient of the chunk's marginal log-likelihood in full coordinates, the votes'
    curvature (:meth:`Marginal.hessian`), each prompt's posterior weights of the nodes; and the nodes."""
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)  # as PyTensor's JAX backend does for float64 models
    points, w = np.polynomial.hermite_e.hermegauss(nodes)
    x, log_w = jnp.asarray(points), jnp.asarray(np.log(w / np.sqrt(2 * np.pi)))

    def node_sums(full, chunk):  # (J_c, K): each prompt's log-likelihood at each node, its log weight added
        values = _vote_logp(lay, n_categories, x, full, chunk)
        return jax.ops.segment_sum(values, chunk[5], num_segments=n_seg) + log_w

    def chunk_value(full, chunk):
        return jnp.sum(jax.nn.logsumexp(node_sums(full, chunk), axis=1))

    def weights(full, chunk):
        s = node_sums(full, chunk)
        return jnp.exp(s - jax.nn.logsumexp(s, axis=1, keepdims=True))

    def vote_curvature(full, chunk, exact: bool):
        """Each vote's node-weighted Hessian of its own variables, sum_k pi_jk h_vk (V, m, m), and (``exact``)
        its centred, weighted gradients sqrt(pi_jk) (g_vk - sum_k pi_jk g_vk) (V, K, m), from which the
        covariance over nodes of each prompt's gradient is assembled."""
        pi = weights(full, chunk)[chunk[5]]  # (V, K)
        g3, h3 = _derivatives(lay, n_categories, x, full, chunk)
        jac = _to_local(lay, chunk[4])
        h_bar = jnp.einsum("vrm,vrs,vsn->vmn", jac, jnp.einsum("vk,vkrs->vrs", pi, h3), jac)
        if not exact:
            return h_bar, None
        g = jnp.einsum("vkr,vrm->vkm", g3, jac)
        g_bar = jnp.einsum("vk,vkm->vm", pi, g)
        return h_bar, (g - g_bar[:, None, :]) * jnp.sqrt(pi)[..., None]

    return jax.jit(jax.value_and_grad(chunk_value)), jax.jit(vote_curvature, static_argnums=2), jax.jit(weights), x


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
    nodes : ndarray (K,)
        The nodes x_k (log alpha = sigma_alpha x_k).
    newton_steps : int
    """

    layout: Layout
    mode: np.ndarray
    precision: np.ndarray
    weights: np.ndarray
    nodes: np.ndarray
    newton_steps: int

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
    """The marginal model of one set of votes: its negative log posterior, gradient and Hessian (reduced)."""

    def __init__(self, obs, *, baseline: int | None, position_bias: bool, learnt: bool, nodes: int = NODES) -> None:
        import jax.numpy as jnp

        columns = [obs.side[:, None]] if position_bias else []
        if obs.features is not None:
            columns.append(np.asarray(obs.features, dtype=np.float64))
        dense = np.hstack(columns) if columns else np.zeros((len(obs.code), 0))
        weight = np.ones(len(obs.code)) if obs.weight is None else np.asarray(obs.weight, dtype=np.float64)
        self.n_categories = len(obs.categories)
        self.layout = Layout(
            len(obs.systems),
            self.n_categories == 3,
            learnt,
            dense.shape[1],
            skill_basis(len(obs.systems), baseline),
            position_bias,
        )
        self.votes = _chunks(obs, dense, weight)
        self.n_prompts = len(obs.prompts)
        v = self.votes
        lay = self.layout
        self._value_grad, self._hessian, self._weights, self.nodes = _programs(
            _Shape(lay.n, lay.ties, lay.learnt, lay.q), self.n_categories, nodes, v.prompts.shape[1]
        )
        self._chunks = [
            (
                jnp.asarray(v.a[c]),
                jnp.asarray(v.b[c]),
                jnp.asarray(v.code[c]),
                jnp.asarray(v.weight[c]),
                jnp.asarray(v.dense[c]),
                jnp.asarray(v.seg[c]),
            )
            for c in range(len(v.a))
        ]
        self.transform = self.layout.transform()
        rest = np.arange(self.layout.n, self.layout.full)
        self._index = [  # (V, m): each vote's own variables in full coordinates
            np.hstack([v.a[c][:, None], v.b[c][:, None], np.broadcast_to(rest, (v.a.shape[1], len(rest)))])
            for c in range(len(v.a))
        ]

    def value_grad(self, theta: np.ndarray) -> tuple[float, np.ndarray]:
        """The negative log posterior (up to a constant) of the reduced vector and its gradient."""
        full = self.transform @ theta
        value, grad = 0.0, np.zeros(self.layout.full)
        for chunk in self._chunks:
            v, g = self._value_grad(full, chunk)
            value, grad = value + float(v), grad + np.asarray(g)
        p_value, p_grad, _ = _prior(self.layout, theta)
        return p_value - value, p_grad - self.transform.T @ grad

    def hessian(self, theta: np.ndarray, exact: bool = True) -> np.ndarray:
        """The negative log posterior's Hessian at the reduced vector: exact, or (``exact`` False) without the
        covariance over nodes of each prompt's gradient (the curvature lost to not knowing alpha_j), which
        makes it larger: Newton steps with it are shorter than exact ones and never overshoot."""
        full = self.transform @ theta
        size, nodes = self.layout.full, len(self.nodes)
        total = np.zeros(size * size)
        gram = np.zeros((size, size))
        for chunk, idx, seg in zip(self._chunks, self._index, self.votes.seg, strict=True):
            h_bar, r = self._hessian(full, chunk, exact)
            # sum_v M_v' h_bar_v M_v: each vote's (m, m) block added at its variables' rows and columns
            flat = (idx[:, :, None] * size + idx[:, None, :]).ravel()
            total += np.bincount(flat, weights=np.asarray(h_bar).ravel(), minlength=size * size)
            if exact:  # each prompt's gradient at each node (J_c K, full), centred: their weighted Gram matrix
                rows = (seg[:, None, None] * nodes + np.arange(nodes)[None, :, None]) * size + idx[:, None, :]
                n_rows = (int(seg.max()) + 1) * nodes
                c = np.bincount(rows.ravel(), weights=np.asarray(r).ravel(), minlength=n_rows * size)
                c = c.reshape(n_rows, size)
                gram += c.T @ c
        total = total.reshape(size, size) + gram
        total = (total + total.T) / 2
        return _prior(self.layout, theta)[2] - self.transform.T @ total @ self.transform

    def node_weights(self, theta: np.ndarray) -> np.ndarray:
        """(J, K) each prompt's posterior weights of the nodes at the reduced vector."""
        full = self.transform @ theta
        out = np.zeros((self.n_prompts, len(self.nodes)))
        for chunk, prompts in zip(self._chunks, self.votes.prompts, strict=True):
            pi = np.asarray(self._weights(full, chunk))
            keep = prompts >= 0
            out[prompts[keep]] = pi[keep]
        return out

    def start(self) -> np.ndarray:
        """The start of the search: skills 0, b = 0.7 and sigma_alpha = 0.3 (the full model's initial b)."""
        theta = np.zeros(self.layout.reduced)
        i = self.layout.basis.shape[1]
        if self.layout.ties:
            theta[i] = np.log(0.7)
            i += 1
        if self.layout.learnt:
            theta[i] = np.log(0.3)
        return theta

    def fit(self, timer=None) -> MarginalFit:
        """The mode by damped Newton steps (exact Hessian; halved steps until the value falls) and the Hessian
        there.

        Raises
        ------
        SettingsError
            The Hessian at the mode is not positive definite, or the search did not converge.
        """
        theta = self.start()
        value, grad = self.value_grad(theta)
        exact, steps = False, 0
        for steps in range(1, NEWTON_MAX + 1):  # noqa: B007 (the count is reported)
            precision = self.hessian(theta, exact)
            if not np.isfinite(precision).all():
                raise SettingsError("the quadrature fit's Hessian is not finite; fit with a NUTS sampler")
            step = _newton_step(precision, grad)
            scale = min(1.0, MAX_STEP / np.abs(step).max())  # far from the mode sigma_alpha could overflow alpha
            while True:
                trial = theta - scale * step
                new_value, new_grad = self.value_grad(trial)
                if np.isfinite(new_value) and np.isfinite(new_grad).all() and new_value <= value + 1e-12 * abs(value):
                    break
                scale /= 2
                if scale < 1e-6:
                    raise SettingsError(
                        "the quadrature fit's Newton steps found no lower value; fit with a NUTS sampler"
                    )
            theta, value, grad = trial, new_value, new_grad
            moved = np.abs(scale * step).max()
            if exact and moved < NEWTON_TOL:
                break  # the Hessian at the last point but one, within NEWTON_TOL of the mode, is the precision
            # the steps with the larger curvature converge linearly; the last ones, exact, quadratically
            exact = exact or moved < SWITCH_TOL
        else:
            raise SettingsError("the quadrature fit's Newton steps did not converge; fit with a NUTS sampler")
        try:
            np.linalg.cholesky(precision)
        except np.linalg.LinAlgError as err:
            raise SettingsError(
                "the Laplace approximation failed: the Hessian at the mode is not positive definite; fit with a "
                "NUTS sampler"
            ) from err
        return MarginalFit(self.layout, theta, precision, self.node_weights(theta), np.asarray(self.nodes), steps)


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
    sigma_alpha x_k under the prompt's node weights."""
    sigma = fit.sigma_alpha(fit.full_mode())
    log_alpha = sigma * fit.nodes  # (K,)
    mean = fit.weights @ log_alpha
    var = np.maximum(fit.weights @ log_alpha**2 - mean**2, 0.0)
    return mean, np.sqrt(var)


def sample_marginal(obs, settings: Any, tracker: Tracker, *, learnt: bool) -> Draws:
    """The quadrature fit of ``obs`` (module docstring) as a posterior of ``settings.draws`` independent draws in
    one chain: ``skill`` (system), ``alpha`` (prompt; log alpha_j drawn from a normal with its posterior mean and
    SD given the rest, :func:`alpha_readouts`), ``b`` (threshold), and as the model has them ``sigma_alpha``,
    ``gamma``, ``style`` (feature); with their values at the mode (alpha: its posterior mean given the rest).

    ``settings``: a :class:`lib.ranking.fit.RankSettings` (its baseline, position bias, draws and seed).
    """
    import arviz as az

    draws = settings.draws if isinstance(settings, NutsSettings) else 1000
    tracker.stage(0.02, "compiling the quadrature over each prompt's alpha")
    with tracker.timer.phase("model build"):
        model = Marginal(
            obs,
            baseline=None if settings.baseline is None else obs.systems.index(settings.baseline),
            position_bias=settings.position_bias,
            learnt=learnt,
        )
    tracker.stage(0.1, "finding the mode (Newton steps on the skills, alpha integrated out)")
    with tracker.timer.phase("optimise"):
        fit = model.fit()
    tracker.stage(0.8, "drawing from the Gaussian")
    with tracker.timer.phase("draws"):
        return _posterior(obs, fit, draws, settings.seed, az)


def _posterior(obs, fit: MarginalFit, draws: int, seed: int, az) -> Draws:
    """The draws as an InferenceData and the mode (:func:`sample_marginal`)."""
    from scipy.linalg import solve_triangular

    lay = fit.layout
    rng = np.random.default_rng(seed)
    chol = np.linalg.cholesky(fit.precision)
    reduced = fit.mode + solve_triangular(chol.T, rng.standard_normal((lay.reduced, draws)), lower=False).T
    full = np.vstack([fit.mode, reduced]) @ lay.transform().T  # row 0: the mode
    mean, sd = alpha_readouts(fit)
    log_alpha = mean + sd * rng.standard_normal((draws, len(mean)))
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
    alpha_mean = fit.weights @ np.exp(fit.sigma_alpha(full[0]) * fit.nodes)
    mode = {k: v[0] for k, v in values.items()} | {"alpha": alpha_mean}
    posterior = {k: v[1:][None] for k, v in values.items()} | {"alpha": np.exp(log_alpha)[None]}
    dims = {"skill": ["system"], "alpha": ["prompt"], "b": ["threshold"], "style": ["feature"]}
    coords = {
        "system": np.asarray(obs.systems),
        "prompt": np.asarray(obs.prompts),
        "threshold": np.arange(1, len(obs.categories)),
        "feature": np.asarray(obs.feature_names),
    }
    dims = {k: d for k, d in dims.items() if k in posterior}
    coords = {c: v for c, v in coords.items() if any(c in d for d in dims.values())}
    return Draws(az.from_dict(posterior=posterior, coords=coords, dims=dims), mode)


def laplace_fit(obs, settings: Any, fixed_alpha: bool) -> tuple[Callable[..., Any] | None, str]:
    """The votes likelihood's own MAP + Laplace fit (:attr:`lib.ranking.likelihoods.Likelihood.laplace`): the
    quadrature fit of ``obs`` (:func:`sample_marginal`) and :data:`NOTE` where it applies (:func:`not_applicable`),
    else None (the full model's Laplace fit runs) and :data:`FALLBACK_NOTE`.

    The fit is called as ``fit(settings, tracker)`` (:attr:`lib.inference.settings.LaplaceSettings.exact_fit`) and
    builds no PyMC model; the full model's refusals (a baseline that is not a system, ...) are made here, before it."""
    from lib.ranking.model import _check_effects, learns_alpha_spread

    reason = not_applicable(obs, intransitivity=settings.intransitivity, fixed_alpha=fixed_alpha)
    if reason is not None:
        return None, FALLBACK_NOTE.format(reason=reason)
    _check_effects(
        obs,
        baseline=settings.baseline,
        intransitivity=False,
        position_bias=settings.position_bias,
        annotator_effect=False,
    )
    learnt = learns_alpha_spread(obs)
    return functools.partial(sample_marginal, obs, learnt=learnt), NOTE.format(nodes=NODES)
