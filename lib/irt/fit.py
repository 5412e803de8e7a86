"""Fitting the graded response model: MAP preview, NUTS samplers, diagnostics and an on-disk cache.

Samplers: ``numpyro`` (default; NUTS in JAX through PyMC, about 3x the effective samples per second
of PyMC's own sampler on this model, see ``bench/bench_samplers.py``), ``pymc``, ``nutpie`` and
``map`` (a maximum a posteriori point in about a second; MAP abilities are shrunk towards 0 and
carry no interval, so they are a preview, not an estimate to report).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path

import arviz as az
import numpy as np
import xarray as xr

from lib.errors import SettingsError
from lib.irt.model import build_grm, check_cutpoints
from lib.ratings import RatingMatrix

SAMPLERS = ("numpyro", "pymc", "nutpie", "map")

MAX_PARALLEL_CHAINS = 8
"""numpyro runs chains in parallel only across JAX devices, and the CPU is one device unless XLA
is told to split it before JAX is first imported. Split it so up to 8 chains run side by side:
4 chains on the 2-core machines sample 3x faster than numpyro's vectorised chains
(``bench/bench_samplers.py``)."""

if "jax" not in sys.modules and "host_platform_device_count" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = (
        os.environ.get("XLA_FLAGS", "") + f" --xla_force_host_platform_device_count={MAX_PARALLEL_CHAINS}"
    ).strip()

RHAT_MAX = 1.01
"""Above this R-hat the chains disagree (Vehtari et al. 2021): the fit is flagged."""

Progress = Callable[[float, str], None]
"""Called with (fraction done in [0, 1], what is happening)."""


@dataclass
class GRMPoint:
    """A point estimate of the GRM.

    theta : (I,) abilities; alpha : (J,) discriminations; b : (J, K-1) ordered thresholds (logits).
    """

    theta: np.ndarray
    alpha: np.ndarray
    b: np.ndarray


@dataclass
class FitSettings:
    """Everything that changes a fit (and so its cache key)."""

    cutpoints: str = "antisymmetric"
    sampler: str = "numpyro"
    chains: int = 4
    draws: int = 1000
    tune: int = 500
    seed: int = 0

    def validate(self) -> None:
        """Raise SettingsError on an unknown sampler or non-positive sizes."""
        if self.sampler not in SAMPLERS:
            raise SettingsError(f"unknown sampler '{self.sampler}'; choose one of {', '.join(SAMPLERS)}")
        for name in ("chains", "draws"):
            if getattr(self, name) < 1:
                raise SettingsError(f"{name} must be at least 1")
        if self.tune < 0:
            raise SettingsError("tune must be 0 or more")


@dataclass
class Diagnostics:
    """Convergence diagnostics of a fit (R-hat and ESS from arviz; NaN for MAP)."""

    sampler: str
    chains: int
    draws: int
    rhat_max: float
    ess_bulk_min: float
    ess_tail_min: float
    divergences: int
    wall_s: float
    warnings: list[str] = field(default_factory=list)


@dataclass
class GRMFit:
    """A fitted GRM: posterior (or the MAP point as one draw) and its diagnostics.

    ``idata.posterior`` holds ``theta`` (chain, draw, comparison), ``alpha`` (chain, draw, prompt)
    and ``b`` (chain, draw, prompt, threshold).
    """

    idata: az.InferenceData
    diagnostics: Diagnostics
    settings: FitSettings
    cache_key: str


@lru_cache(maxsize=8)
def _map_solver(codes_bytes: bytes, shape: tuple[int, int], n_categories: int, cutpoints: str):
    """Compile log density and gradient once per data set, as one function of a flat vector.

    Refits with other weights (leave-one-out) reuse the compiled function and start from the
    all-data MAP point, which is computed first so results do not depend on the call order.
    """
    import pytensor
    import pytensor.tensor as pt
    from pymc.pytensorf import join_nonshared_inputs
    from scipy.optimize import minimize

    codes = np.frombuffer(codes_bytes, dtype=np.int64).reshape(shape)
    model = build_grm(codes, n_categories, cutpoints=cutpoints)
    start = model.initial_point()
    logp = model.logp(jacobian=False)
    grad = pt.concatenate([g.ravel() for g in pt.grad(logp, model.value_vars)])
    # theta, alpha and b written in terms of the (transformed) value variables.
    by_name = {v.name: v for v in model.unobserved_value_vars}
    outs, flat = join_nonshared_inputs(
        start, [logp, grad, by_name["theta"], by_name["alpha"], by_name["b"]], model.value_vars
    )
    value_and_grad = pytensor.function([flat], outs[:2])
    params = pytensor.function([flat], outs[2:], on_unused_input="ignore")
    weight = model["weight"]

    def cost(x: np.ndarray) -> tuple[float, np.ndarray]:
        value, gradient = value_and_grad(x)
        return -float(value), -gradient

    def optimum(weights: np.ndarray, x0: np.ndarray) -> np.ndarray:
        weight.set_value(weights)
        return minimize(cost, x0, jac=True, method="L-BFGS-B", options={"maxiter": 5000}).x

    x_start = np.concatenate([np.ravel(start[v.name]) for v in model.value_vars])
    x_all = optimum(np.ones(shape[0]), x_start)

    def solve(weights: np.ndarray) -> GRMPoint:
        x = x_all if np.all(weights == 1) else optimum(weights, x_all)
        theta, alpha, b = params(x)
        return GRMPoint(theta=np.asarray(theta), alpha=np.asarray(alpha), b=np.asarray(b))

    return solve


def fit_map(
    codes: np.ndarray,
    n_categories: int,
    *,
    cutpoints: str = "antisymmetric",
    weights: np.ndarray | None = None,
) -> GRMPoint:
    """Maximum a posteriori estimate of the GRM (L-BFGS on the unconstrained space).

    Parameters
    ----------
    codes : ndarray, shape (I, J), int64
        Category index 0..K-1, -1 where missing (``RatingMatrix.codes()``).
    n_categories : int
        K.
    cutpoints : {"antisymmetric", "free"}
    weights : ndarray, shape (I,), optional
        Per-comparison weight of the log-likelihood; 0 leaves a comparison out (its theta then
        sits at the prior mode, 0). The compiled model is cached per data set, so repeated
        calls with other weights (leave-one-out) cost only the optimisation.

    Returns
    -------
    GRMPoint
        MAP thetas are shrunk towards 0 relative to posterior means.

    Raises
    ------
    SettingsError
        See :func:`lib.irt.model.check_cutpoints`.
    """
    check_cutpoints(cutpoints, n_categories)
    codes = np.ascontiguousarray(codes, dtype=np.int64)
    solve = _map_solver(codes.tobytes(), codes.shape, int(n_categories), cutpoints)
    w = np.ones(codes.shape[0]) if weights is None else np.asarray(weights, dtype=np.float64)
    return solve(w)


def cache_dir() -> Path:
    """Where fits are cached: ``$EVAL_CACHE_DIR/fits`` or ``.cache/fits`` in the repository."""
    root = os.environ.get("EVAL_CACHE_DIR") or Path(__file__).resolve().parents[2] / ".cache"
    return Path(root) / "fits"


def data_key(rm: RatingMatrix) -> str:
    """Hash of the data a fit depends on: codes, comparison and prompt labels, categories."""
    h = hashlib.sha256()
    h.update(rm.codes().tobytes())
    h.update(json.dumps([rm.comparisons["comparison"].tolist(), rm.prompt_ids.tolist(),
                         rm.categories.tolist()]).encode())
    return h.hexdigest()[:20]


def fit_key(rm: RatingMatrix, settings: FitSettings) -> str:
    """Hash of the data and the settings; names the cache entry."""
    return hashlib.sha256(json.dumps([data_key(rm), asdict(settings)]).encode()).hexdigest()[:20]


def load_cached(rm: RatingMatrix, settings: FitSettings) -> GRMFit | None:
    """The cached fit for this data and these settings, or None."""
    key = fit_key(rm, settings)
    nc, meta = cache_dir() / f"{key}.nc", cache_dir() / f"{key}.json"
    if not (nc.exists() and meta.exists()):
        return None
    idata = az.from_netcdf(nc)
    idata.load()  # read everything now so the file is not held open
    diag = Diagnostics(**json.loads(meta.read_text()))
    return GRMFit(idata=idata, diagnostics=diag, settings=settings, cache_key=key)


def load_latest(rm: RatingMatrix) -> GRMFit | None:
    """The most recent cached fit of this data, whatever its settings, or None."""
    pointer = cache_dir() / f"latest-{data_key(rm)}.json"
    if not pointer.exists():
        return None
    return load_cached(rm, FitSettings(**json.loads(pointer.read_text())))


def fit_grm(
    rm: RatingMatrix,
    settings: FitSettings | None = None,
    *,
    progress: Progress | None = None,
    use_cache: bool = True,
) -> GRMFit:
    """Fit the GRM to a rating matrix; cached on disk by a hash of data and settings.

    Parameters
    ----------
    rm : RatingMatrix
    settings : FitSettings, optional
        Defaults: antisymmetric cutpoints, numpyro NUTS, 4 chains x 1000 draws (500 tuning).
    progress : callable, optional
        ``progress(fraction, message)``; PyMC's sampler reports every draw, the others report
        their stages.
    use_cache : bool
        Read and write ``cache_dir()``.

    Returns
    -------
    GRMFit

    Raises
    ------
    SettingsError
        On invalid settings or data the model cannot take (see :func:`lib.irt.model.check_cutpoints`).
    """
    settings = settings or FitSettings()
    settings.validate()
    check_cutpoints(settings.cutpoints, len(rm.categories))
    report = progress or (lambda fraction, message: None)
    if use_cache and (hit := load_cached(rm, settings)) is not None:
        report(1.0, "loaded from cache")
        return hit
    start = time.perf_counter()
    if settings.sampler == "map":
        report(0.1, "finding the MAP point")
        idata = _map_idata(rm, settings)
    else:
        idata = _sample(rm, settings, report)
    diag = diagnose(idata, settings, time.perf_counter() - start)
    fit = GRMFit(idata=idata, diagnostics=diag, settings=settings, cache_key=fit_key(rm, settings))
    if use_cache:
        save(fit)
        (cache_dir() / f"latest-{data_key(rm)}.json").write_text(json.dumps(asdict(settings)))
    report(1.0, "done")
    return fit


def _coords(rm: RatingMatrix) -> dict[str, np.ndarray]:
    return {
        "comparison": rm.comparisons["comparison"].to_numpy(dtype=str),
        "prompt": rm.prompt_ids,
        "threshold": np.arange(1, len(rm.categories)),
    }


def _map_idata(rm: RatingMatrix, settings: FitSettings) -> az.InferenceData:
    point = fit_map(rm.codes(), len(rm.categories), cutpoints=settings.cutpoints)
    c = _coords(rm)
    post = xr.Dataset(
        {
            "theta": (("chain", "draw", "comparison"), point.theta[None, None]),
            "alpha": (("chain", "draw", "prompt"), point.alpha[None, None]),
            "b": (("chain", "draw", "prompt", "threshold"), point.b[None, None]),
        },
        coords={"chain": [0], "draw": [0], **c},
    )
    return az.InferenceData(posterior=post)


def _sample(rm: RatingMatrix, settings: FitSettings, report: Progress) -> az.InferenceData:
    import pymc as pm

    c = _coords(rm)
    model = build_grm(rm.codes(), len(rm.categories), cutpoints=settings.cutpoints,
                      comparison_ids=c["comparison"], prompt_ids=c["prompt"])
    total = settings.chains * (settings.draws + settings.tune)
    kwargs: dict = {}
    if settings.sampler == "pymc":
        done = [0]

        def callback(trace, draw) -> None:  # called once per draw of every chain
            done[0] += 1
            if done[0] % 50 == 0:
                report(done[0] / total, f"sampling: {done[0]} of {total} iterations")

        kwargs = {"callback": callback, "cores": min(settings.chains, os.cpu_count() or 1)}
    elif settings.sampler == "numpyro":
        parallel = settings.chains <= MAX_PARALLEL_CHAINS
        kwargs = {"nuts_sampler_kwargs": {"chain_method": "parallel" if parallel else "sequential"}}
    report(0.02, f"compiling and sampling with {settings.sampler} "
                 f"({settings.chains} chains x {settings.tune}+{settings.draws} iterations)")
    with model:
        idata = pm.sample(
            draws=settings.draws, tune=settings.tune, chains=settings.chains,
            random_seed=settings.seed, nuts_sampler=settings.sampler, progressbar=False,
            compute_convergence_checks=False, var_names=["theta", "alpha", "b"], **kwargs,
        )
    report(0.98, "computing diagnostics")
    return idata


def diagnose(idata: az.InferenceData, settings: FitSettings, wall_s: float) -> Diagnostics:
    """R-hat (rank-normalised), bulk and tail ESS over theta, alpha and b; divergent transitions."""
    post = idata.posterior[["theta", "alpha", "b"]]
    n_chains, n_draws = post.sizes["chain"], post.sizes["draw"]
    if settings.sampler == "map":
        return Diagnostics("map", 1, 1, float("nan"), float("nan"), float("nan"), 0, wall_s,
                           ["MAP point: no intervals, and abilities are shrunk towards 0."])
    rhat = float(az.rhat(post).to_array().max()) if n_chains > 1 else float("nan")
    ess_bulk = float(az.ess(post, method="bulk").to_array().min())
    ess_tail = float(az.ess(post, method="tail").to_array().min())
    div = int(idata.sample_stats["diverging"].sum()) if "sample_stats" in idata else 0
    warnings = []
    if not rhat <= RHAT_MAX and n_chains > 1:
        warnings.append(f"R-hat up to {rhat:.3f} (> {RHAT_MAX}): chains disagree; run longer.")
    if n_chains == 1:
        warnings.append("one chain: R-hat cannot be computed; use 4 chains to check convergence.")
    if div > 0:
        warnings.append(f"{div} divergent transitions: the posterior may be biased.")
    return Diagnostics(settings.sampler, n_chains, n_draws, rhat, ess_bulk, ess_tail, div, wall_s,
                       warnings)


def save(fit: GRMFit) -> Path:
    """Write the fit to the cache as arviz netcdf plus a JSON of diagnostics; return the .nc path."""
    folder = cache_dir()
    folder.mkdir(parents=True, exist_ok=True)
    nc = folder / f"{fit.cache_key}.nc"
    tmp = nc.with_suffix(".tmp")
    fit.idata.to_netcdf(str(tmp))
    tmp.replace(nc)  # atomic: a half-written file is never read as a fit
    (folder / f"{fit.cache_key}.json").write_text(json.dumps(asdict(fit.diagnostics)))
    return nc
