"""One fit, whatever the model: the steps every fit runs around a sampler, in one place.

::

    checks ─► cache read ─► run (a sampler of the registry) ─► diagnostics ─► timings ─► cache write ─► report
              (one key: FitStore.request / key)                                          (progress, "done in")

A model's package says only what is its own, as a :class:`FitPlan`: its validation and the problem a sampler
fits (made by the ``prepare`` that :func:`run_fit` calls and times as the checks), the data and options its
cache entry answers, how an entry is read back, its diagnostics and its result. :func:`lib.irt.fit.fit_grm` (the
graded response model) and :func:`lib.ranking.fit.fit_ranking` (the leaderboard) are two such plans.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from lib.inference.diagnostics import Diagnostics
from lib.inference.progress import FitProgress, monotone, run_reporting
from lib.inference.samplers import Draws, Problem, as_draws, runner
from lib.inference.settings import NutsSettings
from lib.inference.store import FitStore, Stored, try_cache_write
from lib.inference.timings import PhaseTimer


class Fitted(Protocol):
    """What every fit returns: at least its diagnostics."""

    diagnostics: Diagnostics


R = TypeVar("R", bound=Fitted)


@dataclass
class FitPlan(Generic[R]):
    """A model's part of a fit (:func:`run_fit` runs the rest).

    Attributes
    ----------
    store : FitStore
        The model's cache folder (:class:`lib.inference.store.FitStore`).
    request : dict
        What the fit answers (:meth:`lib.inference.store.FitStore.request`): its entry's key is
        ``store.key(request)``.
    sampler : str
        The registered sampler that runs (:data:`lib.inference.settings.SAMPLERS`).
    problem : Problem
        What the sampler fits (:class:`lib.inference.samplers.Problem`).
    settings : NutsSettings
        The fit's settings (the sampler reads its sizes and seed).
    read : callable
        ``read(stored)``: the model's result from a cache entry (:class:`lib.inference.store.Stored`); raises
        (e.g. ``LookupError``) for an entry that does not fit the data: a miss.
    diagnose : callable
        ``diagnose(draws)``: the diagnostics of the run's posterior (:class:`lib.inference.samplers.Draws`; its
        ``stats``, the sampler's last convergence check, spare computing it again), the model's own checks included.
    result : callable
        ``result(draws, diagnostics, key)``: the model's result from the run (:class:`lib.inference.samplers.Draws`),
        its diagnostics and its cache entry's key.
    extra : callable, optional
        ``extra(result)``: what the cache entry keeps beside the draws (JSON); nothing by default.
    remember : callable, optional
        Written after the fit, or on a cache hit (e.g. which fit of these data was the user's last).
    cacheable : bool
        False: the cache is neither read nor written (data a cache entry cannot hold).
    """

    store: FitStore
    request: dict
    sampler: str
    problem: Problem
    settings: NutsSettings
    read: Callable[[Stored], R]
    diagnose: Callable[[Draws], Diagnostics]
    result: Callable[[Draws, Diagnostics, str], R]
    extra: Callable[[R], dict] | None = None
    remember: Callable[[], None] | None = None
    cacheable: bool = True


def run_fit(
    prepare: Callable[[], FitPlan[R]],
    *,
    progress: FitProgress | None = None,
    use_cache: bool = True,
    timer: PhaseTimer | None = None,
) -> R:
    """Run a fit: the model's checks (``prepare``), the cache read, the sampler, the diagnostics, the timings,
    the cache write and the progress report.

    Parameters
    ----------
    prepare : callable
        ``prepare()`` validates the settings and the data and returns the model's :class:`FitPlan` (phase
        "checks"); whatever it raises reaches the caller before anything is computed or written.
    progress : callable, optional
        ``progress(fraction, message)``, called in the caller's thread with non-decreasing fractions
        (:func:`lib.inference.progress.run_reporting` relays the sampler's stages): "loaded from cache", or the
        sampler's stages, "computing diagnostics" and "done in ... s".
    use_cache : bool
        Read and write the plan's store (when the plan is ``cacheable``): a hit is returned at once; a fit that
        cannot be written is still returned, with a warning in ``diagnostics.warnings``.
    timer : PhaseTimer, optional
        Takes the seconds of the fit's phases (the caller may have timed its own, e.g. reading the file); a
        new one by default. ``diagnostics.timings`` is its ``seconds``.

    Returns
    -------
    The model's result: ``diagnostics.wall_s`` is the time from this call to the result (checks, model
    building, compilation and diagnostics included; the cache write excepted: the cached entry holds it too);
    a cache hit keeps the original fit's.
    """
    start = time.perf_counter()
    timer = timer or PhaseTimer()
    with timer.phase("checks"):
        plan = prepare()
    report = monotone(progress or (lambda fraction, message: None))
    use_cache = use_cache and plan.cacheable
    if use_cache:
        with timer.phase("cache read"):
            hit = plan.store.load(plan.request, plan.read)
        if hit is not None:
            if plan.remember is not None:
                try_cache_write(plan.remember, hit.diagnostics.warnings)
            report(1.0, "loaded from cache")
            return hit
    run, settings = runner(plan.sampler), plan.settings
    draws = as_draws(
        run_reporting(
            lambda tracker: run(plan.problem, settings, tracker),
            report,
            start,
            settings.chains * (settings.tune + settings.draws),
            timer,
        )
    )
    report(0.97, "computing diagnostics")
    with timer.phase("diagnostics"):
        diag = plan.diagnose(draws)
    diag.timings = timer.seconds
    diag.wall_s = time.perf_counter() - start
    fit = plan.result(draws, diag, plan.store.key(plan.request))
    if use_cache:
        extra = {} if plan.extra is None else plan.extra(fit)
        with timer.phase("cache write"):
            try_cache_write(lambda: plan.store.save(plan.request, draws.idata, diag, extra), diag.warnings)
            if plan.remember is not None:
                try_cache_write(plan.remember, diag.warnings)
    report(1.0, f"done in {time.perf_counter() - start:.1f} s")
    return fit
