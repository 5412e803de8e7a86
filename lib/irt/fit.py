"""Fitting the graded response model through the one fit pipeline (:func:`lib.inference.pipeline.run_fit`),
cached on disk.

The GRM's samplers are the registry's made for it (:data:`lib.irt.settings.SAMPLERS`): ``numpyro``
(default), ``pymc``, ``nutpie`` (:mod:`lib.inference.samplers`) and ``map``, the MAP point
(:mod:`lib.inference.map`, of the GRM's :func:`lib.irt.map.map_spec`). This module holds the GRM's part of a
fit: its checks, its problem, its diagnostics (prior-to-posterior contraction, the data design) and the data
its cache entries answer (:class:`lib.inference.store.FitStore`, folder ``fits``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import arviz as az
import numpy as np

from lib.errors import FormatError
from lib.inference.chain_stats import ChainStats
from lib.inference.diagnostics import Diagnostics
from lib.inference.diagnostics import diagnose as diagnose_draws
from lib.inference.pipeline import FitPlan, run_fit
from lib.inference.progress import FitProgress
from lib.inference.samplers import Draws, Problem
from lib.inference.settings import gives_posterior
from lib.inference.store import FitStore, Stored, digest_of
from lib.inference.timings import PhaseTimer
from lib.io.cache import netcdf_bytes as netcdf_bytes_of
from lib.irt.contraction import UNINFORMED_BELOW, uninformed
from lib.irt.map import map_spec
from lib.irt.model import build_grm
from lib.irt.settings import FitSettings, check_cutpoints
from lib.judgments.ratings import RatingMatrix

STORE = FitStore("fits", model_version=1)
"""The GRM's fit cache (``lib.io.paths.cache_dir("fits")``)."""

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


def _data(rm: RatingMatrix) -> list[Any]:
    """The data a fit depends on: codes, comparison and prompt labels, categories."""
    return [
        rm.codes(),
        rm.comparisons["comparison"].astype(str).tolist(),
        rm.prompt_ids.astype(str).tolist(),
        rm.categories.tolist(),
    ]


def data_key(rm: RatingMatrix) -> str:
    """Hash of the data a fit depends on (:func:`lib.inference.store.digest_of`; 64 hex digits): the ``data``
    of its cache entries' requests."""
    return digest_of(*_data(rm))


def _request(rm: RatingMatrix, settings: FitSettings) -> dict:
    return STORE.request(_data(rm), settings)


def fit_key(rm: RatingMatrix, settings: FitSettings) -> str:
    """Hash of the data and the settings; names the cache entry (:meth:`lib.inference.store.FitStore.key`)."""
    return STORE.key(_request(rm, settings))


def load_cached(rm: RatingMatrix, settings: FitSettings) -> GRMFit | None:
    """The cached fit for this data and these settings, or None.

    Never raises (:meth:`lib.inference.store.FitStore.load`): a damaged entry, one of another
    format, data or settings, or whose posterior does not fit this data is a miss, and is removed.
    """
    return STORE.load(_request(rm, settings), lambda stored: _read(stored, rm, settings))


def _read(stored: Stored, rm: RatingMatrix, settings: FitSettings) -> GRMFit:
    """The fit of a cache entry; LookupError when its posterior does not fit this data."""
    post, c = stored.idata["posterior"], _coords(rm)
    if not (
        set(NAMES) <= set(post.data_vars)
        and post["comparison"].to_numpy().astype(str).tolist() == c["comparison"].tolist()
        and post["prompt"].to_numpy().astype(str).tolist() == c["prompt"].tolist()
        and post.sizes["threshold"] == len(rm.categories) - 1
    ):
        raise LookupError("the posterior does not fit this data")
    return GRMFit(stored.idata, stored.diagnostics, settings, fit_key(rm, settings))


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
        Read and write ``lib.io.paths.cache_dir("fits")``. A fit that cannot be written is still returned, with a
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
        The data cannot support the model (:func:`lib.irt.data_checks.check_design`).
    FormatError
        A prompt id or comparison label holds a NUL character.
    """
    from lib.irt.data_checks import check_design, cutpoints_note

    def prepare() -> FitPlan[GRMFit]:
        checked = settings or FitSettings()
        checked.validate()
        check_cutpoints(checked.cutpoints, len(rm.categories))
        design = check_design(rm)
        _check_labels(rm)

        def diagnose_fit(draws: Draws) -> Diagnostics:
            diag = diagnose(draws.idata, checked, 0.0, draws.stats)
            diag.warnings += design.warnings
            if (note := cutpoints_note(rm, checked.cutpoints)) is not None:
                diag.warnings.append(note)
            return diag

        return FitPlan(
            store=STORE,
            request=_request(rm, checked),
            sampler=checked.sampler,
            problem=_problem(rm, checked),
            settings=checked,
            read=lambda stored: _read(stored, rm, checked),
            diagnose=diagnose_fit,
            result=lambda draws, diag, key: GRMFit(draws.idata, diag, checked, key),
            remember=(lambda: _remember(rm, checked)) if remember else None,
        )

    return run_fit(prepare, progress=progress, use_cache=use_cache, timer=timer)


def _coords(rm: RatingMatrix) -> dict[str, np.ndarray]:
    return {
        "comparison": rm.comparisons["comparison"].to_numpy(dtype=str),
        "prompt": rm.prompt_ids.astype(str),
        "threshold": np.arange(1, len(rm.categories)),
    }


def _problem(rm: RatingMatrix, settings: FitSettings) -> Problem:
    """The GRM of this data for a sampler: its PyMC model, and its MAP point for the ``map`` sampler."""

    def build():
        c = _coords(rm)
        return build_grm(
            rm.codes(),
            len(rm.categories),
            cutpoints=settings.cutpoints,
            comparison_ids=c["comparison"],
            prompt_ids=c["prompt"],
        ), list(NAMES)

    # NUTS starts at PyMC's jittered initial point (lib.inference.samplers._initial_points), not at the MAP
    # point: the joint mode of the abilities and the slopes shrinks every theta towards 0 and sends alpha off
    # (176 for Future on mirt's Science data), where chains stuck (R-hat 3e7, 408 parameters that never moved).
    return Problem(build=build, map=map_spec(rm.codes(), len(rm.categories), settings.cutpoints, _coords(rm)))


def diagnose(
    idata: az.InferenceData, settings: FitSettings, wall_s: float, stats: ChainStats | None = None
) -> Diagnostics:
    """The shared diagnostics over theta, alpha and b (:func:`lib.inference.diagnostics.diagnose`; ``stats``: the
    sampler's last check, :attr:`lib.inference.samplers.Draws.stats`), then the parameters the data do not inform
    (prior-to-posterior contraction, :mod:`lib.irt.contraction`)."""
    diag = diagnose_draws(idata, settings.sampler, wall_s, NAMES, stats=stats)
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
    (:func:`lib.io.cache.netcdf_bytes`; a cache file could have been replaced since)."""
    return netcdf_bytes_of(fit.idata)
