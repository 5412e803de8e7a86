"""Fitting the ranking model: NUTS (the samplers of :data:`lib.irt.settings.SAMPLERS`) or MAP + Laplace.

MAP + Laplace (``sampler="laplace"``, an approximation): the mode of the log posterior (on the
unconstrained space, Jacobian included) by L-BFGS, polished by one Newton step, and draws from the
Gaussian whose precision is the negative Hessian there. Prompts couple only through the global
variables (skills and the optional tau, delta, gamma, sigma_eta, shared thresholds), so the
Hessian is a small dense global block A, one small block D_j per prompt and the cross terms B_j.
It is assembled from Hessian-vector products (one per global variable, plus one per prompt
variable probing all prompts at once) and never formed densely; the global marginal uses the
Schur complement ``S = A - sum_j B_j' D_j^-1 B_j`` and the prompt variables are drawn given the
globals (Rue & Held 2005, ch. 2).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import arviz as az
import numpy as np

from lib.errors import SettingsError
from lib.irt.fit import _COMPILE_LOCK, Diagnostics, Progress, _monotone, _run_reporting, _Tracker
from lib.irt.settings import SAMPLERS, gives_posterior, posterior_samplers
from lib.ranking.data import RankingData

LAPLACE = "laplace"
LAPLACE_HELP = "MAP + Laplace: a Gaussian approximation of the posterior at its mode (fast on large data)"
_HVP_BATCH = 8
"""Hessian-vector products computed together (memory grows with it)."""
_DRAW_BATCH = 100
NEWTON_STEPS = 4
NEWTON_TOL = 1e-6
"""At most this many Newton steps polish the L-BFGS mode; they stop once no coordinate moves this much."""


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
    chains, draws, tune, seed : int
        NUTS sizes; Laplace draws ``draws`` independent draws as one chain.
    """

    likelihood: str | None = None
    sampler: str = "numpyro"
    baseline: str | None = None
    intransitivity: bool = False
    position_bias: bool = False
    chains: int = 4
    draws: int = 1000
    tune: int = 500
    seed: int = 0

    def validate(self) -> None:
        """Raises SettingsError for an unknown or non-posterior sampler, Laplace with intransitivity,
        or non-positive sizes."""
        if self.sampler != LAPLACE and not gives_posterior(self.sampler):
            raise SettingsError(f"unknown sampler '{self.sampler}' for a leaderboard; choose "
                                f"{posterior_samplers()} or {LAPLACE}")
        if self.sampler == LAPLACE and self.intransitivity:
            raise SettingsError("intransitivity needs a NUTS sampler: a Gaussian at the mode cannot describe the "
                                "scale tau near 0 (it reports tau far from 0 when there is no intransitivity)")
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
    mode of the same variables (Laplace fits only; None for NUTS).
    """

    idata: az.InferenceData
    diagnostics: Diagnostics
    data: RankingData
    settings: RankSettings
    categories: list[str] = field(default_factory=list)
    mode: dict[str, np.ndarray] | None = None

    def skill_draws(self) -> np.ndarray:
        """Skill draws, shape (S, K) float64 (S = chains x draws), columns in ``data.systems`` order."""
        skill = self.idata.posterior["skill"].sel(system=self.data.systems)
        return skill.stack(sample=("chain", "draw")).transpose("sample", "system").to_numpy().astype(np.float64)


def fit_ranking(rd: RankingData, settings: RankSettings | None = None, *, progress: Progress | None = None,
                fixed_alpha: bool = False) -> RankingFit:
    """Fit the ranking model (:mod:`lib.ranking.model`) to the data of one likelihood.

    Parameters
    ----------
    rd : RankingData
    settings : RankSettings, optional
        Its likelihood must be None or ``rd.likelihood``.
    progress : callable, optional
        ``progress(fraction, message)``, called in the caller's thread with non-decreasing fractions.
    fixed_alpha : bool
        alpha_j = 1 for every prompt (Bradley-Terry for tie-free votes; for checks).

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
    report = _monotone(progress or (lambda fraction, message: None))
    obs = observations(rd)
    if settings.position_bias and not (obs.side != 0).any():
        raise SettingsError("position bias needs to know which system was shown first (a position column)")
    mode: dict[str, np.ndarray] = {}

    def work(tracker: _Tracker) -> az.InferenceData:
        tracker.stage(0.01, "building the model")
        model = build_ranking(obs, baseline=settings.baseline, intransitivity=settings.intransitivity,
                              position_bias=settings.position_bias, fixed_alpha=fixed_alpha)
        names = posterior_names(model)
        if settings.sampler == LAPLACE:
            return laplace(model, names, settings, tracker, mode=mode)
        if settings.sampler == "numpyro":
            from lib.irt.fit import numpyro_sample

            return numpyro_sample(model, names, settings, tracker)
        return _pm_sample(model, names, settings, tracker)

    total = settings.chains * (settings.tune + settings.draws)
    idata = _run_reporting(work, report, start, total)
    report(0.97, "computing diagnostics")
    diag = _diagnose(idata, settings, time.perf_counter() - start)
    report(1.0, f"done in {diag.wall_s:.1f} s")
    return RankingFit(idata, diag, rd, settings, obs.categories, mode or None)


def _pm_sample(model, names: list[str], settings: RankSettings, tracker: _Tracker) -> az.InferenceData:
    import pymc as pm

    tracker.stage(0.03, f"compiling, then warm-up and sampling ({SAMPLERS[settings.sampler].name})")
    with model:
        return pm.sample(draws=settings.draws, tune=settings.tune, chains=settings.chains, random_seed=settings.seed,
                         nuts_sampler=settings.sampler, progressbar=False, compute_convergence_checks=False,
                         var_names=names)


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


def laplace(model, names: list[str], settings: RankSettings, tracker: _Tracker,
            mode: dict | None = None) -> az.InferenceData:
    """MAP + Laplace fit of a ranking model (module docstring); ``settings.draws`` draws as one chain.

    ``mode``, when given, receives the posterior mode of the ``names`` variables.

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
    with _COMPILE_LOCK:  # pytensor graph rewriting is not thread-safe
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
    # Newton steps with the block Hessian finish what L-BFGS, slow on thousands of weakly informed
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
