"""What a leaderboard will cost, estimated from the sizes of the data before anything is computed.

A leaderboard's memory and time grow with the systems K, the prompts J, the judgments N and the
draws S (:func:`estimate_cost`). The estimate is printed before the fit, and a fit that would pass
a stated limit (:data:`MAX_MEMORY_GB`, :data:`MAX_MINUTES`) is refused at once with the option that
lifts it (:func:`check_budget`), instead of running for minutes and dying allocating memory.

The constants are rough machine figures (an idle 2-core machine, ``bench/bench_rank_cost.py``
prints estimate against measurement): the estimate is meant to be right within a factor of about 2.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from lib.errors import TooLargeError
from lib.inference.settings import is_mcmc

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
_SECONDS_COMPILE = 10.0
_SECONDS_PER_OBS_LAPLACE = 1.2e-4  # L-BFGS and the prompts' marginal, per judgment (about 150 gradients)
_SECONDS_PER_OBS_GLOBAL = 3e-8  # one Hessian-vector product column per judgment and global variable
_SECONDS_PER_GRADIENT = 2e-3  # fixed cost of one JAX gradient call
_SECONDS_PER_OBS_LEAPFROG = 6e-8  # NUTS: one gradient per judgment, about 30 leapfrog steps per draw
_LEAPFROG_STEPS = 30  # per draw for about 200 variables; NUTS's trajectories grow as d^(1/4) (Beskos et al. 2013)
_MAX_LEAPFROG = 1023  # numpyro's and PyMC's maximum tree depth of 10
_SECONDS_FLOP = 1e-10  # dense linear algebra (Cholesky, inverses), per K^3
_SECONDS_SCHUR = 2e-9  # the Laplace fit's Schur complement sum_j B_j' D_j^-1 B_j (einsum), per J m^2 K^2
_SECONDS_EIGH = 1.5e-9  # a symmetric eigendecomposition, per K^3 (LAPACK dsyevr: 2.4 s for K = 1,000 on one core)
_TRANSFORM_SQUARES = 8  # (K x K) arrays of the prompt-clustered draws: Sigma, its target, two eigh and their roots
_CHECK_SQUARES = 2  # (K x K) arrays of the prompt-clustering check: G_c - G_n and LAPACK's eigenvectors
CLUSTER_CHECK = "the prompt-clustering check (systems x systems)"
"""The part of the memory of the check whether votes are clustered by prompt (:mod:`lib.ranking.clusters`):
two (K, K) arrays, the (prompts, K) scores and the positive part's factor; the prompt-clustered intervals
add eight (K, K) arrays (measured: 2.3-2.6 and 7.7-8.3 (K, K) arrays in all for 600-1,200 systems)."""


@dataclass
class CostEstimate:
    """The estimated peak memory and wall time of one leaderboard fit.

    Attributes
    ----------
    memory_gb : float
        Peak resident memory (GB).
    seconds : float
        Wall time of the fit and its read-outs (s).
    parts : dict
        What the memory is made of, name -> GB (the largest is named when a fit is refused).
    """

    memory_gb: float
    seconds: float
    parts: dict[str, float] = field(default_factory=dict)

    def __str__(self) -> str:
        """``about 40 s and 1.2 GB of memory`` (minutes from 2 minutes on)."""
        minutes = self.seconds / 60
        when = f"{self.seconds:.0f} s" if minutes < 2 else f"{minutes:.0f} min"
        return f"about {when} and {self.memory_gb:.1f} GB of memory"

    @property
    def largest(self) -> str:
        """The name of the largest part of the memory.

        Raises
        ------
        ValueError
            ``parts`` is empty.
        """
        return max(self.parts, key=self.parts.__getitem__)


def estimate_cost(
    n_systems: int,
    n_prompts: int,
    n_obs: int,
    *,
    sampler: str,
    draws: int,
    chains: int = 1,
    tune: int = 0,
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
        Draws (Laplace: in all; NUTS: per chain), chains and tuning iterations.
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
    """
    k, j, n = int(n_systems), int(n_prompts), int(n_obs)
    mcmc = is_mcmc(sampler)  # else Laplace: independent draws from one mode
    n_draws = draws * (chains if mcmc else 1)
    sizes = np.asarray(component_sizes if component_sizes is not None else [k], dtype=float)
    n_vars = k + j * locals_per_prompt
    parts = {
        "program": _BASE_BYTES / _GB,
        "posterior draws": _COPIES * n_draws * (k + j * locals_per_prompt) * 8 / _GB,
        "ranks per draw": _COPIES * n_draws * k * 8 / _GB,
        "Bradley–Terry": 4 * float((sizes**2).sum()) * 8 / _GB,
    }
    if not mcmc:
        parts["the Hessian at the mode (systems x variables)"] = _DENSE_COPIES * k * n_vars * 8 / _GB
        parts["the judgments' gradients"] = _BYTES_PER_OBS_LAPLACE * n / _GB
        seconds = (
            _SECONDS_COMPILE
            + _SECONDS_PER_OBS_LAPLACE * n
            + _SECONDS_PER_OBS_GLOBAL * n * k
            + (2 * k * (_SECONDS_PER_GRADIENT + 4 * _SECONDS_PER_OBS_GLOBAL * n) if n <= 20_000 else 0.0)
            + _SECONDS_SCHUR * j * locals_per_prompt**2 * float(k) ** 2
        )
    else:
        parts["the judgments' gradients"] = _BYTES_PER_OBS_NUTS * n * chains / _GB
        steps = min(_MAX_LEAPFROG, _LEAPFROG_STEPS * (n_vars / 200) ** 0.25)
        seconds = (
            _SECONDS_COMPILE
            + chains * (tune + draws) * steps * (_SECONDS_PER_GRADIENT / 10 + _SECONDS_PER_OBS_LEAPFROG * n) / 2
        )  # chains share two cores
    pairs = min(win_top, k) ** 2 / 2
    parts["win matrix"] = 8 * pairs * 3 / _GB
    if n_next:
        parts["next batch"] = 3 * n_draws * min(k * (k - 1) / 2, 5_000) * 8 / _GB
    if cluster_prompts:  # G_c - G_n, the per-prompt scores, the positive eigenvectors (lib.ranking.clusters)
        squares = _CHECK_SQUARES + _TRANSFORM_SQUARES * clustered_draws
        parts[CLUSTER_CHECK] = (squares * k * k + 2 * cluster_prompts * k) * 8 / _GB
        seconds += _SECONDS_EIGH * k**3 * (1 + 2 * clustered_draws) + _SECONDS_FLOP * cluster_prompts * k**2
    seconds += _SECONDS_FLOP * (k**3 + float((sizes**3).sum())) + 1e-8 * n_draws * k * np.log2(max(k, 2))
    return CostEstimate(float(sum(parts.values())), float(seconds), parts)


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
