"""The ``map`` sampler: the maximum a posteriori point of a model, by L-BFGS on the unconstrained space, with one
compiled solver per data shape (about a second once compiled, several seconds to compile the first time for
data of a given size). A MAP point is shrunk towards the prior's centre and carries no interval: a preview,
not an estimate to report.

A model offers its MAP point by a :class:`MapSpec` (the GRM's: :func:`lib.irt.map.map_spec`): a model built
for data of one shape whose data containers (``pm.Data``) become the solver's inputs, so that one compiled
solver serves every data set of that shape.

Thread safety: two sessions may fit at once. Compiled solvers take the data as inputs and are compiled under
:data:`lib.inference.samplers.COMPILE_LOCK`; each optimisation borrows a private copy of the compiled functions.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

import numpy as np

from lib.engine.blas import one_blas_thread
from lib.errors import SettingsError
from lib.inference.progress import Tracker
from lib.inference.samplers import COMPILE_LOCK, Problem
from lib.inference.settings import NutsSettings
from lib.inference.store import digest_of

MAX_SOLVERS = 8
"""Compiled MAP solvers kept in memory (one per :attr:`MapSpec.key`: a model for data of one shape)."""
LBFGS_OPTIONS = {"maxiter": 5000}
"""scipy's L-BFGS-B options of the MAP search (its own tolerances otherwise)."""


@dataclass(frozen=True)
class MapSpec:
    """A model as the ``map`` sampler fits it.

    Attributes
    ----------
    key : hashable
        Names the model for data of one shape (e.g. the GRM's shape, categories and cutpoints): the compiled
        solver is kept under it.
    template : callable
        ``template()`` builds that ``pymc.Model`` (any data of the shape: the data are inputs).
    data : dict of str to ndarray
        The values of the model's data containers (``pm.Data``), by name: the solver's inputs.
    outputs : tuple of str
        The variables (free or deterministic) the point gives, with the template's dims.
    coords : dict of str to ndarray
        The coordinates of the point's dims (the template's own are placeholders).
    """

    key: Hashable
    template: Callable[[], Any]
    data: dict[str, np.ndarray]
    outputs: tuple[str, ...]
    coords: dict[str, np.ndarray]


class MapSolver:
    """Log density and gradient of a model for one data shape, compiled once (:class:`MapSpec`).

    The data are function inputs, not shared variables, so one compiled solver serves every data set of its
    shape and every thread. A pytensor function keeps its inputs and outputs in its own storage, so each
    optimisation borrows a private copy from a pool (copies are cheap: no recompilation).
    """

    def __init__(self, spec: MapSpec) -> None:
        import pytensor
        import pytensor.tensor as pt
        from pymc.pytensorf import join_nonshared_inputs
        from pytensor.graph.replace import graph_replace

        model = spec.template()
        start = model.initial_point()
        logp = model.logp(jacobian=False)
        grads = pt.grad(logp, model.value_vars)
        assert isinstance(grads, list)  # one gradient per variable of the list
        grad = pt.concatenate([pt.flatten(g) for g in grads])
        # the outputs written in terms of the (transformed) value variables
        by_name = {v.name: v for v in model.unobserved_value_vars}
        outs, flat = join_nonshared_inputs(start, [logp, grad, *(by_name[n] for n in spec.outputs)], model.value_vars)
        self.names = list(spec.data)
        data = [model[n] for n in self.names]
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
        self.outputs = spec.outputs
        self.dims = {n: tuple(model.named_vars_to_dims.get(n, ())) for n in spec.outputs}
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

    def optimum(self, data: dict[str, np.ndarray], x0: np.ndarray) -> np.ndarray:
        """The unconstrained MAP point (flat vector) of these data (one value per container) by L-BFGS from ``x0``."""
        from scipy.optimize import minimize

        values = [np.asarray(data[n], dtype=t) for n, t in zip(self.names, self._dtypes, strict=True)]
        functions = self._borrow()
        log_density = functions[0]

        def negative(x: np.ndarray) -> tuple[float, np.ndarray]:
            value, gradient = log_density(x, *values)
            return -float(value), -np.asarray(gradient)

        try:
            # a small problem: BLAS threads only contend (L-BFGS-B's steps about 12x slower on a busy 2-core machine)
            with one_blas_thread():
                # scipy's own L-BFGS-B, not the engine's guarded lbfgs (lib.inference.laplace): a non-finite
                # density is not turned into a back-off here, which keeps every MAP point as it was; with the
                # guard, LSAT7's MAP would move (alpha of Item.3 from 1,218 to 1.88), a change of its own.
                return minimize(negative, x0, jac=True, method="L-BFGS-B", options=LBFGS_OPTIONS).x
        finally:
            self._give_back(functions)

    def point(self, x: np.ndarray) -> dict[str, np.ndarray]:
        """The outputs at a flat unconstrained point, by name."""
        functions = self._borrow()
        try:
            values = [np.array(v) for v in functions[1](x)]
        finally:
            self._give_back(functions)
        return dict(zip(self.outputs, values, strict=True))


_SOLVERS: OrderedDict[Hashable, MapSolver] = OrderedDict()
_OPTIMA: OrderedDict[tuple, np.ndarray] = OrderedDict()
_SOLVERS_LOCK = threading.Lock()


def map_solver_ready(key: Hashable) -> bool:
    """Whether the MAP solver of :attr:`MapSpec.key` ``key`` is compiled (else the next MAP fit compiles it)."""
    with _SOLVERS_LOCK:
        return key in _SOLVERS


def map_solver(spec: MapSpec) -> MapSolver:
    """The compiled MAP solver of ``spec.key``, compiled now unless it is kept (:data:`MAX_SOLVERS`)."""
    key = spec.key
    with _SOLVERS_LOCK:
        if key in _SOLVERS:
            _SOLVERS.move_to_end(key)
            return _SOLVERS[key]
    with COMPILE_LOCK:  # a second thread asking for the same key waits, then finds it compiled
        with _SOLVERS_LOCK:
            if key in _SOLVERS:
                return _SOLVERS[key]
        solver = MapSolver(spec)
        with _SOLVERS_LOCK:
            _SOLVERS[key] = solver
            while len(_SOLVERS) > MAX_SOLVERS:
                _SOLVERS.popitem(last=False)
    return solver


def map_optimum(spec: MapSpec) -> np.ndarray:
    """The unconstrained MAP point (flat) of ``spec``'s data from the model's initial point, computed once per
    model and data and kept (the start of refits of the same data with other weights)."""
    solver = map_solver(spec)
    key = (spec.key, digest_of(spec.data))
    with _SOLVERS_LOCK:
        x = _OPTIMA.get(key)
    if x is None:
        x = solver.optimum(spec.data, solver.x_start)
        with _SOLVERS_LOCK:
            _OPTIMA[key] = x
            while len(_OPTIMA) > 4 * MAX_SOLVERS:
                _OPTIMA.popitem(last=False)
    return x


def sample_map(problem: Problem, settings: NutsSettings, tracker: Tracker) -> Any:
    """The ``map`` sampler: the MAP point of ``problem.map`` as a posterior of one draw (``arviz.InferenceData``).

    Raises
    ------
    SettingsError
        The model has no MAP point.
    """
    import arviz as az
    import xarray as xr

    spec = problem.map
    if spec is None:
        raise SettingsError("this model has no MAP point: fit it with a sampler that gives a posterior")
    if map_solver_ready(spec.key):
        tracker.stage(0.1, "finding the MAP point")
    else:
        tracker.stage(0.05, "compiling the MAP solver (first time only for data of this size)")
        with tracker.timer.phase("compile"):
            map_solver(spec)
    with tracker.timer.phase("optimise"):
        solver = map_solver(spec)
        point = solver.point(map_optimum(spec))
    post = xr.Dataset(
        {n: (("chain", "draw", *solver.dims[n]), value[None, None]) for n, value in point.items()},
        coords={"chain": [0], "draw": [0], **spec.coords},
    )
    return az.InferenceData(posterior=post)
