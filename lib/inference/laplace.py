"""MAP + Laplace: a Gaussian approximation of a posterior at its mode, for models whose free variables
split into a few global ones and one small block per unit (e.g. per prompt), coupled only through
the globals.

The mode of the log posterior (on the unconstrained space, Jacobian included) is found by L-BFGS.
The Hessian is a small dense global block A, one small block D_j per unit and the cross terms B_j;
it is assembled from Hessian-vector products (one per global variable, plus one per local variable
probing all units at once) and never formed densely (:func:`block_hessian`); the global marginal uses
the Schur complement ``S = A - sum_j B_j' D_j^-1 B_j`` and the local variables are drawn given the
globals (Rue & Held 2005, ch. 2). Models with local variables are fitted at the globals' marginal
mode, the local variables integrated out (:func:`marginal_mode`), with the marginal's curvature (or,
cheaper on large data, the Schur complement there) as the globals' precision; models without them at
the joint mode, polished by Newton steps. The leaderboard (:mod:`lib.ranking.fit`) tells why and
where this matters; any PyMC model can be fitted so (:func:`laplace`).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import arviz as az
import numpy as np

from lib.errors import SettingsError
from lib.inference import compile_cache
from lib.inference.progress import Tracker
from lib.inference.samplers import COMPILE_LOCK, Draws, Problem
from lib.inference.settings import LaplaceSettings, NutsSettings
from lib.inference.timings import PhaseTimer

KEPT_MODELS = 4
"""Models whose compiled programs are kept in memory (least recently used dropped), by ``Problem.key``: the
next fit of the same model and data (other draws or seed, a page's rerun) traces and compiles nothing, so
the Leaderboard's preview on HANNA answers in well under a second once compiled (issue 19)."""
_KEPT: OrderedDict[str, dict] = OrderedDict()
_KEPT_LOCK = threading.Lock()


def _memo(key: str | None) -> dict | None:
    """The kept programs of the model ``key`` (a new, empty memo the first time); None without a key."""
    if key is None:
        return None
    with _KEPT_LOCK:
        memo = _KEPT.setdefault(key, {})
        _KEPT.move_to_end(key)
        while len(_KEPT) > KEPT_MODELS:
            _KEPT.popitem(last=False)
    return memo


def _kept(memo: dict | None, name, make: Callable[[], Any]) -> Any:
    """``memo[name]``, made by ``make()`` the first time; made anew each time without a memo."""
    if memo is None:
        return make()
    if name not in memo:
        memo[name] = make()
    return memo[name]


_HVP_BATCH = 8
"""Hessian-vector products computed together (memory grows with it)."""
_DRAW_BATCH = 100
NEWTON_STEPS = 4
NEWTON_TOL = 1e-6
"""At most this many Newton steps polish the L-BFGS mode; they stop once no coordinate moves this much."""


class _Layout:
    """Where each free variable sits in the flat unconstrained vector: global indices ``G`` and a
    (J, m) table ``L`` of each unit's own indices (the ``local`` variables whose first dim has one
    row per unit of ``unit``; the others, e.g. thresholds shared by all prompts, are global), and
    ``scales``, the positions in ``G`` of the named scale variables
    (:class:`lib.inference.settings.LaplaceSettings`)."""

    def __init__(self, model, local: tuple[str, ...], unit: str, scales: tuple[str, ...] = ()) -> None:
        start = model.initial_point()
        self.names = [v.name for v in model.value_vars]
        self.shapes = [np.shape(start[n]) for n in self.names]
        self.x0 = np.concatenate([np.ravel(start[n]) for n in self.names]).astype(np.float64)
        n_prompts = len(model.coords[unit]) if unit in model.coords else 0
        scale_values = {model.rvs_to_values[model[n]].name for n in scales if n in model.named_vars}
        glob, rows, scale_idx, offset = [], [], [], 0
        for name, shape in zip(self.names, self.shapes, strict=True):
            size = int(np.prod(shape))
            idx = offset + np.arange(size)
            if name in local and shape[:1] == (n_prompts,):
                rows.append(idx.reshape(n_prompts, -1))
            else:
                glob.append(idx)
            if name in scale_values:
                scale_idx.append(idx)
            offset += size
        self.G = np.concatenate(glob) if glob else np.zeros(0, dtype=int)
        self.L = np.hstack(rows) if rows else np.zeros((n_prompts, 0), dtype=int)
        self.scales = np.flatnonzero(np.isin(self.G, np.concatenate(scale_idx) if scale_idx else []))

    def split(self, x):
        """The flat vector as the list of value arrays (works on JAX arrays)."""
        out, offset = [], 0
        for shape in self.shapes:
            size = int(np.prod(shape))
            out.append(x[offset : offset + size].reshape(shape))
            offset += size
        return out


@dataclass
class _Blocks:
    """The negative log posterior's Hessian H by blocks (module docstring) at one point.

    ``Bt`` (J, m, n_g): B_j'; ``d_inv`` (J, m, m): D_j^-1; ``W = D^-1 B'``; ``chol_s``: lower
    Cholesky factor of the Schur complement S (n_g, n_g); ``G``, ``L``: see :class:`_Layout`.
    """

    Bt: np.ndarray
    d_inv: np.ndarray
    W: np.ndarray
    chol_s: np.ndarray
    G: np.ndarray
    L: np.ndarray

    def solve(self, rhs: np.ndarray) -> np.ndarray:
        """H^-1 rhs by block elimination of the prompt variables."""
        from scipy.linalg import cho_solve

        r_loc = np.einsum("jab,jb->ja", self.d_inv, rhs[self.L])
        dg = cho_solve((self.chol_s, True), rhs[self.G] - np.einsum("jmg,jm->g", self.Bt, r_loc))
        out = np.empty_like(rhs)
        out[self.G] = dg
        out[self.L] = r_loc - self.W @ dg
        return out


def block_hessian(
    hvp, x: np.ndarray, G: np.ndarray, L: np.ndarray, marginal: tuple[np.ndarray, np.ndarray] | None = None
) -> _Blocks:
    """Assemble the Hessian blocks at ``x`` from n_g + m Hessian-vector products.

    ``marginal``, when given, is ``(rows, columns)``: positions in ``G`` (k,) and the columns (n_g, k)
    of the globals' marginal curvature there, which replace the Schur complement's rows and columns
    (all of them when k = n_g). The Schur complement need not be positive definite at the marginal
    mode: a hierarchical scale and its non-centred effects form a saddle of the joint density there.

    Raises
    ------
    SettingsError
        The Hessian is not positive definite.
    """
    import jax.numpy as jnp

    n, n_g, m = len(x), len(G), L.shape[1]
    n_probes = n_g + m
    probes = np.zeros((-(-n_probes // _HVP_BATCH) * _HVP_BATCH, n))  # whole batches: one compilation
    probes[np.arange(n_g), G] = 1.0
    for r in range(m):  # a prompt variable's row of all prompts at once: prompts do not couple
        probes[n_g + r, L[:, r]] = 1.0
    xj = jnp.asarray(x)
    cols = np.concatenate(
        [np.asarray(hvp(xj, jnp.asarray(probes[i : i + _HVP_BATCH]))) for i in range(0, len(probes), _HVP_BATCH)]
    )[:n_probes]
    A = cols[:n_g, G]
    Bt = cols[:n_g][:, L].transpose(1, 2, 0)  # (J, m, n_g)
    D = cols[n_g:][:, L].transpose(1, 2, 0)  # (J, m, m)
    try:
        D = (D + D.transpose(0, 2, 1)) / 2
        np.linalg.cholesky(D)  # the prompt variables' conditional given the globals is a Gaussian
        d_inv = np.linalg.inv(D)
        W = d_inv @ Bt
        precision = (A + A.T) / 2 - np.einsum("jmg,jmh->gh", Bt, W)  # the Schur complement
        if marginal is not None:
            rows, columns = marginal
            precision[:, rows] = columns
            precision[rows, :] = columns.T
        chol_s = np.linalg.cholesky(precision)
    except np.linalg.LinAlgError as err:
        raise SettingsError(
            "the Laplace approximation failed: the Hessian at the mode is not positive "
            "definite; fit with a NUTS sampler"
        ) from err
    return _Blocks(Bt, d_inv, W, chol_s, G, L)


INNER_MAX_STEP = 1.0
INNER_TOL = 1e-10
"""The inner Newton steps of :func:`marginal_mode` stop once no prompt variable moves more than this."""
"""Largest move (unconstrained units) of a prompt variable in one inner Newton step of :func:`marginal_mode`."""
NO_LOCAL_MODE = (
    "the Laplace approximation failed: the prompt variables have no mode given the skills; fit with a NUTS sampler"
)


def _guarded_cost(inner, value_and_grad, start) -> tuple[Callable, list]:
    """The outer L-BFGS cost of :func:`marginal_mode` and its warm start (a one-item list holding the last
    finite inner solution, from ``start``, the joint mode's local variables).

    A line-search trial point can make the inner solution non-finite: it is retried from ``start``, kept out
    of the warm start, and a non-finite value or gradient is returned as ``(inf, 0)`` so that the line search
    backs off. Before, one such point poisoned every later evaluation and the fit failed with
    :data:`NO_LOCAL_MODE` on 3 of 80 null ratings studies that NUTS fits (issue 16's benchmark)."""
    import jax.numpy as jnp

    local = [start]

    def cost(g):
        g = jnp.asarray(g)
        solved = inner(g, local[0])
        if not np.isfinite(np.asarray(solved)).all():
            solved = inner(g, start)
        if np.isfinite(np.asarray(solved)).all():
            local[0] = solved
        value, grad = value_and_grad(g, solved)
        grad = np.asarray(grad, dtype=np.float64)
        if not (np.isfinite(value) and np.isfinite(grad).all()):
            return np.inf, np.zeros_like(grad)
        return float(value), grad

    return cost, local


def _marginal_programs(
    f, n: int, G: np.ndarray, L: np.ndarray, inner_steps: int, data: tuple
) -> tuple[Callable, Callable]:
    """The compiled programs of :func:`marginal_mode`: ``inner(g, l)`` (the prompt variables' Newton steps
    to their conditional mode) and the value and gradient of the marginal ``F`` at ``(g, l)``, of ``data``
    (an argument of the programs, not a constant in them)."""
    import jax
    import jax.numpy as jnp

    m = L.shape[1]
    probes = jnp.asarray(np.stack([np.isin(np.arange(n), L[:, r]).astype(float) for r in range(m)]))
    grad_f = jax.grad(f)  # of x, at (x, data)

    def assemble(g, l_loc):
        return jnp.zeros(n, dtype=g.dtype).at[G].set(g).at[L].set(l_loc)

    def newton_step(g, l_loc, data):
        """One Newton step of every prompt's variables (J, m); also their Hessian blocks D (J, m, m)."""
        xx = assemble(g, l_loc)
        columns = jax.vmap(lambda v: jax.jvp(lambda y: grad_f(y, data), (xx,), (v,))[1])(probes)  # (m, n)
        D = jnp.transpose(columns[:, L], (1, 2, 0))  # D[j, a, r] = d2f / dl_ja dl_jr
        # Safeguarded far from the mode, a no-op near it: a block that is not positive definite is
        # shifted until it is, and no coordinate moves more than INNER_MAX_STEP (ratings on HANNA's
        # 13 score levels otherwise overshot to NaN).
        shift = jax.nn.relu(1e-3 - jnp.linalg.eigvalsh((D + jnp.swapaxes(D, 1, 2)) / 2)[:, :1])[..., None]
        step = jnp.linalg.solve(D + shift * jnp.eye(m), grad_f(xx, data)[L][..., None])[..., 0]
        return l_loc - jnp.clip(step, -INNER_MAX_STEP, INNER_MAX_STEP), D

    def inner(g, l_loc, data):
        # Newton converges quadratically: from the last solution (a warm start) two or three steps reach
        # INNER_TOL, and the rest of the inner_steps are skipped
        def step(state):
            i, l_, _ = state
            new = newton_step(g, l_, data)[0]
            return i + 1, new, jnp.max(jnp.abs(new - l_))

        return jax.lax.while_loop(
            lambda state: (state[0] < inner_steps) & (state[2] > INNER_TOL), step, (0, l_loc, jnp.inf)
        )[1]

    def marginal(g, l_loc, data):
        l_star = newton_step(g, jax.lax.stop_gradient(l_loc), data)[0]
        _, D = newton_step(g, l_star, data)
        return f(assemble(g, l_star), data) + 0.5 * jnp.sum(jnp.linalg.slogdet(D)[1])

    return _given(jax.jit(inner), data), _given(jax.jit(jax.value_and_grad(marginal)), data)


def marginal_mode(
    f,
    x: np.ndarray,
    G: np.ndarray,
    L: np.ndarray,
    *,
    curvature: np.ndarray,
    data: tuple = (),
    inner_steps: int = 8,
    timer: PhaseTimer | None = None,
    memo: dict | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The mode of the globals' Laplace-approximated marginal posterior, with the prompt variables at
    their conditional mode there (Tierney & Kadane 1986; as TMB and INLA treat random effects).

    The joint mode over thousands of prompt variables informed by a handful of votes each
    over-states the scale: in simulated arenas of 6 systems (1 to 12 votes per prompt) gamma came out
    8-17% too large and its 95% interval missed, where NUTS recovered it. Here the prompt variables
    are integrated out: ``F(g) = f(g, l*(g)) + 1/2 sum_j log det D_j(g, l*(g))`` is minimised by L-BFGS;
    ``l*(g)`` comes from Newton steps per prompt (prompts do not couple), and one last Newton step
    from it, left differentiable, gives the implicit derivative ``dl*/dg = -D^-1 B'``.

    Parameters
    ----------
    f : callable
        ``f(x, data)``: the negative log posterior of the flat unconstrained vector (JAX), given the data.
    x : ndarray (n,)
        The joint mode (the start).
    G, L : ndarray
        Global indices (n_g,) and the (J, m) table of each prompt's indices (:class:`_Layout`).
    curvature : ndarray (k,)
        Positions in ``G`` whose columns of F's Hessian are returned (2 k gradients of F).
    data : tuple of arrays
        The data ``f`` reads: an argument of the compiled programs (:mod:`lib.inference.jax_data`).
    timer : PhaseTimer, optional
        Takes the seconds of the search (phase "optimise") and of the curvature ("Hessian").
    memo : dict, optional
        Keeps the compiled programs of this ``f`` and ``data`` for the next call (:func:`_memo`).

    Returns
    -------
    x : ndarray (n,)
        The marginal mode of the globals and the conditional mode of the prompt variables there.
    hessian : ndarray (n_g, k)
        Those columns of the Hessian of F at the mode (central differences of its gradient), symmetric
        when k = n_g: the globals' precision.
    """
    import jax.numpy as jnp
    from scipy.optimize import minimize

    n = len(x)
    inner, value_and_grad = _kept(
        memo, ("marginal", inner_steps), lambda: _marginal_programs(f, n, G, L, inner_steps, data)
    )
    cost, local = _guarded_cost(inner, value_and_grad, jnp.asarray(x[L]))
    timer = timer or PhaseTimer()
    with timer.phase("optimise"):
        result = minimize(cost, x[G], jac=True, method="L-BFGS-B", options={"maxiter": 2000, "gtol": 1e-6})
        l_hat = inner(jnp.asarray(result.x), local[0])
        out = np.zeros(n)
        out[G], out[L] = result.x, np.asarray(l_hat, dtype=np.float64)
    if not np.isfinite(out).all():
        raise SettingsError(NO_LOCAL_MODE)
    with timer.phase("Hessian"):
        hessian = _marginal_curvature(value_and_grad, result.x, l_hat, curvature)
    if not np.isfinite(hessian).all():
        raise SettingsError(NO_LOCAL_MODE)
    return out, (hessian + hessian.T) / 2 if len(curvature) == len(G) else hessian


def _marginal_curvature(value_and_grad, g_hat: np.ndarray, l_hat, rows: np.ndarray) -> np.ndarray:
    """Columns ``rows`` of the Hessian of the marginal F at ``g_hat`` (n_g, k), by central differences of
    its gradient."""
    import jax.numpy as jnp

    def grad_near(point):  # the one Newton step from l*(g_hat) is exact to O(step^2) here: no inner loop
        return np.asarray(value_and_grad(jnp.asarray(point), l_hat)[1], dtype=np.float64)

    columns = np.zeros((len(g_hat), len(rows)))
    for c, i in enumerate(rows):
        h = 1e-4 * max(1.0, abs(g_hat[i]))
        e = np.zeros(len(g_hat))
        e[i] = h
        columns[:, c] = (grad_near(g_hat + e) - grad_near(g_hat - e)) / (2 * h)
    return columns


def sample_laplace(problem: Problem, settings: NutsSettings, tracker: Tracker) -> Draws:
    """The ``laplace`` sampler: :func:`laplace` on the problem's model with its Laplace settings; the model and
    its compiled programs are kept by ``problem.key`` (:data:`KEPT_MODELS`) for its next fit. A problem whose local
    variables the model integrates out exactly (``problem.laplace.exact_fit``) is fitted by that instead, and no
    PyMC model is built."""
    if problem.laplace.exact_fit is not None:
        return problem.laplace.exact_fit(settings, tracker)
    compile_cache.enable()
    memo = _memo(problem.key)
    model, names = _kept(memo, "model", lambda: problem.model(tracker))
    return laplace(model, names, settings, tracker, problem.laplace, memo=memo)


def laplace(
    model,
    names: list[str],
    settings: NutsSettings,
    tracker: Tracker,
    options: LaplaceSettings | None = None,
    *,
    memo: dict | None = None,
) -> Draws:
    """MAP + Laplace fit of a PyMC model (module docstring); ``settings.draws`` draws as one chain.

    ``options`` (:class:`lib.inference.settings.LaplaceSettings`; default: no local variables) name the free
    variables with one row per unit of a dim (:class:`_Layout`). Models with local variables are fitted at the
    globals' marginal mode (:func:`marginal_mode`), with the marginal's curvature as their precision when
    ``options.marginal_curvature``, else the Schur complement (cheaper on large data) but for the rows of the
    ``options.scales`` variables, which are the marginal's; models without them (e.g. a ranking with alpha fixed
    and no thresholds of its own) at the joint mode. ``memo`` (:func:`_memo`), when given, keeps the model's
    compiled programs for the next fit of the same model and data: nothing is traced or compiled again.

    Returns
    -------
    Draws
        The draws as one chain (``arviz.InferenceData``) and the posterior mode of the ``names`` variables.

    Raises
    ------
    SettingsError
        The Hessian at the mode is not positive definite (no Gaussian approximation exists there).
    """
    import jax

    lay, outputs, to_params, x, blocks = _fitted_mode(model, names, tracker, options or LaplaceSettings(), memo)
    tracker.stage(0.8, "drawing from the Gaussian")
    with tracker.timer.phase("draws"):
        params = _kept(memo, "params", lambda: jax.jit(jax.vmap(lambda flat: to_params(*lay.split(flat)))))
        return _gaussian_draws(model, lay, outputs, params, x, blocks, settings)


@dataclass
class LaplaceMode:
    """The mode a Laplace fit draws from and the Hessian there: what the first-order effect of a change of
    the data (:mod:`lib.inference.influence`) needs.

    Attributes
    ----------
    model : pymc.Model
    layout : _Layout
        Where each free variable sits in the flat unconstrained vector.
    x : ndarray (n,)
        The mode (flat, unconstrained): the globals' marginal mode and the local variables' conditional mode
        there (:func:`marginal_mode`), or the joint mode of a model without local variables.
    blocks : _Blocks
        The negative log posterior's Hessian at ``x`` by blocks, the globals' precision as the fit's
        (:func:`block_hessian`); ``blocks.solve(r)`` is H^-1 r.
    """

    model: Any
    layout: _Layout
    x: np.ndarray
    blocks: _Blocks


def laplace_mode(problem: Problem, tracker: Tracker) -> LaplaceMode:
    """The mode and Hessian blocks of the Laplace fit of ``problem``: those kept in memory (:data:`KEPT_MODELS`)
    when this process fitted the same model and data (``problem.key``), else found as :func:`sample_laplace`
    finds them (the same programs, the same result).

    Raises
    ------
    SettingsError
        The Hessian at the mode is not positive definite.
    """
    memo = _memo(problem.key)
    model, names = _kept(memo, "model", lambda: problem.model(tracker))
    lay, _, _, x, blocks = _fitted_mode(model, names, tracker, problem.laplace, memo)
    return LaplaceMode(model, lay, x, blocks)


def _fitted_mode(model, names: list[str], tracker: Tracker, options: LaplaceSettings, memo: dict | None):
    """The model in JAX (``lay, outputs, to_params``: :func:`_jaxified`), its mode and the Hessian blocks there
    (:func:`laplace`), kept in ``memo``."""
    # Global variables cost one Hessian-vector product each (the leaderboard's skills, thresholds, gamma,
    # sigma_eta): fine for hundreds; its pair deviations (K^2 / 2 of them) are never fitted so.
    import jax

    tracker.stage(0.02, "compiling")
    timer = tracker.timer
    with timer.phase("compile"):
        lay, f, data, outputs, to_params = _kept(
            memo, "jax", lambda: _jaxified(model, names, options.local, options.unit, options.scales)
        )

        def hvp(x, v, d):  # Hessian-vector products, vectorised over v (the data an argument, not a constant)
            return jax.jvp(lambda y: jax.grad(f)(y, d), (x,), (v,))[1]

        value_and_grad, hvps = _kept(
            memo,
            "f",
            lambda: (
                _given(jax.jit(jax.value_and_grad(f)), data),
                _given(jax.jit(jax.vmap(hvp, in_axes=(None, 0, None))), data),
            ),
        )
    x, blocks = _kept(
        memo,
        ("mode", options.marginal_curvature),  # the mode and its curvature depend on the model and data only
        lambda: _mode(value_and_grad, hvps, f, data, lay, options.unit, tracker, options.marginal_curvature, memo),
    )
    return lay, outputs, to_params, x, blocks


def _given(program: Callable, data: tuple) -> Callable:
    """``program(..., data)`` as a function of its other arguments."""
    return lambda *args: program(*args, data)


def lbfgs(value_and_grad: Callable, x0: np.ndarray):
    """Minimise a negative log posterior of a flat unconstrained vector by L-BFGS (scipy).

    ``value_and_grad(x)`` gives the value and gradient (JAX or numpy) at ``x`` (n,); returns scipy's
    ``OptimizeResult`` (``x``, ``nit``, ...)."""
    from scipy.optimize import minimize

    options = {"maxiter": 20000, "maxcor": 20, "ftol": 1e-8, "gtol": 1e-5}
    return minimize(
        _cost(value_and_grad), np.asarray(x0, dtype=np.float64), jac=True, method="L-BFGS-B", options=options
    )


def _cost(value_and_grad: Callable) -> Callable[[np.ndarray], tuple[float, np.ndarray]]:
    """``value_and_grad`` as scipy wants it: a float value and a float64 gradient; a non-finite one as
    ``(inf, 0)``, so that the line search backs off (a NaN ended the joint mode's search early, at the
    NaN point, on a simulated arena with a hierarchical alpha scale)."""

    def cost(x):
        value, grad = value_and_grad(x)
        grad = np.asarray(grad, dtype=np.float64)
        if not (np.isfinite(value) and np.isfinite(grad).all()):
            return np.inf, np.zeros_like(grad)
        return float(value), grad

    return cost


def _scales_at_start(x: np.ndarray, lay: _Layout) -> np.ndarray:
    """``x`` (n,) with the scale variables (``lay.scales``) back at the model's initial point: the joint mode
    overstates the scales of the prompt variables (sigma_alpha 4.4 for a simulated 0.3), and a search
    started there went wrong (:func:`_mode`; NUTS chains started there stayed apart, R-hat 2.2)."""
    at = lay.G[lay.scales]
    x = x.copy()
    x[at] = lay.x0[at]
    return x


def _mode(
    value_and_grad, hvp, f, data: tuple, lay: _Layout, unit: str, tracker: Tracker, marginal_curvature: bool, memo
):
    """The posterior mode (flat, unconstrained) and the Hessian blocks there (:func:`laplace`)."""
    timer, cost = tracker.timer, _cost(value_and_grad)
    tracker.stage(0.1, "finding the mode (L-BFGS)")
    with timer.phase("optimise"):
        result = lbfgs(value_and_grad, lay.x0)
    x, G, L = result.x, lay.G, lay.L
    if L.shape[1]:
        x = _scales_at_start(x, lay)  # from the joint mode's scales a prompt's Newton steps overflowed
        tracker.stage(0.4, f"integrating out the {unit} variables ({result.nit} L-BFGS iterations at the joint mode)")
        rows = np.arange(len(G)) if marginal_curvature else lay.scales
        x, hessian = marginal_mode(f, x, G, L, curvature=rows, data=data, timer=timer, memo=memo)
        tracker.stage(0.7, "Hessian at the mode")
        if marginal_curvature and not np.all(np.linalg.eigvalsh(hessian) > 0):
            raise SettingsError(
                "the Laplace approximation failed: the marginal posterior of the skills has no "
                "positive definite curvature at its mode; fit with a NUTS sampler"
            )
        with timer.phase("Hessian"):
            blocks = block_hessian(hvp, x, G, L, marginal=(rows, hessian))
    else:  # Newton steps with the block Hessian finish what L-BFGS, slow on thousands of weakly informed
        # prompt variables, leaves; the last Hessian (at a point within NEWTON_TOL of the mode) is kept.
        for step_number in range(1, NEWTON_STEPS + 1):
            tracker.stage(0.5, f"Hessian at the mode (L-BFGS {result.nit} iterations, Newton step {step_number})")
            with timer.phase("Hessian"):
                blocks = block_hessian(hvp, x, G, L)
            with timer.phase("optimise"):
                value, grad = cost(x)
                step = blocks.solve(-grad)
                worse = cost(x + step)[0] > value
            if worse:
                break
            x = x + step
            if np.abs(step).max() < NEWTON_TOL:
                break
    return x, blocks


def _jaxified(
    model, names: list[str], local: tuple[str, ...], unit: str, scales: tuple[str, ...]
) -> tuple[_Layout, Callable, tuple, list, Callable]:
    """The model in JAX: its layout, the negative log posterior ``f(x, data)`` of the flat unconstrained
    vector and the model's data (:mod:`lib.inference.jax_data`: arguments of every compiled program, not
    constants in it, so a new data set of the same sizes compiles nothing), the kept variables (``outputs``)
    and ``to_params`` (value variables -> their values)."""
    from pymc.sampling.jax import get_jaxified_graph

    from lib.inference.jax_data import jaxified_potential_of_data

    lay = _Layout(model, local, unit, scales)
    with COMPILE_LOCK:  # pytensor graph rewriting is not thread-safe
        potential, data = jaxified_potential_of_data(model)
        outputs = [v for v in model.unobserved_value_vars if v.name in names]
        to_params = get_jaxified_graph(inputs=model.value_vars, outputs=outputs)

    def f(x, data):
        return potential(lay.split(x), data)

    return lay, f, data, outputs, to_params


def _gaussian_draws(
    model,
    lay: _Layout,
    outputs: list,
    params,
    x: np.ndarray,
    blocks: _Blocks,
    settings: NutsSettings,
) -> Draws:
    """``settings.draws`` draws of the Gaussian at mode ``x`` with precision ``blocks``, as one chain of
    the ``outputs`` variables (arviz InferenceData; ``params``: flat unconstrained vectors (S, n) -> their
    values), and their values at ``x`` (the mode)."""
    import jax.numpy as jnp
    from scipy.linalg import solve_triangular

    G, L = lay.G, lay.L
    d_inv, W, chol_s = blocks.d_inv, blocks.W, blocks.chol_s
    n_g, (n_prompts, m) = len(G), L.shape
    rng = np.random.default_rng(settings.seed)
    chol_d_inv = np.linalg.cholesky(d_inv)
    mode = {v.name: np.asarray(value)[0] for v, value in zip(outputs, params(jnp.asarray(x[None])), strict=True)}
    sizes = [min(_DRAW_BATCH, settings.draws - first) for first in range(0, settings.draws, _DRAW_BATCH)]
    normals = [(rng.standard_normal((n_g, size)), rng.standard_normal((size, n_prompts, m))) for size in sizes]
    # the globals' draws of all batches in one triangular solve (one per batch took 0.2 s of HANNA's 0.3 s)
    dgs = np.split(solve_triangular(chol_s.T, np.hstack([e for e, _ in normals]), lower=False).T, np.cumsum(sizes)[:-1])
    chunks = []
    for size, dg, (_, z) in zip(sizes, dgs, normals, strict=True):  # dg (size, n_g)
        draws = np.tile(x, (size, 1))
        draws[:, G] += dg
        draws[:, L] += np.einsum("jab,sjb->sja", chol_d_inv, z) - np.einsum("jmg,sg->sjm", W, dg)
        chunks.append([np.asarray(v) for v in params(jnp.asarray(draws))])
    values = {v.name: np.concatenate([c[i] for c in chunks])[None] for i, v in enumerate(outputs)}
    dims = {name: list(model.named_vars_to_dims.get(name, ())) for name in values}
    coords = {d: np.asarray(model.coords[d]) for ds in dims.values() for d in ds}
    return Draws(az.from_dict(posterior=values, coords=coords, dims=dims), mode)
