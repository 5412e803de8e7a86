"""What a sampler fits (:class:`Problem`) and one runner per sampler of the registry.

Runners (:data:`lib.inference.settings.SAMPLERS`): ``numpyro`` (NUTS in JAX on the model's log
density, about 3x the effective samples per second of PyMC's own sampler on the GRM,
``bench/bench_samplers.py``), ``pymc`` and ``nutpie``; ``map`` (the MAP point, one draw) is in
:mod:`lib.inference.map`, ``laplace`` in :mod:`lib.inference.laplace`. A runner returns the posterior, or
:class:`Draws` (the posterior, the mode, the stopping rule's last check).

JAX's CPU devices: numpyro runs chains in parallel across them; importing ``lib`` splits the CPU
(:mod:`lib.engine.devices`), the same in every process.

JAX's persistent compilation cache: :func:`runner` turns it on for the samplers of :data:`ON_JAX`
(:mod:`lib.inference.compile_cache`; the ``laplace`` runner where it compiles a PyMC model), so a second
process on the same shapes skips compilation. numpyro
runs warm-up and draws in chunks by one program without host callbacks (which JAX never caches), so a
second fit of the same model and sizes, in this process or another, compiles nothing, whatever its data: the
data are arguments of the programs (:mod:`lib.inference.jax_data`), not constants in them.
"""

from __future__ import annotations

import importlib
import os
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from lib.inference import compile_cache
from lib.inference.progress import Tracker
from lib.inference.settings import SAMPLERS, TARGET_CHUNK, LaplaceSettings, NutsSettings

if TYPE_CHECKING:  # the MAP solver imports pymc; the chain statistics scipy.stats
    from lib.inference.chain_stats import ChainStats
    from lib.inference.map import MapSpec

PROGRESS_EVERY = 25
"""PyMC's sampler reports every this many iterations of a chain."""

PROGRESS_CHUNKS = 20
"""numpyro, a fixed number of draws: at most this many chunks of warm-up and draws (unless chunks would
be longer than :data:`lib.inference.settings.TARGET_CHUNK`), progress reported after each
(:func:`chunk_length`)."""

FIELDS = ("diverging", "energy")
"""numpyro's per-draw statistics a posterior keeps (``sample_stats``)."""

ON_JAX = ("numpyro",)
"""Samplers whose programs JAX compiles: :func:`runner` turns on JAX's persistent compilation cache
for them (:mod:`lib.inference.compile_cache`; ``EVAL_JAX_CACHE=0`` turns it off). The ``laplace`` runner
turns it on itself where it fits a PyMC model: a model's own exact fit
(:attr:`lib.inference.settings.LaplaceSettings.exact_fit`) needs no JAX, whose import takes 1.5-3.5 s."""

COMPILE_LOCK = threading.Lock()
"""threading.Lock held while pytensor compiles, copies or jaxifies a function (any model's):
concurrent compilation in two sessions raised AssertionErrors inside pytensor."""


@dataclass
class Problem:
    """What a sampler fits: a model of some data, and how each sampler should treat it.

    Attributes
    ----------
    build : callable
        ``build()`` returns ``(model, names)``: the ``pymc.Model`` and the variables (free or
        deterministic) the posterior keeps, with the model's dims. Called in the sampler's thread.
    map : MapSpec, optional
        The model as the ``map`` sampler fits it (:class:`lib.inference.map.MapSpec`: one compiled solver per
        data shape); None where the model has no MAP point.
    laplace : LaplaceSettings
        How the ``laplace`` sampler treats the model (:class:`lib.inference.settings.LaplaceSettings`).
    key : str, optional
        Names the model and its data (not the sampler's sizes or seed): a runner may keep the model and
        its compiled programs under it for the next fit of the same model (Laplace,
        :data:`lib.inference.laplace.KEPT_MODELS`). None: nothing is kept.
    target_accept : float
        NUTS's target acceptance rate during warm-up (smaller steps above the samplers' 0.8: a model with
        a hierarchical scale whose effects the data pin down, where 0.8 leaves divergent transitions).
    """

    build: Callable[[], tuple[Any, list[str]]]
    map: MapSpec | None = None
    laplace: LaplaceSettings = field(default_factory=LaplaceSettings)
    key: str | None = None
    target_accept: float = 0.8

    def model(self, tracker: Tracker) -> tuple[Any, list[str]]:
        """Build the model (stage and phase "building the model"): ``(model, names)``."""
        tracker.stage(0.01, "building the model")
        with tracker.timer.phase("model build"):
            return self.build()


@dataclass
class Draws:
    """What a run gives: the posterior (``arviz.InferenceData``); from a sampler that finds it (Laplace), the
    posterior mode of the kept variables (name -> ndarray; None otherwise); from a sampler whose stopping
    rule checked the final draws (numpyro to a target ESS), that check: R-hat and ESS of every element of
    the posterior's variables, laid out as :func:`lib.inference.chain_stats.stacked` lays out the posterior
    (None otherwise: the diagnostics compute them, :func:`lib.inference.diagnostics.diagnose`)."""

    idata: Any
    mode: dict[str, np.ndarray] | None = None
    stats: ChainStats | None = None


def as_draws(result: Any) -> Draws:
    """A runner's result as :class:`Draws`: runners that find no mode may return the ``InferenceData`` alone."""
    return result if isinstance(result, Draws) else Draws(result)


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
        compile_cache.enable()
    return run


def pm_sample(
    model, names: list[str], sampler: str, settings: NutsSettings, target_accept: float = 0.8, **kwargs
) -> Any:
    """``pymc.sample`` with the settings' sizes and seed, no progress bar, keeping ``names`` only
    (nutpie ignores ``var_names`` and returns the free variables too) and NUTS's ``target_accept`` (pymc, nutpie)."""
    import pymc as pm

    if "step" not in kwargs:  # NUTS's own setting: a step method given (a test's) takes none
        kwargs["target_accept"] = target_accept
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
    with tracker.timer.phase("compile, warm-up and sampling"):
        return pm_sample(
            model,
            names,
            "pymc",
            settings,
            problem.target_accept,
            callback=callback,
            cores=min(settings.chains, os.cpu_count() or 1),
        )


def sample_nutpie(problem: Problem, settings: NutsSettings, tracker: Tracker) -> Any:
    """The ``nutpie`` sampler (through ``pm.sample``; it reports elapsed time only)."""
    model, names = problem.model(tracker)
    tracker.stage(0.03, "compiling, then warm-up and sampling (nutpie reports no progress)")
    with tracker.timer.phase("compile, warm-up and sampling"):
        return pm_sample(model, names, "nutpie", settings, problem.target_accept)


def sample_numpyro(problem: Problem, settings: NutsSettings, tracker: Tracker) -> Any:
    """The ``numpyro`` sampler: :func:`numpyro_sample` on the problem's model."""
    model, names = problem.model(tracker)
    return numpyro_sample(model, names, settings, tracker, problem.target_accept)


def numpyro_sample(
    model, var_names: list[str], settings: NutsSettings, tracker: Tracker, target_accept: float = 0.8
) -> Any:
    """NUTS (numpyro) on a PyMC model's JAX log density (as ``pm.sample(nuts_sampler="numpyro")``
    does), in chunks of iterations (:func:`_sample_in_chunks`): a fixed number of draws, or draws to a
    target ESS.

    Chains run in parallel on JAX's CPU devices (:mod:`lib.engine.devices`).

    Parameters
    ----------
    model : pymc.Model
    var_names : list of str
        Variables (free or deterministic) kept in the posterior, with the model's dims.
    settings : NutsSettings
        ``chains``, ``draws``, ``tune``, ``seed`` and ``target_ess``. No target: ``draws`` per chain
        after ``tune`` warm-up iterations, progress in about 5% steps (:func:`chunk_length`). With a
        target, draws come in chunks of :data:`lib.inference.settings.TARGET_CHUNK` per chain until the
        bulk and tail ESS of every kept variable reach it and their R-hat is at most 1.01, or ``draws``
        per chain are drawn (progress follows the ESS).
    tracker : Tracker
        Takes the progress and the phases (compile, warm-up, sampling; read-outs without a target).
    target_accept : float
        NUTS's target acceptance rate (:attr:`Problem.target_accept`).

    Returns
    -------
    Draws
        ``idata``: ``posterior`` with ``var_names``, dims (chain, draw, ...); ``sample_stats`` with
        ``diverging`` and ``energy``; with a target, ``posterior.attrs`` holds ``target_ess`` and ``stopped``
        (``"target"`` or ``"ceiling"``, read by :func:`lib.inference.diagnostics.diagnose`), and ``stats``
        the stopping rule's last check when it checked every kept variable of the final draws.
    """
    import arviz as az
    import jax
    from pymc.sampling.jax import get_jaxified_graph

    from lib.inference.jax_data import jaxified_potential_of_data

    tracker.stage(0.03, "compiling")
    with tracker.timer.phase("compile"), COMPILE_LOCK:  # pytensor graph rewriting is not thread-safe
        # -logp, the data as arguments: one program for every file of a shape
        potential, data = jaxified_potential_of_data(model)
        by_name = {v.name: v for v in model.unobserved_value_vars}
        outputs = [by_name[name] for name in var_names if name in by_name]  # in the caller's order: as it checks them
        to_params = get_jaxified_graph(inputs=model.value_vars, outputs=outputs)
    with tracker.timer.phase("compile"):
        init = _initial_points(model, settings)  # checked by the chains' start (_sample_in_chunks)
    dims = {v.name: list(model.named_vars_to_dims.get(v.name, ())) for v in outputs}
    coords = {name: np.asarray(model.coords[name]) for d in dims.values() for name in d}

    def to_array(pieces: list[tuple[list[np.ndarray], dict]]) -> np.ndarray:
        """The chunks' kept variables as one (chain, draw, n) float array, laid out as
        :func:`lib.inference.chain_stats.stacked` lays out the posterior of ``to_idata`` (for the ESS checks)."""
        flat = [np.concatenate([x.reshape(*x.shape[:2], -1) for x in p[0]], axis=2) for p in pieces]
        return np.concatenate(flat, axis=1).astype(float)

    def to_idata(pieces: list[tuple[list[np.ndarray], dict]]) -> Any:
        """The chunks as one InferenceData (the kept variables with their dims, and :data:`FIELDS`)."""
        return az.from_dict(
            posterior={v.name: np.concatenate([p[0][i] for p in pieces], axis=1) for i, v in enumerate(outputs)},
            sample_stats={k: np.concatenate([np.asarray(p[1][k]) for p in pieces], axis=1) for k in FIELDS},
            coords=coords,
            dims=dims,
        )

    def checked_init() -> list:  # PyMC's retries, where a first jittered start has no finite log density
        return _initial_points(model, settings, potential, data)

    kernel = _Nuts(potential, data, target_accept)
    draws = _sample_in_chunks(kernel, to_params, (init, checked_init), to_idata, to_array, settings, tracker)
    # Every fit compiles new programs (a new model's closures) that JAX's in-memory caches keep: about 600
    # memory mappings a fit, until XLA cannot allocate and the process segfaults after about 93 fits
    # (vm.max_map_count 65,530; a server, a Dask worker). No later fit can reuse them; clearing keeps it flat
    # (the next fit of the same model and sizes loads its programs from the persistent compilation cache).
    jax.clear_caches()
    return draws


def _initial_points(
    model, settings: NutsSettings, potential: Callable | None = None, data: tuple | None = None
) -> list:
    """Each chain's start, unconstrained (leading dim: chain, unless one chain): PyMC's initial point (the
    priors' centres) jittered by U(-1, 1) on the unconstrained space, as ``pm.sample`` starts NUTS.

    Not the posterior mode: the joint mode of a model with per-unit effects (the GRM's thetas, the prompts'
    alphas) shrinks the effects and overstates the slopes or scales; chains started there on mirt's Science
    data stuck (alpha 176, R-hat 3e7), and on a simulated arena stayed apart (R-hat 2.2). From here
    they mix, and no optimisation runs first (``bench/bench_target_ess.py``).

    ``potential(values)``, or ``potential(values, data)`` with ``data`` given (:mod:`lib.inference.jax_data`):
    minus the log density, as numpyro's NUTS takes it; PyMC jitters a chain's start again (up to 10 times) where
    it is not finite (so the sign is moot). None: each chain's first jitter, unchecked. The numpyro sampler checks
    that one by its chains' start, which computes the potential there anyway (:func:`_sample_in_chunks`), and
    asks for checked points only where a start is not finite: the same points whenever PyMC's first jitter
    passes, without the potential's own program (0.2-0.6 s to compile on a new user's machine)."""
    import jax
    from pymc.sampling.jax import _get_batched_jittered_initial_points
    from pymc.sampling.mcmc import _init_jitter
    from pymc.util import _get_seeds_per_chain

    if potential is None:  # PyMC's points as _get_batched_jittered_initial_points makes them, without its
        # conversion of each point to JAX arrays for the check (a program of its own for each shape)
        seeds = _get_seeds_per_chain(settings.seed, settings.chains)
        points = _init_jitter(model, None, seeds=seeds, jitter=True, jitter_max_retries=0, logp_fn=lambda point: 0.0)
        values = [list(point.values()) for point in points]
        return values[0] if settings.chains == 1 else [np.stack(v) for v in zip(*values, strict=True)]
    # Compiled as one program, not the about 60 one-operation programs its eager evaluation compiles for
    # every new model (and JAX's persistent cache writes, each write reading every entry's access time).
    check = jax.jit(potential)
    logp_fn = check if data is None else (lambda values: check(values, data))
    return _get_batched_jittered_initial_points(model, settings.chains, None, settings.seed, logp_fn=logp_fn)


class _Nuts:
    """numpyro's NUTS kernel (``numpyro.infer.NUTS``'s settings) on ``potential(values, data)`` (-logp), the
    data an argument of every call (:mod:`lib.inference.jax_data`), so the programs that run it do not hold them."""

    def __init__(self, potential: Callable, data: tuple, target_accept: float) -> None:
        from numpyro.infer.hmc import hmc

        self.data, self.target_accept = data, target_accept
        self._init, self._sample = hmc(
            potential_fn_gen=lambda data: lambda values: potential(values, data), algo="NUTS"
        )

    def init(self, key, tune: int, params, data: tuple) -> Any:
        """A chain's start (``NUTS.init``: the same key split, the same settings)."""
        import jax

        key, _ = jax.random.split(key)
        return self._init(
            params, tune, target_accept_prob=self.target_accept, trajectory_length=None, model_args=(data,), rng_key=key
        )

    def sample(self, state, data: tuple) -> Any:
        """One NUTS iteration of a chain."""
        return self._sample(state, model_args=(data,))


def chunk_length(tune: int, draws: int) -> int:
    """Iterations per chain of each chunk of a fit of a fixed number of draws (:func:`_sample_in_chunks`).

    ``tune + draws`` iterations in at most :data:`PROGRESS_CHUNKS` chunks of equal length and more than
    half as many (progress in 5-10% steps, as the page's bar and the command's line show it), or in
    more when that makes chunks longer than :data:`lib.inference.settings.TARGET_CHUNK`. The last
    chunk may run past ``tune + draws``, by fewer iterations per chain than there are chunks (thrown
    away; none when the length divides ``tune + draws``). One length per (tune, draws): one compiled
    program per model and sizes.

    Returns
    -------
    int
        At least 1, at most ``TARGET_CHUNK``.
    """
    total = tune + draws
    return -(-total // max(PROGRESS_CHUNKS, -(-total // TARGET_CHUNK)))


def _sample_in_chunks(
    kernel: _Nuts,
    to_params: Callable,
    starts: tuple[list, Callable[[], list]],
    to_idata: Callable,
    to_array: Callable,
    settings: NutsSettings,
    tracker: Tracker,
) -> Draws:
    """NUTS from ``starts`` in chunks of iterations per chain, all by one program compiled once: ``tune``
    warm-up iterations (the kernel's adaptation), then draws until the stop rule of ``settings`` —
    ``draws`` per chain (chunks of :func:`chunk_length`) or a target ESS (chunks of
    :data:`lib.inference.settings.TARGET_CHUNK`, :func:`_draw_to_target`). The program has no host
    callback (progress is reported between chunks), so JAX's persistent compilation cache keeps it and
    the next fit of the same model and sizes, in any process, loads it instead of compiling it. It gives
    each iteration's kept variables, ``to_params(*unconstrained values)`` (a list), so no other program
    turns the draws into them.

    Chains run in parallel on the host CPU's devices (``jax.pmap``) when there are enough of them
    (:mod:`lib.engine.devices`), else one after another by the same one-chain program, as numpyro's
    ``chain_method`` ``"parallel"`` and ``"sequential"``: the draws of a seed do not depend on the
    number of devices.

    Returns :class:`Draws` of ``to_idata(chunks)`` (chunks of (kept variables, extra fields :data:`FIELDS`),
    each (chain, draw, ...)); with a target, its posterior's attrs say ``target_ess`` and ``stopped``
    (``"target"`` or ``"ceiling"``) and ``stats`` may hold the last check (:func:`_draw_to_target`).
    ``to_array(chunks)``: the chunks' kept variables as one (chain, draw, n) array, for the ESS checks.

    ``starts``: each chain's start as :func:`_initial_points` gives it, unchecked, and a function that gives the
    checked ones (PyMC's retries), called only when the potential at an unchecked start is not finite.
    """
    import jax

    chains, tune, target = settings.chains, settings.tune, settings.target_ess
    length = TARGET_CHUNK if target is not None else chunk_length(tune, settings.draws)

    data = kernel.data  # an argument of each program, not a constant in it

    def init_chain(seed, chain, params, data):
        # The chain's key made in its start's program (the seed an argument: one program for every seed), as
        # numpyro splits it: jax.random.split(PRNGKey(seed), chains)[chain]; three programs of their own before.
        key = jax.random.PRNGKey(seed)
        return kernel.init(jax.random.split(key, chains)[chain] if chains > 1 else key, tune, params, data)

    def chain(state, data):
        def transition(s, _):
            s = kernel.sample(s, data)
            return s, (to_params(*s.z), s.diverging, s.energy)

        return jax.lax.scan(transition, state, None, length=length)

    chain_one = jax.jit(chain)
    parallel = 1 < chains <= jax.local_device_count()
    init, checked_init = starts
    start = _start(init_chain, np.int64(settings.seed), data, chains, parallel)
    with tracker.timer.phase("compile"):
        state = start(init)
        if not _finite_start(state):  # PyMC's retries: a first jittered start of some chain had no density
            state = start(checked_init())
        step: Callable
        if chains == 1:
            step = _given(chain_one.lower(state, data).compile(), data)
        elif parallel:
            step = _given(jax.pmap(chain, in_axes=(0, None)).lower(state, data).compile(), data)
        else:
            step = _one_after_another(_given(chain_one.lower(state[0], data).compile(), data))
    ran = 0  # iterations run per chain
    with tracker.timer.phase("warm-up"):
        while ran + length <= tune:
            state, _ = step(state)
            ran += length
            jax.block_until_ready(state)  # JAX dispatches asynchronously
            tracker.iterations(chains * length, tuning=True)
    chunks = _kept_chunks(step, state, ran, length, settings)
    if target is not None:
        with tracker.timer.phase("sampling"):
            return _draw_to_target(chunks, to_idata, to_array, settings, tracker)
    pieces = []
    with tracker.timer.phase("sampling"):
        for piece in chunks:
            pieces.append(piece)
            tracker.iterations(chains * length, tuning=False)
    with tracker.timer.phase("read-outs"):
        return Draws(to_idata(pieces))


def _start(init_chain: Callable, seed, data: tuple, chains: int, parallel: bool) -> Callable[[list], Any]:
    """``start(init)``: every chain's state at its start ``init`` (:func:`_initial_points`), by
    ``init_chain(seed, chain, params, data)`` compiled (evaluated eagerly it compiled about 120 one-operation
    programs): one chain; chains in parallel (``jax.pmap``); or one chain after another, by the program each device
    runs in parallel: the same numbers as in parallel, bit for bit (``jax.vmap``'s batched program rounds
    differently, so a fit's draws depended on whether the process had started JAX before its first numpyro fit)."""
    import jax

    if parallel:
        init_all = jax.pmap(init_chain, in_axes=(None, 0, 0, None))
        return lambda init: init_all(seed, np.arange(chains), init, data)
    init_one = jax.jit(init_chain)
    if chains == 1:
        return lambda init: init_one(seed, 0, init, data)
    return lambda init: [init_one(seed, c, [x[c] for x in init], data) for c in range(chains)]


def _finite_start(state: Any) -> bool:
    """Whether the potential at every chain's start is finite (a chain's state, or a list of them)."""
    states = state if isinstance(state, list) else [state]
    return all(np.isfinite(np.asarray(s.potential_energy)).all() for s in states)


def _given(program: Callable, data: tuple) -> Callable:
    """``program(state, data)`` as a function of the state alone."""
    return lambda state: program(state, data)


def _one_after_another(step_one: Callable) -> Callable:
    """A chunk of every chain, from a list of chain states, by ``step_one`` (one chain's chunk): the new
    states and the chunk's draws stacked as ``jax.pmap`` gives them, (chain, draw, ...)."""
    import jax

    def step(states: list) -> tuple[list, Any]:
        done = [step_one(s) for s in states]  # dispatched at once; JAX runs them in turn
        return [d[0] for d in done], jax.tree.map(lambda *x: np.stack(x), *[d[1] for d in done])

    return step


def _kept_chunks(
    step: Callable, state: Any, ran: int, length: int, settings: NutsSettings
) -> Iterator[tuple[list[np.ndarray], dict[str, np.ndarray]]]:
    """The draws of each chunk ``step(state) -> (state, (z, diverging, energy))`` runs (each (chain, draw,
    ...), or (draw, ...) for one chain; ``length`` iterations per chain, ``ran`` of the ``settings.tune``
    warm-up iterations already run), the warm-up's iterations and those past ``settings.draws`` per chain
    dropped, until ``draws`` per chain are kept: (unconstrained draws, {field: (chain, draw)} of
    :data:`FIELDS`), each (chain, draw, ...)."""
    tune, draws = settings.tune, settings.draws
    done = 0  # draws kept per chain
    while done < draws:
        state, (z, diverging, energy) = step(state)
        if settings.chains == 1:  # (draw, ...) -> (chain, draw, ...)
            z, diverging, energy = [x[None] for x in z], diverging[None], energy[None]
        first = max(tune - ran, 0)  # the first iteration past the warm-up
        keep = slice(first, first + draws - done)
        ran += length
        fields = {k: np.asarray(v)[:, keep] for k, v in zip(FIELDS, (diverging, energy), strict=True)}
        done += fields["energy"].shape[1]
        yield [np.asarray(x)[:, keep] for x in z], fields


def _draw_to_target(
    chunks: Iterator[tuple[list[np.ndarray], dict[str, np.ndarray]]],
    to_idata: Callable,
    to_array: Callable,
    settings: NutsSettings,
    tracker: Tracker,
) -> Draws:
    """Chunks of draws from ``chunks`` (:func:`_kept_chunks`, :data:`lib.inference.settings.TARGET_CHUNK`
    iterations per chain each) until every reported parameter's bulk and tail ESS reach the target and its
    R-hat is at most :data:`lib.inference.convergence.RHAT_MAX`, or the ceiling (``settings.draws`` per chain) is
    drawn, checked after every chunk: a check of the watched parameters takes 0.01-0.1 s (4 x 450 draws),
    against 1.5 s or so for a chunk. Drawing as many chunks as the ESS and R-hat projected before the next
    check (to spare checks of all 1,420 parameters of the paper's design when each took 1.5-3 s) overshot: draws
    per chain on the paper's design (seeds 1 and 2) 450 and 450 where it drew 550 and 450, on mirt's Science data
    (seeds 0 and 1) 1,150 and 850 where it drew 1,350 and 950, with the same checks passed
    (``bench/bench_target_ess.py``). It stops at the first chunk where every parameter reaches the target.

    A check looks first at the :data:`WATCHED` parameters furthest from the target at the last check of all
    of them (:func:`slowest`): if one of those falls short, the target is not reached and the others are not
    looked at; else all are checked (sampling stops only when all reach the target). The last check, of all
    of them, is the one the fit's diagnostics read: :attr:`Draws.stats` (None when the draws ran out on a check of
    the watched ones alone)."""
    from lib.inference.chain_stats import chain_stats
    from lib.inference.convergence import RHAT_MAX

    target, draws, tune = settings.target_ess, settings.draws, settings.tune
    assert target is not None
    tune_share = tune / (tune + draws)
    pieces: list[tuple[Any, dict]] = []
    done = 0  # draws kept per chain
    watched: np.ndarray | None = None  # None: check all
    while True:
        pieces.append(next(chunks))  # the chunks go on to the ceiling
        done += pieces[-1][1]["energy"].shape[1]
        x = to_array(pieces)
        ess, rhat = (0.0, 0.0) if watched is None else worst_ess_rhat(chain_stats(x[:, :, watched]))
        stats: ChainStats | None = None  # of all of them, on these draws
        if watched is None or (ess >= target and rhat <= RHAT_MAX):  # all of them, else the watched are enough
            stats = chain_stats(x)
            ess, rhat = worst_ess_rhat(stats)
            watched = slowest(stats, target, WATCHED)
        tracker.stage(
            0.05 + 0.9 * (tune_share + (1 - tune_share) * min(1.0, max(ess / target, done / draws))),
            f"sampling: ESS {ess:.0f} of the target {target}, R-hat {rhat:.3f}, after {done} draws per chain",
        )
        reached = ess >= target and rhat <= RHAT_MAX
        if reached or done >= draws:
            idata = to_idata(pieces)
            idata.posterior.attrs.update(target_ess=target, stopped="target" if reached else "ceiling")
            return Draws(idata, stats=stats)


WATCHED = 100
"""Parameters a check of the target ESS looks at first (:func:`_draw_to_target`): a check of all 1,420 of
the paper's design (4 x 700 draws) took about 1.5 s, 3 s on a loaded machine, with the sampler idle."""


def slowest(stats: ChainStats, target: float, count: int) -> np.ndarray:
    """The columns of the ``count`` parameters furthest from the target (:class:`lib.inference.chain_stats.ChainStats`):
    by the larger of target / (bulk or tail ESS) and (R-hat - 1) / (:data:`lib.inference.convergence.RHAT_MAX`
    - 1), the draws each needs relative to those drawn; undefined ones (NaN) last."""
    from lib.inference.convergence import RHAT_MAX

    with np.errstate(divide="ignore", invalid="ignore"):
        need = np.fmax(target / np.fmin(stats.ess_bulk, stats.ess_tail), (stats.rhat - 1) / (RHAT_MAX - 1))
    return np.argsort(-np.nan_to_num(need, nan=-np.inf), kind="stable")[:count]


def worst_ess_rhat(stats: ChainStats) -> tuple[float, float]:
    """The smallest bulk or tail ESS and the largest rank-normalised split R-hat of any parameter of
    ``stats`` (:class:`lib.inference.chain_stats.ChainStats`, arviz's numbers), parameters where one is
    undefined (NaN: draws that do not vary have no R-hat) left out: the convergence check reports those
    when they should vary (a stuck chain). 0 for either when no parameter has one."""
    ess = np.concatenate([stats.ess_bulk, stats.ess_tail])
    rhat = stats.rhat
    return (
        float(np.nanmin(ess)) if np.isfinite(ess).any() else 0.0,
        float(np.nanmax(rhat)) if np.isfinite(rhat).any() else 0.0,
    )
