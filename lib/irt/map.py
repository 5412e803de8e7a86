"""The GRM's maximum a posteriori point: L-BFGS on the unconstrained space, one compiled solver per
data shape (about a second once compiled, several seconds to compile the first time for data of a
given size). MAP abilities are shrunk towards 0 and carry no interval: a preview, not an estimate to
report.

Thread safety: two sessions may fit at once. Compiled solvers take the data as inputs and are
compiled under :data:`lib.inference.samplers.COMPILE_LOCK`.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from lib.blas import one_blas_thread
from lib.errors import SettingsError
from lib.inference.samplers import COMPILE_LOCK
from lib.irt.model import build_grm, observations
from lib.irt.settings import check_cutpoints


@dataclass
class GRMPoint:
    """A point estimate of the GRM.

    theta : (I,) abilities; alpha : (J,) discriminations; b : (J, K-1) ordered thresholds (logits).
    """

    theta: np.ndarray
    alpha: np.ndarray
    b: np.ndarray


MAX_SOLVERS = 8
"""Compiled MAP solvers kept in memory (one per data shape, category count and cutpoints)."""


class _MapSolver:
    """Log density and gradient of the GRM for one data shape, compiled once.

    The data (observed cells and per-comparison weights) are function inputs, not shared
    variables, so one compiled solver serves every data set of its shape and every thread. A
    pytensor function keeps its inputs and outputs in its own storage, so each optimisation
    borrows a private copy from a pool (copies are cheap: no recompilation).
    """

    def __init__(self, shape: tuple[int, int], n_categories: int, cutpoints: str) -> None:
        import pytensor
        import pytensor.tensor as pt
        from pymc.pytensorf import join_nonshared_inputs
        from pytensor.graph.replace import graph_replace

        model = build_grm(np.zeros(shape, dtype=np.int64), n_categories, cutpoints=cutpoints)
        start = model.initial_point()
        logp = model.logp(jacobian=False)
        grads = pt.grad(logp, model.value_vars)
        assert isinstance(grads, list)  # one gradient per variable of the list
        grad = pt.concatenate([pt.flatten(g) for g in grads])
        # theta, alpha and b written in terms of the (transformed) value variables.
        by_name = {v.name: v for v in model.unobserved_value_vars}
        outs, flat = join_nonshared_inputs(
            start, [logp, grad, by_name["theta"], by_name["alpha"], by_name["b"]], model.value_vars
        )
        data = [model[n] for n in ("obs_comparison", "obs_prompt", "obs_category", "weight")]
        self._dtypes = [d.dtype for d in data]
        inputs = [d.type() for d in data]
        outs = graph_replace(outs, dict(zip(data, inputs, strict=True)))
        self._pool = [
            (
                pytensor.function([flat, *inputs], outs[:2]),
                pytensor.function([flat], outs[2:], on_unused_input="ignore"),
            )
        ]
        self._pool_lock = threading.Lock()
        self.x_start = np.concatenate([np.ravel(start[v.name]) for v in model.value_vars])

    def _borrow(self):
        with self._pool_lock:
            if len(self._pool) > 1:
                return self._pool.pop()
            template = self._pool[0]
        with COMPILE_LOCK:
            return tuple(f.copy() for f in template)

    def _give_back(self, functions) -> None:
        with self._pool_lock:
            self._pool.append(functions)

    def optimum(self, codes: np.ndarray, weights: np.ndarray, x0: np.ndarray) -> np.ndarray:
        """Unconstrained MAP point (flat vector) by L-BFGS from ``x0``."""
        from scipy.optimize import minimize

        data = [np.asarray(a, dtype=t) for a, t in zip((*observations(codes)[:3], weights), self._dtypes, strict=True)]
        functions = self._borrow()
        value_and_grad = functions[0]

        def cost(x: np.ndarray) -> tuple[float, np.ndarray]:
            value, gradient = value_and_grad(x, *data)
            return -float(value), -np.asarray(gradient)

        try:
            # a small problem: BLAS threads only contend (L-BFGS-B's steps about 12x slower on a busy 2-core machine)
            with one_blas_thread():
                return minimize(cost, x0, jac=True, method="L-BFGS-B", options={"maxiter": 5000}).x
        finally:
            self._give_back(functions)

    def point(self, x: np.ndarray) -> GRMPoint:
        """theta, alpha and b at a flat unconstrained point."""
        functions = self._borrow()
        try:
            theta, alpha, b = (np.array(v) for v in functions[1](x))
        finally:
            self._give_back(functions)
        return GRMPoint(theta=theta, alpha=alpha, b=b)


_SOLVERS: OrderedDict[tuple, _MapSolver] = OrderedDict()
_ALL_DATA_OPTIMA: OrderedDict[tuple, np.ndarray] = OrderedDict()
_SOLVERS_LOCK = threading.Lock()


def map_solver_ready(shape: tuple[int, int], n_categories: int, cutpoints: str) -> bool:
    """Whether the MAP solver for this data shape is compiled (else the next MAP fit compiles it)."""
    with _SOLVERS_LOCK:
        return (tuple(shape), int(n_categories), cutpoints) in _SOLVERS


def map_solver(shape: tuple[int, int], n_categories: int, cutpoints: str) -> _MapSolver:
    """The compiled MAP solver for this data shape, compiled now unless it is kept (:data:`MAX_SOLVERS`)."""
    key = (tuple(shape), int(n_categories), cutpoints)
    with _SOLVERS_LOCK:
        if key in _SOLVERS:
            _SOLVERS.move_to_end(key)
            return _SOLVERS[key]
    with COMPILE_LOCK:  # a second thread asking for the same key waits, then finds it compiled
        with _SOLVERS_LOCK:
            if key in _SOLVERS:
                return _SOLVERS[key]
        solver = _MapSolver(shape, int(n_categories), cutpoints)
        with _SOLVERS_LOCK:
            _SOLVERS[key] = solver
            while len(_SOLVERS) > MAX_SOLVERS:
                _SOLVERS.popitem(last=False)
    return solver


def fit_map(
    codes: np.ndarray,
    n_categories: int,
    *,
    cutpoints: str = "antisymmetric",
    weights: np.ndarray | None = None,
) -> GRMPoint:
    """Maximum a posteriori estimate of the GRM (L-BFGS on the unconstrained space).

    Thread-safe: the compiled solver is shared by data shape, the data are its inputs.

    Parameters
    ----------
    codes : ndarray, shape (I, J), int64
        Category index 0..K-1, -1 where missing (``RatingMatrix.codes()``).
    n_categories : int
        K.
    cutpoints : str
        A name of :data:`lib.irt.settings.CUTPOINTS`.
    weights : ndarray, shape (I,), optional
        Per-comparison weight of the log-likelihood; 0 leaves a comparison out (its theta then
        sits at the prior mode, 0). Refits with other weights (leave-one-out) start from the
        all-data MAP point, computed first, so results do not depend on the call order.

    Returns
    -------
    GRMPoint
        MAP thetas are shrunk towards 0 relative to posterior means.

    Raises
    ------
    SettingsError
        See :func:`lib.irt.settings.check_cutpoints`; weights of the wrong shape or negative.
    """
    check_cutpoints(cutpoints, n_categories)
    codes = np.ascontiguousarray(codes, dtype=np.int64)
    w = np.ones(codes.shape[0]) if weights is None else np.asarray(weights, dtype=np.float64)
    if w.shape != (codes.shape[0],) or not (w >= 0).all():
        raise SettingsError(f"weights must be {codes.shape[0]} non-negative numbers, one per comparison")
    solver = map_solver(codes.shape, n_categories, cutpoints)
    x_all = _all_data_optimum(solver, codes, n_categories, cutpoints)
    return solver.point(x_all if np.all(w == 1) else solver.optimum(codes, w, x_all))


def _all_data_optimum(solver: _MapSolver, codes: np.ndarray, n_categories: int, cutpoints: str) -> np.ndarray:
    """The unconstrained MAP point of all the data (flat), computed once per data set and kept."""
    key = (hashlib.sha256(codes.tobytes()).hexdigest(), codes.shape, int(n_categories), cutpoints)
    with _SOLVERS_LOCK:
        x_all = _ALL_DATA_OPTIMA.get(key)
    if x_all is None:
        x_all = solver.optimum(codes, np.ones(codes.shape[0]), solver.x_start)
        with _SOLVERS_LOCK:
            _ALL_DATA_OPTIMA[key] = x_all
            while len(_ALL_DATA_OPTIMA) > 4 * MAX_SOLVERS:
                _ALL_DATA_OPTIMA.popitem(last=False)
    return x_all
