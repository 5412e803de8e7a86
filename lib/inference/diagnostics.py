"""Convergence diagnostics of a fit, for every model and sampler, and their JSON.

Markov chains (:func:`lib.inference.settings.is_mcmc`) are checked by
:func:`lib.inference.convergence.check_convergence` (R-hat, bulk and tail ESS, stuck chains, divergences); a
point or independent draws have nothing to check and carry their sampler's note instead. The read-outs of
a fit that did not converge are withheld (:func:`withhold`).
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import arviz as az
import numpy as np
import pandas as pd

from lib.inference.chain_stats import ChainStats, stacked_columns
from lib.inference.convergence import check_convergence
from lib.inference.settings import SAMPLERS, is_mcmc

NOT_CONVERGED = "Not converged"
"""Start of every warning of a failed convergence check (pages show those as errors)."""


@dataclass
class Diagnostics:
    """Convergence diagnostics of a fit (R-hat and ESS from arviz; NaN without Markov chains).

    ``wall_s``: seconds from the call of the fit to its result (model building and compilation
    included). ``converged``: whether every check of :func:`lib.inference.convergence.check_convergence`
    passed (None without Markov chains to check); when False, ``warnings`` starts with the failed
    checks. ``prior_dominated``: ids of the parameters whose prior-to-posterior contraction is
    low (the GRM, :mod:`lib.irt.contraction`), ``n_prior_dominated`` their count.

    ``timings``: seconds per phase of the fit (:data:`lib.inference.timings.PHASES`), and of the
    command or page around it (read, read-outs, Bradley–Terry baseline); never overlapping, so they
    sum to at most the wall time of the whole. A fit read from the cache has the original fit's.
    ``target_ess``: the ESS sampled to (None: a fixed number of draws); ``stopped``: why sampling
    stopped, ``"target"`` (every reported parameter's bulk and tail ESS reached it) or ``"ceiling"``
    (the draws ran out first), None without a target.
    """

    sampler: str
    chains: int
    draws: int
    rhat_max: float
    ess_bulk_min: float
    ess_tail_min: float
    divergences: int
    wall_s: float
    converged: bool | None
    warnings: list[str] = field(default_factory=list)
    n_prior_dominated: int = 0
    prior_dominated: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    target_ess: int | None = None
    stopped: str | None = None


def diagnose(
    idata: az.InferenceData,
    sampler: str,
    wall_s: float,
    names: list[str],
    drop: dict[str, list] | None = None,
    stats: ChainStats | None = None,
) -> Diagnostics:
    """Diagnostics of a fit's posterior.

    Parameters
    ----------
    idata : arviz.InferenceData
        ``posterior`` (chain, draw, ...); ``sample_stats.diverging`` when the sampler records it.
    sampler : str
        The sampler that drew it (a name of :data:`lib.inference.settings.SAMPLERS`).
    wall_s : float
        Seconds the fit took.
    names : list of str
        The variables checked (leave out those constant by construction).
    drop : dict, optional
        Coordinates left out of the checks, dim -> labels (e.g. a baseline system's skill, fixed at 0).
    stats : ChainStats, optional
        R-hat and ESS of every element of the posterior's variables, laid out as
        :func:`lib.inference.chain_stats.stacked` lays them out: the sampler's last check of these draws
        (:attr:`lib.inference.samplers.Draws.stats`), whose checked elements are read instead of computed
        again. None: computed.

    Returns
    -------
    Diagnostics
        Without Markov chains: NaN R-hat and ESS, ``converged`` None, the sampler's note as warning.
        Else each failed check is a warning starting with :data:`NOT_CONVERGED`; ``target_ess`` and
        ``stopped`` come from the posterior's attributes of the same names (a fit sampled to a target).
    """
    post = idata["posterior"]
    if not is_mcmc(sampler):
        note = SAMPLERS[sampler].note if sampler in SAMPLERS else None
        return Diagnostics(
            sampler,
            post.sizes["chain"],
            post.sizes["draw"],
            float("nan"),
            float("nan"),
            float("nan"),
            0,
            wall_s,
            None,
            [note] if note else [],
        )
    checked = post[names].drop_sel(drop or {})
    if "sample_stats" in idata:
        checked_idata = az.InferenceData(posterior=checked, sample_stats=idata["sample_stats"])
    else:
        checked_idata = az.InferenceData(posterior=checked)
    given = None if stats is None else stats.take(stacked_columns(post, names, drop))
    check = check_convergence(checked_idata, names, stats=given)
    target = post.attrs.get("target_ess")
    return Diagnostics(
        sampler,
        post.sizes["chain"],
        post.sizes["draw"],
        check.rhat_max,
        check.ess_bulk_min,
        check.ess_tail_min,
        check.divergences,
        wall_s,
        check.converged,
        [f"{NOT_CONVERGED}: {failure}" for failure in check.failures],
        target_ess=None if target is None else int(target),
        stopped=post.attrs.get("stopped"),
    )


def withhold(table: pd.DataFrame, keep: Sequence[str]) -> pd.DataFrame:
    """A copy of a read-out table of a fit whose chains did not converge, with every column but ``keep``
    (the data's own: ids, counts) emptied (NaN, an empty cell in a CSV file): its means, intervals,
    probabilities and ranks describe chains that did not converge (a stuck chain gave intervals of width 0
    and P(best) 1.000), so nothing is left for a script to read as a result. The rows stay."""
    out = table.copy()
    for column in out.columns:
        if column not in keep:
            out[column] = np.nan
    return out


def diagnostics_json(diagnostics: Diagnostics) -> str:
    """Diagnostics as valid JSON (RFC 8259 has no NaN or Infinity: non-finite numbers become null)."""

    def finite(value):
        return None if isinstance(value, float) and not math.isfinite(value) else value

    return json.dumps({k: finite(v) for k, v in asdict(diagnostics).items()}, indent=2, allow_nan=False)


def diagnostics_from_json(entry: dict) -> Diagnostics:
    """The inverse of :func:`diagnostics_json` (parsed): a null number (R-hat, ESS of a fit without chains)
    becomes NaN; the fields that may be None (``converged``, ``target_ess``, ``stopped``) stay None.

    Raises
    ------
    TypeError
        ``entry`` has keys that are not fields of :class:`Diagnostics`, or misses required ones
        (an entry written before ``converged`` existed: the cache reads it as a miss).
    """
    numbers = {f.name for f in dataclasses.fields(Diagnostics) if f.type == "float"}
    values: dict[str, Any] = {k: float("nan") if v is None and k in numbers else v for k, v in entry.items()}
    return Diagnostics(**values)
