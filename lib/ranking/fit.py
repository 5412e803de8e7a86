"""Fitting the ranking model: NUTS (the samplers of :data:`lib.irt.settings.SAMPLERS`) or MAP + Laplace.

MAP + Laplace (``sampler="laplace"``, an approximation): the mode of the log posterior (on the
unconstrained space, Jacobian included) by L-BFGS, polished by Newton steps, and draws from the
Gaussian whose precision is the negative Hessian there. Prompts couple only through the global
variables (skills and the optional tau, delta, gamma, sigma_eta, shared thresholds), so the
Hessian is a small dense global block A, one small block D_j per prompt and the cross terms B_j.
It is assembled from Hessian-vector products (one per global variable, plus one per prompt
variable probing all prompts at once) and never formed densely; the global marginal uses the
Schur complement ``S = A - sum_j B_j' D_j^-1 B_j`` and the prompt variables are drawn given the
globals (Rue & Held 2005, ch. 2). For paired data the prompt variables are then integrated out:
the globals sit at the mode of their Laplace-approximated marginal, whose curvature is their
precision (:func:`_marginal_mode`; the joint mode over-stated gamma by 8-17% in small arenas, and in
an arena of 100 systems x 500,000 votes it stretched the skills by 8.5%, their 95% intervals covering
31% of the simulated skills; ``docs/leaderboard.md``); above :data:`MARGINAL_MAX_OBS` judgments the
precision is the Schur complement at that mode.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

import arviz as az
import numpy as np

from lib.cache import discard, prune, write_atomic
from lib.errors import SettingsError
from lib.irt.fit import (
    CACHE_MAX_BYTES,
    CACHE_MAX_ENTRIES,
    COMPILE_LOCK,
    Diagnostics,
    Progress,
    Tracker,
    diagnostics_from_json,
    diagnostics_json,
    monotone,
    run_reporting,
    try_cache_write,
)
from lib.irt.settings import SAMPLERS, gives_posterior, posterior_samplers
from lib.paths import cache_dir
from lib.ranking.data import RankingData

LAPLACE = "laplace"
LAPLACE_HELP = "MAP + Laplace: a Gaussian approximation of the posterior at its mode (fast on large data)"
_HVP_BATCH = 8
"""Hessian-vector products computed together (memory grows with it)."""
_DRAW_BATCH = 100
NEWTON_STEPS = 4
NEWTON_TOL = 1e-6
"""At most this many Newton steps polish the L-BFGS mode; they stop once no coordinate moves this much."""
MARGINAL_MAX_OBS = 20_000
"""Above this many judgments the globals' precision at the marginal mode is the joint Hessian's Schur
complement there, which leaves out the curvature of the prompt blocks' log-determinant, instead of
the marginal's own curvature: that takes two gradients of the marginal per global variable (150 s
on the 500,000 votes of ``bench/bench_arena.py``), the Schur complement one Hessian (6 s)."""
SCHUR_NOTE = ("MAP + Laplace on more than {n:,} judgments: the skills' precision leaves out the curvature "
              "of the prompt variables' integral (intervals 2-4% wider than the marginal's in simulated "
              "arenas, 12% on PandaLM's votes).")
CACHE_KIND = "rankings"
"""Ranking fits are cached in ``lib.paths.cache_dir(CACHE_KIND)`` (bounded as the GRM's fits)."""
CACHE_VERSION = 2
"""Part of every cache key: raise it when the model or the stored layout changes, so older entries miss."""


@dataclass
class RankSettings:
    """Everything that changes a ranking fit.

    Attributes
    ----------
    likelihood : str, optional
        Key of :data:`lib.ranking.data.LIKELIHOODS` (None: the data's own, see ``RankingData``).
    sampler : str
        A posterior sampler of :data:`lib.irt.settings.SAMPLERS` (default numpyro NUTS) or ``"laplace"``.
    baseline : str, optional
        None: skills sum to zero; else this system's skill is 0.
    intransitivity, position_bias : bool
        Add pair deviations (delta, tau) / the first-shown effect gamma.
    annotator_effect : bool
        Add annotator severities (zeta, sigma_zeta; the ratings likelihood only).
    chains, draws, tune, seed : int
        NUTS sizes; Laplace draws ``draws`` independent draws as one chain.
    """

    likelihood: str | None = None
    sampler: str = "numpyro"
    baseline: str | None = None
    intransitivity: bool = False
    position_bias: bool = False
    annotator_effect: bool = False
    chains: int = 4
    draws: int = 1000
    tune: int = 500
    seed: int = 0

    def validate(self) -> None:
        """Raises SettingsError for an unknown or non-posterior sampler, Laplace with intransitivity,
        annotator severity with a paired likelihood, or non-positive sizes."""
        if self.sampler != LAPLACE and not gives_posterior(self.sampler):
            raise SettingsError(f"unknown sampler '{self.sampler}' for a leaderboard; choose "
                                f"{posterior_samplers()} or {LAPLACE}")
        if self.sampler == LAPLACE and self.intransitivity:
            raise SettingsError("intransitivity needs a NUTS sampler: a Gaussian at the mode cannot describe the "
                                "scale tau near 0 (it reports tau far from 0 when there is no intransitivity)")
        if self.annotator_effect and self.likelihood in ("cells", "votes"):
            raise SettingsError(f"annotator severity is part of the ratings likelihood, not {self.likelihood}: "
                                "paired judgments compare systems within an annotator")
        for name in ("chains", "draws"):
            if getattr(self, name) < 1:
                raise SettingsError(f"{name} must be at least 1")
        if self.tune < 0:
            raise SettingsError("tune must be 0 or more")


@dataclass
class RankingFit:
    """A fitted ranking model.

    ``idata.posterior``: ``skill`` (chain, draw, system), ``alpha`` (.., prompt), ``b`` (..,
    [prompt,] threshold), and as asked ``tau``, ``delta`` (.., pair), ``gamma``, ``sigma_eta``,
    ``eta`` (.., prompt). ``categories``: labels of the outcome categories. ``mode``: the posterior
    mode of the same variables (Laplace fits only; None for NUTS). ``cache_key``: the entry's name
    in the cache (:func:`fit_key`), ``from_cache``: whether the fit was read from it.
    """

    idata: az.InferenceData
    diagnostics: Diagnostics
    data: RankingData
    settings: RankSettings
    categories: list[str] = field(default_factory=list)
    mode: dict[str, np.ndarray] | None = None
    cache_key: str = ""
    from_cache: bool = False

    def skill_draws(self) -> np.ndarray:
        """Skill draws, shape (S, K) float64 (S = chains x draws), columns in ``data.systems`` order."""
        skill = self.idata.posterior["skill"].sel(system=self.data.systems)
        return skill.stack(sample=("chain", "draw")).transpose("sample", "system").to_numpy().astype(np.float64)


def fit_key(obs, settings: RankSettings, fixed_alpha: bool = False) -> str:
    """Hash of everything a ranking fit depends on; names its cache entry.

    Parameters
    ----------
    obs : lib.ranking.model.Observations
        Every field is hashed (arrays with dtype and shape, labels, the pairs table), so a field
        added to ``Observations`` later is part of the key without a change here.
    settings : RankSettings
        Every field (``dataclasses.asdict``).
    fixed_alpha : bool
        As given to :func:`fit_ranking`.

    Returns
    -------
    str
        64 hexadecimal digits (SHA-256), also over :data:`CACHE_VERSION`.
    """
    h = hashlib.sha256(json.dumps([CACHE_VERSION, asdict(settings), fixed_alpha]).encode())
    for f in fields(obs):
        value = getattr(obs, f.name)
        h.update(f.name.encode())
        if isinstance(value, np.ndarray) and value.dtype.kind not in "OUS":
            h.update(f"{value.dtype}{value.shape}".encode())
            h.update(np.ascontiguousarray(value).tobytes())
        elif hasattr(value, "to_csv"):  # the pairs table
            h.update(value.to_csv(index=False).encode())
        else:  # labels (object or string arrays hash their text, never their pointers)
            h.update(json.dumps(value.tolist() if isinstance(value, np.ndarray) else value, default=str).encode())
    return h.hexdigest()


def _entry(key: str) -> tuple[Path, Path]:
    folder = cache_dir(CACHE_KIND)
    return folder / f"{key[:20]}.nc", folder / f"{key[:20]}.json"


def load_cached(key: str, rd: RankingData, settings: RankSettings, fixed_alpha: bool = False) -> RankingFit | None:
    """The cached fit of this key (:func:`fit_key`), or None.

    Never raises: an unreadable entry (truncated file, old layout) or one stored for another key,
    other settings or other systems and prompts is a miss, and its files are removed.
    """
    nc, meta = _entry(key)
    if not (nc.exists() and meta.exists()):
        return None
    try:
        entry = json.loads(meta.read_text(encoding="utf-8"))
        if (entry["key"], entry["settings"], entry["fixed_alpha"]) != (key, asdict(settings), fixed_alpha):
            raise LookupError("the entry belongs to other data or settings")
        diag = diagnostics_from_json(entry["diagnostics"])
        mode = None if entry["mode"] is None else {
            name: np.asarray(value, dtype=entry["mode_dtypes"][name]) for name, value in entry["mode"].items()}
        idata = az.from_netcdf(nc)
        idata.load()  # read everything now so the file is not held open
        post = idata.posterior
        if (post["system"].to_numpy().astype(str).tolist() != [str(s) for s in rd.systems]
                or not {"skill", "alpha", "b"} <= set(post.data_vars)):
            raise LookupError("the posterior does not fit this data")
    # Whatever a damaged file raises (netCDF/HDF5 errors, JSON, missing keys, wrong types), the
    # entry cannot be used: a miss, never an error.
    except Exception:
        discard(nc, meta)
        return None
    return RankingFit(idata, diag, rd, settings, list(entry["categories"]), mode, key, from_cache=True)


def save(fit: RankingFit, fixed_alpha: bool = False) -> Path:
    """Write the fit to the cache as arviz netcdf plus a JSON of key, settings, categories, mode and
    diagnostics; removes the oldest entries beyond the GRM cache's bounds
    (:data:`lib.irt.fit.CACHE_MAX_ENTRIES`, :data:`lib.irt.fit.CACHE_MAX_BYTES`).

    Returns the .nc path.

    Raises
    ------
    OSError
        The cache folder cannot be written.
    """
    nc, meta = _entry(fit.cache_key)
    mode = fit.mode or {}
    entry = {"key": fit.cache_key, "settings": asdict(fit.settings), "fixed_alpha": fixed_alpha,
             "categories": list(fit.categories), "diagnostics": json.loads(diagnostics_json(fit.diagnostics)),
             "mode": {n: np.asarray(v).tolist() for n, v in mode.items()} if fit.mode is not None else None,
             "mode_dtypes": {n: str(np.asarray(v).dtype) for n, v in mode.items()}}
    write_atomic(nc, fit.idata.to_netcdf)
    write_atomic(meta, lambda tmp: Path(tmp).write_text(json.dumps(entry), encoding="utf-8"))
    prune(([f, f.with_suffix(".json")] for f in nc.parent.glob("*.nc")),
          max_entries=CACHE_MAX_ENTRIES, max_bytes=CACHE_MAX_BYTES)
    return nc


def fit_ranking(rd: RankingData, settings: RankSettings | None = None, *, progress: Progress | None = None,
                fixed_alpha: bool = False, use_cache: bool = True) -> RankingFit:
    """Fit the ranking model (:mod:`lib.ranking.model`) to the data of one likelihood; cached on
    disk by a hash of the observations and the settings (:func:`fit_key`).

    Parameters
    ----------
    rd : RankingData
    settings : RankSettings, optional
        Its likelihood must be None or ``rd.likelihood``.
    progress : callable, optional
        ``progress(fraction, message)``, called in the caller's thread with non-decreasing fractions.
    fixed_alpha : bool
        alpha_j = 1 for every prompt (Bradley-Terry for tie-free votes; for checks).
    use_cache : bool
        Read and write ``lib.paths.cache_dir("rankings")``: a hit returns at once (``from_cache``
        True, progress "loaded from cache"; ``diagnostics.wall_s`` is the original fit's). A fit
        that cannot be written is still returned, with a warning in ``diagnostics.warnings``; fits
        whose labels hold NUL characters (netcdf cannot store them) are not cached.

    Returns
    -------
    RankingFit
        ``diagnostics.wall_s`` counts model building and compilation.

    Raises
    ------
    SettingsError
        Invalid settings, a baseline that is not a system, options the likelihood cannot take, a
        Laplace fit whose Hessian is not positive definite.
    """
    from lib.ranking.model import build_ranking, observations, posterior_names

    start = time.perf_counter()
    settings = settings or RankSettings()
    settings.validate()
    if settings.likelihood not in (None, rd.likelihood):
        raise SettingsError(f"the data were prepared for the {rd.likelihood} likelihood, not {settings.likelihood}")
    report = monotone(progress or (lambda fraction, message: None))
    obs = observations(rd)
    if settings.position_bias and not (obs.side != 0).any():
        raise SettingsError("position bias needs to know which system was shown first (a position column)")
    key = fit_key(obs, settings, fixed_alpha)
    use_cache = use_cache and "\x00" not in "".join(map(str, [*obs.systems, *obs.prompts]))
    if use_cache and (hit := load_cached(key, rd, settings, fixed_alpha)) is not None:
        report(1.0, "loaded from cache")
        return hit
    mode: dict[str, np.ndarray] = {}
    curvature = len(obs.code) <= MARGINAL_MAX_OBS

    def work(tracker: Tracker) -> az.InferenceData:
        tracker.stage(0.01, "building the model")
        model = build_ranking(obs, baseline=settings.baseline, intransitivity=settings.intransitivity,
                              position_bias=settings.position_bias, fixed_alpha=fixed_alpha,
                              annotator_effect=settings.annotator_effect)
        names = posterior_names(model)
        if settings.sampler == LAPLACE:
            return laplace(model, names, settings, tracker, mode=mode, marginal_curvature=curvature)
        if settings.sampler == "numpyro":
            from lib.irt.fit import numpyro_sample

            return numpyro_sample(model, names, settings, tracker)
        return _pm_sample(model, names, settings, tracker)

    total = settings.chains * (settings.tune + settings.draws)
    idata = run_reporting(work, report, start, total)
    report(0.97, "computing diagnostics")
    diag = _diagnose(idata, settings, time.perf_counter() - start)
    if settings.sampler == LAPLACE and obs.paired and not fixed_alpha and not curvature:
        diag.warnings.append(SCHUR_NOTE.format(n=MARGINAL_MAX_OBS))
    fit = RankingFit(idata, diag, rd, settings, obs.categories, mode or None, key)
    if use_cache:
        try_cache_write(lambda: save(fit, fixed_alpha), diag.warnings)
    report(1.0, f"done in {diag.wall_s:.1f} s")
    return fit


def _pm_sample(model, names: list[str], settings: RankSettings, tracker: Tracker) -> az.InferenceData:
    import pymc as pm

    tracker.stage(0.03, f"compiling, then warm-up and sampling ({SAMPLERS[settings.sampler].name})")
    with model:
        idata = pm.sample(draws=settings.draws, tune=settings.tune, chains=settings.chains, random_seed=settings.seed,
                          nuts_sampler=settings.sampler, progressbar=False, compute_convergence_checks=False,
                          var_names=names)
    idata.posterior = idata.posterior[names]  # nutpie ignores var_names and returns the free variables too
    return idata


def _diagnose(idata: az.InferenceData, settings: RankSettings, wall_s: float) -> Diagnostics:
    """R-hat and ESS over the varying posterior variables (fixed ones, e.g. b = 0, are skipped)."""
    post = idata.posterior
    if settings.sampler == LAPLACE:
        return Diagnostics(LAPLACE, 1, post.sizes["draw"], float("nan"), float("nan"), float("nan"), 0, wall_s, [
            "MAP + Laplace: a Gaussian approximation at the posterior mode (independent draws, no R-hat); "
            "skewed posteriors (systems with few votes) are only roughly described: use a NUTS sampler to confirm."])
    post = post[[n for n in post.data_vars if float(post[n].std()) > 0]]
    n_chains, n_draws = post.sizes["chain"], post.sizes["draw"]
    rhat = float(az.rhat(post).to_array().max()) if n_chains > 1 else float("nan")
    ess_bulk = float(az.ess(post, method="bulk").to_array().min())
    ess_tail = float(az.ess(post, method="tail").to_array().min())
    div = int(idata.sample_stats["diverging"].sum()) if "sample_stats" in idata else 0
    warnings = []
    if not rhat <= 1.01 and n_chains > 1:
        warnings.append(f"R-hat up to {rhat:.3f} (> 1.01): chains disagree; run longer.")
    if div:
        warnings.append(f"{div} divergent transitions: the posterior may be biased.")
    return Diagnostics(settings.sampler, n_chains, n_draws, rhat, ess_bulk, ess_tail, div, wall_s, warnings)


class _Layout:
    """Where each free variable sits in the flat unconstrained vector: global indices ``G`` and a
    (J, m) table ``L`` of each prompt's own indices (:data:`lib.ranking.model.LOCAL`)."""

    def __init__(self, model) -> None:
        from lib.ranking.model import LOCAL

        start = model.initial_point()
        self.names = [v.name for v in model.value_vars]
        self.shapes = [np.shape(start[n]) for n in self.names]
        self.x0 = np.concatenate([np.ravel(start[n]) for n in self.names]).astype(np.float64)
        n_prompts = len(model.coords["prompt"])
        glob, local, offset = [], [], 0
        for name, shape in zip(self.names, self.shapes, strict=True):
            size = int(np.prod(shape))
            idx = offset + np.arange(size)
            if name in LOCAL and shape[:1] == (n_prompts,):  # shared thresholds are global
                local.append(idx.reshape(n_prompts, -1))
            else:
                glob.append(idx)
            offset += size
        self.G = np.concatenate(glob) if glob else np.zeros(0, dtype=int)
        self.L = np.hstack(local) if local else np.zeros((n_prompts, 0), dtype=int)

    def split(self, x):
        """The flat vector as the list of value arrays (works on JAX arrays)."""
        out, offset = [], 0
        for shape in self.shapes:
            size = int(np.prod(shape))
            out.append(x[offset:offset + size].reshape(shape))
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


def _block_hessian(hvp, x: np.ndarray, G: np.ndarray, L: np.ndarray) -> _Blocks:
    """Assemble the Hessian blocks at ``x`` from n_g + m Hessian-vector products.

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
    cols = np.concatenate([np.asarray(hvp(xj, jnp.asarray(probes[i:i + _HVP_BATCH])))
                           for i in range(0, len(probes), _HVP_BATCH)])[:n_probes]
    A = cols[:n_g, G]
    Bt = cols[:n_g][:, L].transpose(1, 2, 0)  # (J, m, n_g)
    D = cols[n_g:][:, L].transpose(1, 2, 0)  # (J, m, m)
    try:
        d_inv = np.linalg.inv((D + D.transpose(0, 2, 1)) / 2)
        W = d_inv @ Bt
        chol_s = np.linalg.cholesky((A + A.T) / 2 - np.einsum("jmg,jmh->gh", Bt, W))
    except np.linalg.LinAlgError as err:
        raise SettingsError("the Laplace approximation failed: the Hessian at the mode is not positive "
                            "definite; fit with a NUTS sampler") from err
    return _Blocks(Bt, d_inv, W, chol_s, G, L)


NO_LOCAL_MODE = ("the Laplace approximation failed: the prompt variables have no mode given the skills; fit "
                 "with a NUTS sampler")


def _marginal_mode(f, x: np.ndarray, G: np.ndarray, L: np.ndarray, *, curvature: bool = True,
                   inner_steps: int = 8) -> tuple[np.ndarray, np.ndarray | None]:
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
        The negative log posterior of the flat unconstrained vector (JAX).
    x : ndarray (n,)
        The joint mode (the start).
    G, L : ndarray
        Global indices (n_g,) and the (J, m) table of each prompt's indices (:class:`_Layout`).
    curvature : bool
        Also return F's Hessian (2 n_g gradients of F).

    Returns
    -------
    x : ndarray (n,)
        The marginal mode of the globals and the conditional mode of the prompt variables there.
    hessian : ndarray (n_g, n_g) or None
        Hessian of F at the mode (central differences of its gradient): the globals' precision;
        None without ``curvature``.
    """
    import jax
    import jax.numpy as jnp
    from scipy.optimize import minimize

    n, m = len(x), L.shape[1]
    probes = jnp.asarray(np.stack([np.isin(np.arange(n), L[:, r]).astype(float) for r in range(m)]))
    grad_f = jax.grad(f)

    def assemble(g, l_loc):
        return jnp.zeros(n, dtype=g.dtype).at[G].set(g).at[L].set(l_loc)

    def newton_step(g, l_loc):
        """One Newton step of every prompt's variables (J, m); also their Hessian blocks D (J, m, m)."""
        xx = assemble(g, l_loc)
        columns = jax.vmap(lambda v: jax.jvp(grad_f, (xx,), (v,))[1])(probes)  # (m, n)
        D = jnp.transpose(columns[:, L], (1, 2, 0))  # D[j, a, r] = d2f / dl_ja dl_jr
        return l_loc - jnp.linalg.solve(D, grad_f(xx)[L][..., None])[..., 0], D

    @jax.jit
    def inner(g, l_loc):
        return jax.lax.fori_loop(0, inner_steps, lambda _, l_: newton_step(g, l_)[0], l_loc)

    def marginal(g, l_loc):
        l_star = newton_step(g, jax.lax.stop_gradient(l_loc))[0]
        _, D = newton_step(g, l_star)
        return f(assemble(g, l_star)) + 0.5 * jnp.sum(jnp.linalg.slogdet(D)[1])

    value_and_grad = jax.jit(jax.value_and_grad(marginal))
    local = [jnp.asarray(x[L])]

    def cost(g):
        g = jnp.asarray(g)
        local[0] = inner(g, local[0])
        value, grad = value_and_grad(g, local[0])
        return float(value), np.asarray(grad, dtype=np.float64)

    result = minimize(cost, x[G], jac=True, method="L-BFGS-B", options={"maxiter": 2000, "gtol": 1e-6})
    g = jnp.asarray(result.x)
    l_hat = inner(g, local[0])
    out = np.asarray(assemble(g, l_hat), dtype=np.float64)
    if not np.isfinite(out).all():
        raise SettingsError(NO_LOCAL_MODE)
    if not curvature:
        return out, None

    def grad_near(point):  # the one Newton step from l*(g_hat) is exact to O(step^2) here: no inner loop
        return np.asarray(value_and_grad(jnp.asarray(point), l_hat)[1], dtype=np.float64)

    steps = 1e-4 * np.maximum(1.0, np.abs(result.x))
    hessian = np.column_stack([(grad_near(result.x + h * e) - grad_near(result.x - h * e)) / (2 * h)
                               for h, e in zip(steps, np.eye(len(G)), strict=True)])
    if not np.isfinite(hessian).all():
        raise SettingsError(NO_LOCAL_MODE)
    return out, (hessian + hessian.T) / 2


def laplace(model, names: list[str], settings: RankSettings, tracker: Tracker,
            mode: dict | None = None, marginal_curvature: bool = True) -> az.InferenceData:
    """MAP + Laplace fit of a ranking model (module docstring); ``settings.draws`` draws as one chain.

    ``mode``, when given, receives the posterior mode of the ``names`` variables. Paired data with
    prompt variables are fitted at the globals' marginal mode (:func:`_marginal_mode`), with the
    marginal's curvature as their precision when ``marginal_curvature``, else the Schur complement
    (:data:`MARGINAL_MAX_OBS`); other data at the joint mode.

    Raises
    ------
    SettingsError
        The Hessian at the mode is not positive definite (no Gaussian approximation exists there).
    """
    # Global variables cost one Hessian-vector product each (skills, thresholds, gamma, sigma_eta):
    # fine for hundreds of systems; pair deviations (K^2 / 2 of them) are refused in RankSettings.
    import jax
    import jax.numpy as jnp
    from pymc.sampling.jax import get_jaxified_graph, get_jaxified_logp
    from scipy.linalg import solve_triangular
    from scipy.optimize import minimize

    tracker.stage(0.02, "compiling")
    lay = _Layout(model)
    with COMPILE_LOCK:  # pytensor graph rewriting is not thread-safe
        neg_logp = get_jaxified_logp(model, negative_logp=False)  # False gives -logp (as numpyro wants)
        outputs = [v for v in model.unobserved_value_vars if v.name in names]
        to_params = get_jaxified_graph(inputs=model.value_vars, outputs=outputs)

    def f(x):
        return neg_logp(lay.split(x))

    value_and_grad = jax.jit(jax.value_and_grad(f))
    hvp = jax.jit(jax.vmap(lambda x, v: jax.jvp(jax.grad(f), (x,), (v,))[1], in_axes=(None, 0)))

    def cost(x):
        value, grad = value_and_grad(x)
        return float(value), np.asarray(grad, dtype=np.float64)

    tracker.stage(0.1, "finding the mode (L-BFGS)")
    result = minimize(cost, lay.x0, jac=True, method="L-BFGS-B",
                      options={"maxiter": 20000, "maxcor": 20, "ftol": 1e-8, "gtol": 1e-5})
    x, G, L = result.x, lay.G, lay.L
    # Ratings keep the joint mode: their prompt effects share the scale sigma_eta, and there the
    # marginal step failed (curvature not positive definite on HANNA); paired data have no such scale.
    if L.shape[1] and "sigma_eta" not in model.named_vars:
        tracker.stage(0.4, f"integrating out the prompt variables ({result.nit} L-BFGS iterations at the joint mode)")
        x, hessian = _marginal_mode(f, x, G, L, curvature=marginal_curvature)
        tracker.stage(0.7, "Hessian at the mode")
        blocks = _block_hessian(hvp, x, G, L)
        try:  # the curvature of the globals' marginal (else the Schur complement kept in blocks)
            if hessian is not None:
                blocks.chol_s = np.linalg.cholesky(hessian)
        except np.linalg.LinAlgError as err:
            raise SettingsError("the Laplace approximation failed: the marginal posterior of the skills has no "
                                "positive definite curvature at its mode; fit with a NUTS sampler") from err
    else:  # Newton steps with the block Hessian finish what L-BFGS, slow on thousands of weakly informed
        # prompt variables, leaves; the last Hessian (at a point within NEWTON_TOL of the mode) is kept.
        for step_number in range(1, NEWTON_STEPS + 1):
            tracker.stage(0.5, f"Hessian at the mode (L-BFGS {result.nit} iterations, Newton step {step_number})")
            blocks = _block_hessian(hvp, x, G, L)
            value, grad = cost(x)
            step = blocks.solve(-grad)
            if cost(x + step)[0] > value:
                break
            x = x + step
            if np.abs(step).max() < NEWTON_TOL:
                break
    d_inv, W, chol_s = blocks.d_inv, blocks.W, blocks.chol_s
    n_g, (n_prompts, m) = len(G), L.shape

    tracker.stage(0.8, "drawing from the Gaussian")
    rng = np.random.default_rng(settings.seed)
    chol_d_inv = np.linalg.cholesky(d_inv)
    params = jax.jit(jax.vmap(lambda flat: to_params(*lay.split(flat))))
    if mode is not None:
        mode.update({v.name: np.asarray(value)[0] for v, value in zip(outputs, params(jnp.asarray(x[None])),
                                                                      strict=True)})
    chunks = []
    for first in range(0, settings.draws, _DRAW_BATCH):
        size = min(_DRAW_BATCH, settings.draws - first)
        dg = solve_triangular(chol_s.T, rng.standard_normal((n_g, size)), lower=False).T  # (size, n_g)
        z = rng.standard_normal((size, n_prompts, m))
        draws = np.tile(x, (size, 1))
        draws[:, G] += dg
        draws[:, L] += np.einsum("jab,sjb->sja", chol_d_inv, z) - np.einsum("jmg,sg->sjm", W, dg)
        chunks.append([np.asarray(v) for v in params(jnp.asarray(draws))])
    values = {v.name: np.concatenate([c[i] for c in chunks])[None] for i, v in enumerate(outputs)}
    dims = {name: list(model.named_vars_to_dims.get(name, ())) for name in values}
    coords = {d: np.asarray(model.coords[d]) for ds in dims.values() for d in ds}
    return az.from_dict(posterior=values, coords=coords, dims=dims)
