"""What a leaderboard will cost, estimated from the sizes of the data before anything is computed.

A leaderboard's memory and time grow with the systems K, the prompts J, the judgments N and the
draws S (:func:`estimate_cost`). The estimate is printed before the fit, and a fit that would pass
a stated limit (:data:`MAX_MEMORY_GB`, :data:`MAX_MINUTES`) is refused at once with the option that
lifts it (:func:`check_budget`), instead of running for minutes and dying allocating memory.

The estimate is made per phase of the fit (:data:`lib.inference.timings.PHASES`) from constants
measured on an idle 2-core machine (``bench/bench_rank_cost.py`` prints estimate against measurement,
``tests/ranking/test_budget.py`` checks them on the recorded runs): it is meant to be right within a factor
of 2 there, and it says that it assumes an idle machine. A busy machine is slower: as phases finish, the
time to go is revised at the pace they ran (:meth:`CostEstimate.remaining`, :func:`revising`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from lib.errors import TooLargeError
from lib.inference.settings import is_mcmc
from lib.inference.timings import PHASES, PhaseTimer
from lib.ranking.likelihoods import likelihood_spec

MAX_MEMORY_GB = 8.0
"""Default memory limit of one leaderboard fit (GB); ``--max-memory`` on the command line."""
MAX_MINUTES = 10.0
"""Default time limit of one leaderboard fit (minutes, estimated); ``--max-minutes`` on the command line."""
WIN_MATRIX_TOP = 100
"""Default number of systems (the top of the leaderboard) whose pairs the win matrix holds: 4,950 pairs;
``--win-matrix-top`` on the command line."""

_GB = 1024.0**3
_BASE_BYTES = 0.6 * _GB  # Python, JAX, PyMC and arviz loaded
_BYTES_PER_OBS_LAPLACE = 1_600.0  # JAX's working set of the batched Hessian-vector products, per judgment
_BYTES_PER_OBS_NUTS = 400.0
_COPIES = 4  # float64 copies of the draws alive at once (posterior, stacking, arviz, quantiles)
_DENSE_COPIES = 5  # (globals x all variables) arrays of the block Hessian: probes, columns, A, B', W

# Seconds of each phase on an idle 2-core machine, from the phases measured by bench/bench_rank_cost.py on a
# fresh cache (JAX compiles every program: a user's first run; a second run of the same shapes is faster).
# The runs they were calibrated on are tests/ranking/rank_phase_times.json (re-recorded 2026-11-28 at load 1.5-3.6,
# idle-equivalent: after the pairwise reader's str columns, the float32 alpha draws and the clustering's bincounts).
# checks: 0.01-0.04 s on the bundled data; cache write: 0.14-0.24 s on every case (480 to 2,000,000 judgments);
# diagnostics: 0.00-0.06 s without prompt clustering
_SECONDS_FIXED = {"checks": 0.01, "cache read": 0.01, "model build": 0.1, "diagnostics": 0.01, "cache write": 0.18}
_SECONDS_PER_OBS_CHECKS = 4.5e-7  # the settings and data-design checks, per judgment: 0.22 s on 500,000, 0.88 on 2M
_SECONDS_PER_OBS_MODEL_BUILD = 2e-7  # the fit's arrays of the judgments: 0.08-0.13 s on 500,000 votes, 0.42 on 2M
# the prompt-clustering check and intervals, per prompt: 0.05-0.33 s on 20,000 prompts (median 0.10; its per-prompt
# sums are two bincounts), their K^3 and J K^2 parts counted apart
_SECONDS_PER_PROMPT_DIAGNOSTICS = 5e-6
_SECONDS_PER_OBS_BRADLEY_TERRY = 2.5e-7  # the baseline's votes counted by pair and outcome: 0.12-0.14 s on 500,000
_SECONDS_COMPILE = 1.1  # the model translated to JAX
# per likelihood (its spec's ``seconds``): the mode's programs compiled at first call, L-BFGS and the prompts'
# marginal per judgment, the Hessian-vector products compiled
_SECONDS_PER_OBS_GLOBAL = 3e-8  # one Hessian-vector product column per judgment and global variable
_SECONDS_PER_GRADIENT = 2e-3  # fixed cost of one JAX gradient call
_SECONDS_JIT_DRAWS = 0.7  # the draws' program compiled
# the quadrature fit's draws: no program compiled, their InferenceData built (0.24-0.29 s for 1,000 draws of up to
# 2,050 variables)
_SECONDS_QUADRATURE_DRAWS = 0.25
_SECONDS_PER_DRAW_VARIABLE = 6e-8  # the full model's: a Gaussian draw turned into the model's parameters
# the quadrature fit's, per draw and variable: alpha_j's float32 draws in two threads (marginal.lognormal_draws),
# 0.42-0.62 s for 1,000 draws of 20,000 prompts
_SECONDS_PER_QUADRATURE_DRAW_VARIABLE = 1e-8
_SECONDS_NUTS_COMPILE = 6.0
_SECONDS_JOINT_MODE = 2.0  # numpyro's warm start at the joint mode (to a target ESS)
_SECONDS_PER_LEAPFROG = 1e-4  # fixed cost of one leapfrog step in numpyro's compiled loop
_SECONDS_PER_OBS_LEAPFROG = 6e-8  # NUTS: one gradient per judgment, about 30 leapfrog steps per draw
_LEAPFROG_STEPS = 30  # per draw for about 200 variables; NUTS's trajectories grow as d^(1/4) (Beskos et al. 2013)
_MAX_LEAPFROG = 1023  # numpyro's and PyMC's maximum tree depth of 10
_ESS_PER_DRAW = 0.5  # NUTS's effective draws per draw, for the draws a target ESS takes
_SECONDS_FLOP = 1e-10  # dense linear algebra (Cholesky, inverses), per K^3
_SECONDS_SCHUR = 2e-9  # the Laplace fit's Schur complement sum_j B_j' D_j^-1 B_j (einsum), per J m^2 K^2
_SECONDS_PER_SORT = 1e-8  # ranks per draw, per system and log2(systems)
_SECONDS_EIGH = 1.5e-9  # a symmetric eigendecomposition, per K^3 (LAPACK dsyevr: 2.4 s for K = 1,000 on one core)
_TRANSFORM_SQUARES = 8  # (K x K) arrays of the prompt-clustered draws: Sigma, its target, two eigh and their roots
_CHECK_SQUARES = 2  # (K x K) arrays of the prompt-clustering check: G_c - G_n and LAPACK's eigenvectors
CLUSTER_CHECK = "the prompt-clustering check (systems x systems)"
"""The part of the memory of the check whether votes are clustered by prompt (:mod:`lib.ranking.clusters`):
two (K, K) arrays, the (prompts, K) scores and the positive part's factor; the prompt-clustered intervals
add eight (K, K) arrays (measured: 2.3-2.6 and 7.7-8.3 (K, K) arrays in all for 600-1,200 systems)."""

PACE_PRIOR_S = 1.0
"""Seconds of idle-machine estimate the revised pace (:meth:`CostEstimate.remaining`) is shrunk towards 1
with: the first phases are short, and their pace alone (a 0.05 s phase taking 0.1 s) would swing the
time to go."""


@dataclass
class CostEstimate:
    """The estimated peak memory and wall time of one leaderboard fit, on an idle machine.

    Attributes
    ----------
    memory_gb : float
        Peak resident memory (GB).
    phases : dict
        Wall seconds of each phase of the fit and its read-outs on an idle 2-core machine, phase name
        (:data:`lib.inference.timings.PHASES`) -> s, in the order they run.
    parts : dict
        What the memory is made of, name -> GB (the largest is named when a fit is refused).
    sizes : dict
        The sizes and settings the estimate was made from (:func:`estimate_cost`'s arguments).
    """

    memory_gb: float
    phases: dict[str, float]
    parts: dict[str, float] = field(default_factory=dict)
    sizes: dict[str, object] = field(default_factory=dict)

    @property
    def seconds(self) -> float:
        """Wall time of the fit and its read-outs on an idle machine (s): the phases together."""
        return float(sum(self.phases.values()))

    def __str__(self) -> str:
        """``about 40 s and 1.2 GB of memory on an idle machine``."""
        return f"about {duration(self.seconds)} and {self.memory_gb:.1f} GB of memory on an idle machine"

    @property
    def largest(self) -> str:
        """The name of the largest part of the memory.

        Raises
        ------
        ValueError
            ``parts`` is empty.
        """
        return max(self.parts, key=self.parts.__getitem__)

    def remaining(self, timings: Mapping[str, float]) -> float:
        """Seconds still to go once the phases in ``timings`` have run, at the pace they ran.

        Phases run in the order of :data:`lib.inference.timings.PHASES`; the last one measured marks how
        far the fit has come, and may not be over (the Laplace fit's search runs in two parts, both
        "optimise"). The pace is the measured seconds of the phases before it over their estimate (above 1
        on a busy or slower machine), the last one's too once it has taken longer than its estimate, shrunk
        towards 1 by :data:`PACE_PRIOR_S`; still to go are the estimated phases after it and what its own
        estimate leaves, both at that pace.

        Parameters
        ----------
        timings : mapping
            Phase name -> measured seconds (``PhaseTimer.seconds`` so far; unknown names are ignored).

        Returns
        -------
        float
            Seconds (the whole estimate when no phase has run yet).
        """
        order = [name for name in PHASES if name in self.phases]
        ran = [order.index(name) for name in timings if name in self.phases]
        if not ran:
            return self.seconds
        last = order[max(ran)]
        paced = order[: max(ran) + (timings[last] >= self.phases[last])]
        measured = sum(timings.get(name, 0.0) for name in paced)
        pace = (measured + PACE_PRIOR_S) / (sum(self.phases[name] for name in paced) + PACE_PRIOR_S)
        current = max(0.0, pace * self.phases[last] - timings[last])
        return current + pace * sum(self.phases[name] for name in order[max(ran) + 1 :])

    def as_json(self) -> dict:
        """The estimate for ``diagnostics.json``: ``seconds``, ``memory_gb``, ``phases``, ``sizes``, ``assumes``."""
        return {
            "seconds": self.seconds,
            "memory_gb": self.memory_gb,
            "phases": self.phases,
            "sizes": self.sizes,
            "assumes": "an idle 2-core machine",
        }


def duration(seconds: float) -> str:
    """``4.2 s``, ``40 s`` or ``12 min``: one decimal below 10 s, whole minutes from 2 minutes on."""
    if seconds < 10:
        return f"{seconds:.1f} s"
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min"


def revising(progress: Callable[[float, str], None], cost: CostEstimate, timer: PhaseTimer):
    """``progress`` with the time still to go added to each message of the fit, revised as its phases
    finish (:meth:`CostEstimate.remaining` of ``timer``'s phases so far).

    Parameters
    ----------
    progress : callable
        ``progress(fraction, message)``.
    cost : CostEstimate
        The estimate before the fit.
    timer : PhaseTimer
        The fit's timer (written by the sampler's threads; read here through :meth:`PhaseTimer.snapshot`).

    Returns
    -------
    callable
        ``progress(fraction, message)``; once done (fraction 1) the message is passed on as it is.
    """

    def report(fraction: float, message: str) -> None:
        left = cost.remaining(timer.snapshot())
        progress(fraction, message if fraction >= 1 else f"{message} · about {duration(left)} to go")

    return report


def estimate_cost(
    n_systems: int,
    n_prompts: int,
    n_obs: int,
    *,
    sampler: str,
    draws: int,
    chains: int = 1,
    tune: int = 0,
    target_ess: int | None = None,
    likelihood: str = "votes",
    locals_per_prompt: int = 1,
    component_sizes=None,
    n_next: int = 0,
    win_top: int = WIN_MATRIX_TOP,
    cluster_prompts: int = 0,
    clustered_draws: bool = False,
) -> CostEstimate:
    """Peak memory and wall time of a leaderboard fit and its read-outs, from the sizes alone.

    Parameters
    ----------
    n_systems, n_prompts, n_obs : int
        K systems, J prompts and N judgments (votes, cells or scores) the likelihood explains.
    sampler : str
        A name of the sampler registry: Laplace, or a NUTS sampler (:func:`lib.inference.settings.is_mcmc`).
    draws, chains, tune : int
        Draws (Laplace: in all; NUTS: per chain, the most with ``target_ess``), chains and tuning iterations.
    target_ess : int, optional
        numpyro samples to this ESS (warm-started at the joint mode); about ``target_ess / 0.5`` draws.
    likelihood : str
        ``votes``, ``cells`` or ``ratings`` (:data:`lib.ranking.likelihoods.LIKELIHOODS`): their programs take
        different times to compile.
    locals_per_prompt : int
        The prompt's own free variables (its discrimination, and for net-rating cells its thresholds).
    component_sizes : sequence of int, optional
        Systems per component of the comparison graph (the Bradley–Terry baseline is dense in each).
    n_next : int
        Size of the next batch (0: none).
    win_top : int
        Systems of the win matrix.
    cluster_prompts : int
        Prompts of the check whether votes are clustered by prompt (0: no check; the ratings likelihood has none).
    clustered_draws : bool
        The check also moves the draws to the prompt-clustered covariance (``RankSettings.cluster_prompts``).

    Returns
    -------
    CostEstimate
        Its ``phases`` are those the fit times (:data:`lib.inference.timings.PHASES`), on an idle
        2-core machine with an empty compilation cache (``bench/bench_rank_cost.py``).
    """
    k, j, n = int(n_systems), int(n_prompts), int(n_obs)
    mcmc = is_mcmc(sampler)  # else Laplace: independent draws from one mode
    n_draws = draws * (chains if mcmc else 1)
    sizes = np.asarray(component_sizes if component_sizes is not None else [k], dtype=float)
    n_vars = k + j * locals_per_prompt
    parts = {
        "program": _BASE_BYTES / _GB,
        "posterior draws": _COPIES * n_draws * n_vars * 8 / _GB,
        "ranks per draw": _COPIES * n_draws * k * 8 / _GB,
        "Bradley–Terry": 4 * float((sizes**2).sum()) * 8 / _GB,
    }
    phases = {
        "checks": _SECONDS_FIXED["checks"] + _SECONDS_PER_OBS_CHECKS * n,
        "cache read": _SECONDS_FIXED["cache read"],
        "model build": _SECONDS_FIXED["model build"] + _SECONDS_PER_OBS_MODEL_BUILD * n,
    }
    if not mcmc:
        parts["the Hessian at the mode (systems x variables)"] = _DENSE_COPIES * k * n_vars * 8 / _GB
        parts["the judgments' gradients"] = _BYTES_PER_OBS_LAPLACE * n / _GB
        spec = likelihood_spec(likelihood)
        jit_optimise, per_obs_optimise, jit_hessian = spec.seconds
        if spec.laplace:  # its own fit (the votes' or the ratings' quadrature): passes over the observations
            from lib.ranking.marginal import NODES

            # each pass's exact Hessian: the Gram matrix of the prompts' gradients at the nodes (NODES a dimension,
            # a dimension a local variable), its Cholesky; the search takes about 4 passes (3 with the nodes placed
            # at the warm start, 1 after placing them again at the mode), the Hessian at the mode 1
            curvature = _SECONDS_FLOP * (j * NODES**locals_per_prompt * float(k) ** 2 + float(k) ** 3)
            phases |= {
                "compile": jit_optimise,
                "optimise": per_obs_optimise * n + 4 * curvature,
                "Hessian": jit_hessian * n + curvature,
            }
        else:
            phases["compile"] = _SECONDS_COMPILE
            phases["optimise"] = jit_optimise + per_obs_optimise * n
            phases["Hessian"] = (
                jit_hessian
                + _SECONDS_PER_OBS_GLOBAL * n * k
                + (2 * k * (_SECONDS_PER_GRADIENT + 4 * _SECONDS_PER_OBS_GLOBAL * n) if n <= 20_000 else 0.0)
                + _SECONDS_SCHUR * j * locals_per_prompt**2 * float(k) ** 2
            )
        if spec.laplace:
            phases["draws"] = _SECONDS_QUADRATURE_DRAWS + _SECONDS_PER_QUADRATURE_DRAW_VARIABLE * n_draws * n_vars
        else:
            phases["draws"] = _SECONDS_JIT_DRAWS + _SECONDS_PER_DRAW_VARIABLE * n_draws * n_vars
    else:
        parts["the judgments' gradients"] = _BYTES_PER_OBS_NUTS * n * chains / _GB
        steps = min(_MAX_LEAPFROG, _LEAPFROG_STEPS * (n_vars / 200) ** 0.25)
        per_iteration = chains * steps * (_SECONDS_PER_LEAPFROG + _SECONDS_PER_OBS_LEAPFROG * n) / 2  # 2 cores
        sampled = draws if target_ess is None else min(draws, target_ess / _ESS_PER_DRAW / chains)
        if sampler == "numpyro":
            phases |= {"optimise": _SECONDS_JOINT_MODE} if target_ess is not None else {}
            phases |= {
                "compile": _SECONDS_NUTS_COMPILE,
                "warm-up": tune * per_iteration,
                "sampling": sampled * per_iteration,
            }
        else:  # PyMC's and nutpie's NUTS report no phases (their figures are not calibrated: numpyro's are used)
            phases["compile, warm-up and sampling"] = _SECONDS_NUTS_COMPILE + (tune + sampled) * per_iteration
    phases["diagnostics"] = _SECONDS_FIXED["diagnostics"] + _SECONDS_PER_PROMPT_DIAGNOSTICS * j
    phases["read-outs"] = _SECONDS_FLOP * k**3 + _SECONDS_PER_SORT * n_draws * k * np.log2(max(k, 2))
    phases["Bradley–Terry baseline"] = _SECONDS_PER_OBS_BRADLEY_TERRY * n + _SECONDS_FLOP * float((sizes**3).sum())
    phases["cache write"] = _SECONDS_FIXED["cache write"]
    pairs = min(win_top, k) ** 2 / 2
    parts["win matrix"] = 8 * pairs * 3 / _GB
    if n_next:
        parts["next batch"] = 3 * n_draws * min(k * (k - 1) / 2, 5_000) * 8 / _GB
    if cluster_prompts:  # G_c - G_n, the per-prompt scores, the positive eigenvectors (lib.ranking.clusters)
        squares = _CHECK_SQUARES + _TRANSFORM_SQUARES * clustered_draws
        parts[CLUSTER_CHECK] = (squares * k * k + 2 * cluster_prompts * k) * 8 / _GB
        phases["diagnostics"] += (
            _SECONDS_EIGH * k**3 * (1 + 2 * clustered_draws) + _SECONDS_FLOP * cluster_prompts * k**2
        )
    given = {
        "n_systems": k,
        "n_prompts": j,
        "n_obs": n,
        "sampler": sampler,
        "draws": draws,
        "chains": chains,
        "tune": tune,
        "target_ess": target_ess,
        "likelihood": likelihood,
        "locals_per_prompt": locals_per_prompt,
        "component_sizes": [int(x) for x in sizes],
        "n_next": n_next,
        "win_top": win_top,
        "cluster_prompts": cluster_prompts,
        "clustered_draws": clustered_draws,
    }
    ordered = {name: float(phases[name]) for name in PHASES if name in phases}
    return CostEstimate(float(sum(parts.values())), ordered, parts, given)


def within(cost: CostEstimate, max_memory_gb: float = MAX_MEMORY_GB, max_minutes: float = MAX_MINUTES) -> bool:
    """Whether the estimate keeps to both limits (:func:`check_budget` refuses it otherwise)."""
    return cost.memory_gb <= max_memory_gb and cost.seconds <= 60 * max_minutes


def check_budget(
    cost: CostEstimate,
    max_memory_gb: float = MAX_MEMORY_GB,
    max_minutes: float = MAX_MINUTES,
    *,
    where: str = "--max-memory GB / --max-minutes M",
) -> None:
    """Refuse a fit whose estimate passes a limit, naming the limit, the largest part and the option.

    Parameters
    ----------
    cost : CostEstimate
    max_memory_gb, max_minutes : float
        The limits.
    where : str
        How the user lifts the limits (the command line's options).

    Raises
    ------
    lib.errors.TooLargeError
        The estimated memory or time passes its limit.
    """
    memory_option, time_option = ([*where.split(" / "), where])[:2]
    if cost.memory_gb > max_memory_gb:
        raise TooLargeError(
            f"this leaderboard would need {cost}, above the memory limit of {max_memory_gb:g} GB (the largest part: "
            f"{cost.largest}, {cost.parts[cost.largest]:.1f} GB). Raise the limit with {memory_option} if the "
            "machine has the memory, or rank fewer systems or judgments (e.g. --filter)"
        )
    if cost.seconds > 60 * max_minutes:
        raise TooLargeError(
            f"this leaderboard would take {cost}, above the time limit of {max_minutes:g} minutes. Raise the limit "
            f"with {time_option}, use --sampler laplace, or rank fewer systems or judgments (e.g. --filter)"
        )
