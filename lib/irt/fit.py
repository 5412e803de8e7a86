"""Fitting the graded response model through the one engine (:mod:`lib.inference`), cached on disk.

The GRM's samplers are the registry's made for it (:data:`lib.irt.settings.SAMPLERS`): ``numpyro``
(default), ``pymc``, ``nutpie`` (:mod:`lib.inference.samplers`) and ``map``, the GRM's own MAP
point (:mod:`lib.irt.map`). This module builds the fit's problem, adds the GRM's read-outs to the
diagnostics (prior-to-posterior contraction, the data design) and keys its cache entries
(:class:`lib.inference.store.FitStore`, folder ``fits``).
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import arviz as az
import numpy as np
import xarray as xr

from lib.cache import netcdf_bytes as netcdf_bytes_of
from lib.errors import FormatError
from lib.inference.diagnostics import Diagnostics
from lib.inference.diagnostics import diagnose as diagnose_draws
from lib.inference.progress import FitProgress, Tracker, monotone, run_reporting
from lib.inference.samplers import Problem, runner
from lib.inference.settings import gives_posterior
from lib.inference.store import FitStore, Stored, try_cache_write
from lib.inference.timings import PhaseTimer
from lib.irt.contraction import UNINFORMED_BELOW, uninformed
from lib.irt.map import fit_map, map_solver, map_solver_ready
from lib.irt.model import build_grm
from lib.irt.settings import FitSettings, check_cutpoints
from lib.ratings import RatingMatrix

STORE = FitStore("fits", model_version=1)
"""The GRM's fit cache (``lib.paths.cache_dir("fits")``)."""

NAMES = ["theta", "alpha", "b"]
"""The variables a GRM fit keeps."""


@dataclass
class GRMFit:
    """A fitted GRM: posterior (or the MAP point as one draw) and its diagnostics.

    ``idata.posterior`` holds ``theta`` (chain, draw, comparison), ``alpha`` (chain, draw, prompt)
    and ``b`` (chain, draw, prompt, threshold). ``cache_key``: its entry's name (:func:`fit_key`).
    """

    idata: az.InferenceData
    diagnostics: Diagnostics
    settings: FitSettings
    cache_key: str


def data_key(rm: RatingMatrix) -> str:
    """Hash of the data a fit depends on: codes, comparison and prompt labels, categories (20 hex digits)."""
    h = hashlib.sha256()
    h.update(rm.codes().tobytes())
    h.update(
        json.dumps(
            [
                rm.comparisons["comparison"].astype(str).tolist(),
                rm.prompt_ids.astype(str).tolist(),
                rm.categories.tolist(),
            ]
        ).encode()
    )
    return h.hexdigest()[:20]


def _request(rm: RatingMatrix, settings: FitSettings) -> dict:
    return STORE.request(data_key(rm), settings)


def fit_key(rm: RatingMatrix, settings: FitSettings) -> str:
    """Hash of the data and the settings; names the cache entry (:meth:`lib.inference.store.FitStore.key`)."""
    return STORE.key(_request(rm, settings))


def load_cached(rm: RatingMatrix, settings: FitSettings) -> GRMFit | None:
    """The cached fit for this data and these settings, or None.

    Never raises (:meth:`lib.inference.store.FitStore.load`): a damaged entry, one of another
    format, data or settings, or whose posterior does not fit this data is a miss, and is removed.
    """

    def read(stored: Stored) -> GRMFit:
        post, c = stored.idata["posterior"], _coords(rm)
        if not (
            set(NAMES) <= set(post.data_vars)
            and post["comparison"].to_numpy().astype(str).tolist() == c["comparison"].tolist()
            and post["prompt"].to_numpy().astype(str).tolist() == c["prompt"].tolist()
            and post.sizes["threshold"] == len(rm.categories) - 1
        ):
            raise LookupError("the posterior does not fit this data")
        return GRMFit(stored.idata, stored.diagnostics, settings, fit_key(rm, settings))

    return STORE.load(_request(rm, settings), read)


def load_latest(rm: RatingMatrix) -> GRMFit | None:
    """The fit last remembered (``fit_grm(..., remember=True)``) for this data, or None.

    Never raises: a damaged pointer is a miss and is removed, as is one whose fit is gone.
    """

    def parse(value: dict) -> FitSettings:
        settings = FitSettings(**value)
        settings.validate()
        return settings

    name = f"latest-{data_key(rm)}"
    if (settings := STORE.recall(name, parse)) is None:
        return None
    fit = load_cached(rm, settings)
    if fit is None:
        STORE.forget(name)
    return fit


def save(fit: GRMFit, rm: RatingMatrix) -> Path:
    """Write the fit to the cache (:meth:`lib.inference.store.FitStore.save`); returns the .nc path.

    Raises
    ------
    OSError
        The cache folder cannot be written.
    """
    return STORE.save(_request(rm, fit.settings), fit.idata, fit.diagnostics)


def _remember(rm: RatingMatrix, settings: FitSettings) -> None:
    STORE.remember(f"latest-{data_key(rm)}", asdict(settings))


def _check_labels(rm: RatingMatrix) -> None:
    """NUL characters cannot be stored in netcdf: refuse them before anything is computed or written."""
    for label, values, column in (
        ("prompt id", rm.prompt_ids, "prompt"),
        ("comparison", rm.comparisons["comparison"], "comparison"),
    ):
        for value in map(str, values):
            if "\x00" in value:
                raise FormatError(
                    f"{label} {value!r} contains a NUL character (\\x00), which the "
                    "posterior file (netcdf) cannot store; remove it",
                    column=column,
                )


def fit_grm(
    rm: RatingMatrix,
    settings: FitSettings | None = None,
    *,
    progress: FitProgress | None = None,
    use_cache: bool = True,
    remember: bool = False,
    timer: PhaseTimer | None = None,
) -> GRMFit:
    """Fit the GRM to a rating matrix; cached on disk by a hash of data and settings.

    Parameters
    ----------
    rm : RatingMatrix
    settings : FitSettings, optional
        Defaults: antisymmetric cutpoints, numpyro NUTS, 4 chains x 1000 draws (500 tuning). The
        sampler is looked up in :data:`lib.irt.settings.SAMPLERS`.
    progress : callable, optional
        ``progress(fraction, message)``, called in the caller's thread with non-decreasing
        fractions through the stages "building the model", "compiling", "warm-up", "sampling"
        (numpyro and pymc report every chain in chunks; nutpie reports elapsed time only) and
        "computing diagnostics"; a MAP fit says "compiling (first time only)" when it compiles.
    use_cache : bool
        Read and write ``lib.paths.cache_dir("fits")``. A fit that cannot be written is still returned, with a
        warning in ``diagnostics.warnings``.
    remember : bool
        Make this the fit :func:`load_latest` returns for this data (the user's own fit; internal
        fits, e.g. prompt selection's calibration, leave it off).
    timer : PhaseTimer, optional
        Takes the seconds of the fit's phases (the caller may have timed its own, e.g. reading the
        file); a new one by default. ``diagnostics.timings`` is its ``seconds``.

    Returns
    -------
    GRMFit
        ``diagnostics.wall_s`` is the time from this call to the result, including model building
        and compilation (the cache write excepted: the cached entry holds it too); ``diagnostics.timings``
        the seconds per phase (:mod:`lib.inference.timings`).

    Raises
    ------
    SettingsError
        On invalid settings or data the model cannot take (see :func:`lib.irt.settings.check_cutpoints`).
    DesignError
        The data cannot support the model (:func:`lib.data_checks.check_design`).
    FormatError
        A prompt id or comparison label holds a NUL character.
    """
    from lib.data_checks import check_design, cutpoints_note

    start = time.perf_counter()
    timer = timer or PhaseTimer()
    with timer.phase("checks"):
        settings = settings or FitSettings()
        settings.validate()
        check_cutpoints(settings.cutpoints, len(rm.categories))
        design = check_design(rm)
        _check_labels(rm)
    report = monotone(progress or (lambda fraction, message: None))
    if use_cache:
        with timer.phase("cache read"):
            hit = load_cached(rm, settings)
        if hit is not None:
            if remember:
                try_cache_write(lambda: _remember(rm, settings), hit.diagnostics.warnings)
            report(1.0, "loaded from cache")
            return hit
    run = runner(settings.sampler)
    idata = run_reporting(
        lambda tracker: run(_problem(rm, settings), settings, tracker),
        report,
        start,
        settings.chains * (settings.tune + settings.draws),
        timer,
    )
    report(0.97, "computing diagnostics")
    with timer.phase("diagnostics"):
        diag = diagnose(idata, settings, 0.0)
        diag.warnings += design.warnings
        if (note := cutpoints_note(rm, settings.cutpoints)) is not None:
            diag.warnings.append(note)
    diag.timings = timer.seconds
    diag.wall_s = time.perf_counter() - start
    fit = GRMFit(idata=idata, diagnostics=diag, settings=settings, cache_key=fit_key(rm, settings))
    if use_cache:
        with timer.phase("cache write"):
            try_cache_write(lambda: save(fit, rm), diag.warnings)
            if remember:
                try_cache_write(lambda: _remember(rm, settings), diag.warnings)
    report(1.0, f"done in {time.perf_counter() - start:.1f} s")
    return fit


def _coords(rm: RatingMatrix) -> dict[str, np.ndarray]:
    return {
        "comparison": rm.comparisons["comparison"].to_numpy(dtype=str),
        "prompt": rm.prompt_ids.astype(str),
        "threshold": np.arange(1, len(rm.categories)),
    }


def _problem(rm: RatingMatrix, settings: FitSettings) -> Problem:
    """The GRM of this data for a sampler: its PyMC model and its own MAP point."""

    def build():
        c = _coords(rm)
        return build_grm(
            rm.codes(),
            len(rm.categories),
            cutpoints=settings.cutpoints,
            comparison_ids=c["comparison"],
            prompt_ids=c["prompt"],
        ), list(NAMES)

    # NUTS starts at PyMC's jittered initial point (lib.inference.samplers._initial_points), not at this MAP
    # point: the joint mode of the abilities and the slopes shrinks every theta towards 0 and sends alpha off
    # (176 for Future on mirt's Science data), where chains stuck (R-hat 3e7, 408 parameters that never moved).
    return Problem(build=build, point=lambda tracker: _map_posterior(rm, settings, tracker))


def _map_posterior(rm: RatingMatrix, settings: FitSettings, tracker: Tracker) -> az.InferenceData:
    """The MAP point (:func:`lib.irt.map.fit_map`) as a posterior of one draw."""
    codes, n_categories = rm.codes(), len(rm.categories)
    if map_solver_ready(codes.shape, n_categories, settings.cutpoints):
        tracker.stage(0.1, "finding the MAP point")
    else:
        tracker.stage(0.05, "compiling the MAP solver (first time only for data of this size)")
        with tracker.timer.phase("compile"):
            map_solver(codes.shape, n_categories, settings.cutpoints)
    with tracker.timer.phase("optimise"):
        point = fit_map(codes, n_categories, cutpoints=settings.cutpoints)
    post = xr.Dataset(
        {
            "theta": (("chain", "draw", "comparison"), point.theta[None, None]),
            "alpha": (("chain", "draw", "prompt"), point.alpha[None, None]),
            "b": (("chain", "draw", "prompt", "threshold"), point.b[None, None]),
        },
        coords={"chain": [0], "draw": [0], **_coords(rm)},
    )
    return az.InferenceData(posterior=post)


def diagnose(idata: az.InferenceData, settings: FitSettings, wall_s: float) -> Diagnostics:
    """The shared diagnostics over theta, alpha and b (:func:`lib.inference.diagnostics.diagnose`),
    then the parameters the data do not inform (prior-to-posterior contraction, :mod:`lib.irt.contraction`)."""
    diag = diagnose_draws(idata, settings.sampler, wall_s, NAMES)
    if not gives_posterior(settings.sampler):
        return diag
    post = idata["posterior"][NAMES]
    weak = uninformed(post, settings.cutpoints)
    if weak:
        kinds = {kind: sum(w.startswith(f"{kind}[") for w in weak) for kind in NAMES}
        sizes = {
            "theta": post.sizes["comparison"],
            "alpha": post.sizes["prompt"],
            "b": (1 if settings.cutpoints == "shared" else post.sizes["prompt"]) * post.sizes["threshold"],
        }
        listed = ", ".join(f"{n} of {sizes[k]} {k}" for k, n in kinds.items() if n)
        diag.warnings.append(
            f"The prior outweighs the data for {listed} (prior-to-posterior contraction below "
            f"{UNINFORMED_BELOW}): those estimates mostly restate the prior; collect more "
            "comparisons per prompt (or prompts per comparison) before reading them."
        )
    diag.n_prior_dominated, diag.prior_dominated = len(weak), weak
    return diag


def netcdf_bytes(fit: GRMFit) -> bytes:
    """The posterior as arviz netcdf file contents (for a download), made in memory
    (:func:`lib.cache.netcdf_bytes`; a cache file could have been replaced since)."""
    return netcdf_bytes_of(fit.idata)
