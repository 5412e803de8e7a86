"""What a sampler fits (:class:`Problem`) and one runner per sampler of the registry.

Runners (:data:`lib.inference.settings.SAMPLERS`): ``numpyro`` (NUTS in JAX on the model's log
density, about 3x the effective samples per second of PyMC's own sampler on the GRM,
``bench/bench_samplers.py``), ``pymc``, ``nutpie`` and ``map`` (the model's own MAP point, one draw);
``laplace`` is in :mod:`lib.inference.laplace`.

``XLA_FLAGS``: the first numpyro fit of a process, if JAX is not imported yet, adds
``--xla_force_host_platform_device_count=8`` to ``XLA_FLAGS`` so that chains run in parallel
(:data:`MAX_PARALLEL_CHAINS`); importing this module leaves the environment alone.

JAX's persistent compilation cache: :func:`runner` turns it on for the samplers of :data:`ON_JAX`
(:mod:`lib.inference.compile_cache`), so a second process on the same shapes skips compilation.
"""

from __future__ import annotations

import importlib
import os
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from lib.errors import SettingsError
from lib.inference import compile_cache
from lib.inference.progress import Tracker
from lib.inference.settings import SAMPLERS, NutsSettings

MAX_PARALLEL_CHAINS = 8
"""numpyro runs chains in parallel only across JAX devices, and the CPU is one device unless XLA
is told to split it before JAX is first imported (:func:`numpyro_sample` does). Split it so up to
8 chains run side by side: 4 chains on the 2-core machines sample 3x faster than numpyro's
vectorised chains (``bench/bench_samplers.py``)."""

PROGRESS_EVERY = 25
"""PyMC's sampler reports every this many iterations of a chain."""

ON_JAX = ("numpyro", "laplace")
"""Samplers whose programs JAX compiles: :func:`runner` turns on JAX's persistent compilation cache
for them (:mod:`lib.inference.compile_cache`; ``EVAL_JAX_CACHE=0`` turns it off)."""

COMPILE_LOCK = threading.Lock()
"""threading.Lock held while pytensor compiles, copies or jaxifies a function (any model's):
concurrent compilation in two sessions raised AssertionErrors inside pytensor."""


@dataclass
class Problem:
    """What a sampler fits.

    Attributes
    ----------
    build : callable
        ``build()`` returns ``(model, names)``: the ``pymc.Model`` and the variables (free or
        deterministic) the posterior keeps, with the model's dims. Called in the sampler's thread.
    point : callable, optional
        ``point(tracker)``: the model's own MAP point as an ``arviz.InferenceData`` of one draw (the
        ``map`` sampler); None where the model has none.
    local : tuple of str
        Laplace (:mod:`lib.inference.laplace`): free variables with one row per unit of the
        ``unit`` dim, coupled only through the other (global) variables.
    unit : str
        The dim whose units own the ``local`` rows (e.g. ``"prompt"``).
    marginal_curvature : bool
        Laplace: the globals' precision is the curvature of their marginal (True) or the Schur
        complement of the joint Hessian at the marginal mode (False; cheaper on large data).
    mode : dict
        Laplace writes the posterior mode of the kept variables here (name -> ndarray).
    """

    build: Callable[[], tuple[Any, list[str]]]
    point: Callable[[Tracker], Any] | None = None
    local: tuple[str, ...] = ()
    unit: str = "prompt"
    marginal_curvature: bool = True
    mode: dict[str, np.ndarray] = field(default_factory=dict)

    def model(self, tracker: Tracker) -> tuple[Any, list[str]]:
        """Build the model (stage "building the model"): ``(model, names)``."""
        tracker.stage(0.01, "building the model")
        return self.build()


def runner(sampler: str) -> Callable[[Problem, NutsSettings, Tracker], Any]:
    """The runner of a registered sampler, imported on use (``Sampler.run``).

    Raises
    ------
    KeyError
        The sampler is not registered.
    """
    module, _, name = SAMPLERS[sampler].run.partition(":")
    run = getattr(importlib.import_module(module), name)
    if sampler in ON_JAX:
        if sampler == "numpyro":
            split_host_cpu()  # before the cache imports JAX
        compile_cache.enable()
    return run


def split_host_cpu() -> None:
    """If JAX is not imported yet, add ``--xla_force_host_platform_device_count``
    (:data:`MAX_PARALLEL_CHAINS`) to ``XLA_FLAGS`` so numpyro's chains run in parallel; JAX reads
    the flag only when first imported."""
    if "jax" not in sys.modules and "host_platform_device_count" not in os.environ.get("XLA_FLAGS", ""):
        os.environ["XLA_FLAGS"] = (
            os.environ.get("XLA_FLAGS", "") + f" --xla_force_host_platform_device_count={MAX_PARALLEL_CHAINS}"
        ).strip()


def sample_map(problem: Problem, settings: NutsSettings, tracker: Tracker) -> Any:
    """The ``map`` sampler: the model's own MAP point (``problem.point``) as a posterior of one draw.

    Raises
    ------
    SettingsError
        The model has no MAP point.
    """
    if problem.point is None:
        raise SettingsError("this model has no MAP point: fit it with a sampler that gives a posterior")
    return problem.point(tracker)


def pm_sample(model, names: list[str], sampler: str, settings: NutsSettings, **kwargs) -> Any:
    """``pymc.sample`` with the settings' sizes and seed, no progress bar, keeping ``names`` only
    (nutpie ignores ``var_names`` and returns the free variables too)."""
    import pymc as pm

    with model:
        idata = pm.sample(
            draws=settings.draws,
            tune=settings.tune,
            chains=settings.chains,
            random_seed=settings.seed,
            nuts_sampler=sampler,
            progressbar=False,
            compute_convergence_checks=False,
            var_names=names,
            **kwargs,
        )
    idata.posterior = idata.posterior[names]
    return idata


def sample_pymc(problem: Problem, settings: NutsSettings, tracker: Tracker) -> Any:
    """The ``pymc`` sampler: PyMC's own NUTS, reporting every chain's progress."""
    model, names = problem.model(tracker)

    def callback(trace, draw) -> None:  # once per draw of every chain
        if (draw.draw_idx + 1) % PROGRESS_EVERY == 0:
            tracker.iterations(PROGRESS_EVERY, draw.tuning)

    tracker.stage(0.03, "compiling")
    return pm_sample(model, names, "pymc", settings, callback=callback, cores=min(settings.chains, os.cpu_count() or 1))


def sample_nutpie(problem: Problem, settings: NutsSettings, tracker: Tracker) -> Any:
    """The ``nutpie`` sampler (through ``pm.sample``; it reports elapsed time only)."""
    model, names = problem.model(tracker)
    tracker.stage(0.03, "compiling, then warm-up and sampling (nutpie reports no progress)")
    return pm_sample(model, names, "nutpie", settings)


def sample_numpyro(problem: Problem, settings: NutsSettings, tracker: Tracker) -> Any:
    """The ``numpyro`` sampler: :func:`numpyro_sample` on the problem's model."""
    return numpyro_sample(*problem.model(tracker), settings, tracker)


def numpyro_sample(model, var_names: list[str], settings: NutsSettings, tracker: Tracker) -> Any:
    """NUTS (numpyro) on a PyMC model's JAX log density (as ``pm.sample(nuts_sampler="numpyro")``
    does), with a kernel that reports every chain's progress through a JAX host callback.

    The first call in a process, if JAX is not imported yet, splits the CPU into
    :data:`MAX_PARALLEL_CHAINS` devices (:func:`split_host_cpu`) so chains run in parallel.

    Parameters
    ----------
    model : pymc.Model
    var_names : list of str
        Variables (free or deterministic) kept in the posterior, with the model's dims.
    settings : NutsSettings
        ``chains``, ``draws``, ``tune`` and ``seed``.
    tracker : Tracker
        Takes the progress.

    Returns
    -------
    arviz.InferenceData
        ``posterior`` with ``var_names``; ``sample_stats`` with ``diverging`` and ``energy``.
    """
    import arviz as az

    split_host_cpu()
    import jax
    from jax.experimental import io_callback
    from numpyro.infer import MCMC, NUTS
    from pymc.sampling.jax import (
        _get_batched_jittered_initial_points,
        _postprocess_samples,
        get_jaxified_graph,
        get_jaxified_logp,
    )

    tune, draws, chains = settings.tune, settings.draws, settings.chains
    every = max(1, (tune + draws) // 20)  # each chain's bar moves in about 5% steps

    def on_iteration(i) -> None:
        tracker.iterations(every, int(i) <= tune)

    class ReportingNUTS(NUTS):
        def sample(self, state, model_args, model_kwargs):
            state = super().sample(state, model_args, model_kwargs)
            jax.lax.cond(state.i % every == 0, lambda i: io_callback(on_iteration, None, i), lambda i: None, state.i)
            return state

    tracker.stage(0.03, "compiling")
    with COMPILE_LOCK:  # pytensor graph rewriting is not thread-safe
        logp = get_jaxified_logp(model, negative_logp=False)
        outputs = [v for v in model.unobserved_value_vars if v.name in var_names]
        to_params = get_jaxified_graph(inputs=model.value_vars, outputs=outputs)
    init = _get_batched_jittered_initial_points(model, chains, None, settings.seed, logp_fn=logp)
    method = "parallel" if chains <= MAX_PARALLEL_CHAINS else "sequential"
    mcmc = MCMC(
        ReportingNUTS(potential_fn=logp, target_accept_prob=0.8),
        num_warmup=tune,
        num_samples=draws,
        num_chains=chains,
        chain_method=method,
        progress_bar=False,
    )
    key = jax.random.PRNGKey(settings.seed)
    mcmc.run(
        jax.random.split(key, chains) if chains > 1 else key, init_params=init, extra_fields=("diverging", "energy")
    )
    raw = mcmc.get_samples(group_by_chain=True)
    values = _postprocess_samples(to_params, raw, postprocessing_vectorize="vmap")
    extra = mcmc.get_extra_fields(group_by_chain=True)
    dims = {v.name: list(model.named_vars_to_dims.get(v.name, ())) for v in outputs}
    coords = {name: np.asarray(model.coords[name]) for d in dims.values() for name in d}
    idata = az.from_dict(
        posterior={v.name: np.asarray(x) for v, x in zip(outputs, values, strict=True)},
        sample_stats={"diverging": np.asarray(extra["diverging"]), "energy": np.asarray(extra["energy"])},
        coords=coords,
        dims=dims,
    )
    # Every fit compiles new programs (a new model's closures) that JAX's in-memory caches keep: about 600
    # memory mappings a fit, until XLA cannot allocate and the process segfaults after about 93 fits
    # (vm.max_map_count 65,530; a server, a Dask worker). No later fit can reuse them; clearing keeps it flat.
    jax.clear_caches()
    return idata
