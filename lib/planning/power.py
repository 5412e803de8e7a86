"""Power, interval width, ranking accuracy and cost of study designs by Monte Carlo (``docs/planner.md``).

For every design, ``replicates`` studies are simulated (:func:`lib.planning.simulate.simulate_study`)
and each is analysed as the user would (:data:`lib.planning.design.ANALYSES`); designs that differ
only in the analysis share their simulated studies. Power is the share of studies (and of the
comparisons of the stated size in them) whose 95% interval excludes 0, with Monte-Carlo standard
error ``sd / sqrt(R)`` (``sqrt(p (1 - p) / R)`` for one comparison). Analyses calibrated by
simulation under the null (``grm_map``) also analyse a null twin (the comparisons of the stated size
at theta 0) of each of the first :data:`NULL_TWINS` replicates, and detect above the 95th percentile
of the twins' ``|z|``; their power's Monte-Carlo SE adds the error of that percentile (a bootstrap of
the twins).
"""

from __future__ import annotations

import hashlib
import json
import warnings
from collections.abc import Callable, Iterator
from dataclasses import asdict

import numpy as np
import pandas as pd
from scipy.stats import kendalltau, norm

from lib.cache import discard, store
from lib.engine import Engine
from lib.errors import SettingsError
from lib.paths import cache_dir
from lib.planning.analyses import ALPHA, LEVEL, analyse
from lib.planning.design import ANALYSES, Assumptions, Design
from lib.planning.simulate import simulate_study, skills_from_theta

COLUMNS = ["prompts", "annotators", "strategy", "analysis", "power", "power_mc_se", "interval_width",
           "kendall_tau", "judgments", "hours", "cost"]
"""The columns of ``power.csv`` (checked from outside: do not change them)."""

RANKING_COLUMNS = ["prompts", "annotators", "strategy", "analysis", "best_first", "best_first_mc_se", "kendall_tau"]
"""The columns of ``ranking.csv``: how often the true best system is estimated best, Kendall's tau."""

CALIBRATION_COLUMNS = ["prompts", "annotators", "strategy", "analysis", "critical_z", "calibration_factor",
                       "nominal_false_detection"]
"""The columns of ``calibration.csv`` (analyses calibrated by simulation under the null)."""

PLAN_COLUMNS = [*COLUMNS, "best_first", "best_first_mc_se", "critical_z", "calibration_factor",
                "nominal_false_detection"]
"""The columns of a plan (:func:`plan`): ``power.csv``'s, then the ranking and calibration ones."""

_KEYS = ["prompts", "annotators", "strategy", "analysis"]

NULL_TWINS = 250
"""Replicates of a design that get a null twin, whose |z| of every target comparison (250 x the
comparisons of the stated size) place the 95th percentile: a large plan does not analyse every study
twice, at the price of that percentile's Monte-Carlo error, which ``power_mc_se`` includes (at the
benchmark's design it is 0.016 of the 0.017 of 1,000 studies)."""

BOOTSTRAP = 400
"""Resamples of the null twins that measure how much the critical z's own Monte-Carlo error moves a
calibrated power (:func:`_critical_sd`)."""

CACHE_VERSION = 4
"""Part of every cache key: raise it when the simulation or the analyses change."""

Progress = Callable[[int, int], None]
"""Called with (studies done, studies in all)."""


def best_first(skills: np.ndarray, estimated: np.ndarray) -> float:
    """Whether the system estimated best is the true best: 1 or 0, split evenly when several systems
    tie for the top of the estimate (a guess among them); NaN when the truth has no single best.

    Parameters
    ----------
    skills, estimated : ndarray, shape (S,)
        True and estimated skills (:func:`lib.planning.simulate.skills_from_theta`).
    """
    if np.sum(skills == skills.max()) > 1:
        return np.nan
    top = np.flatnonzero(np.isclose(estimated, estimated.max(), rtol=0.0, atol=1e-9))
    return float(np.argmax(skills) in top) / len(top)


def _replicate(item: tuple) -> dict[str, dict]:
    """Simulate one study and analyse it every asked way: analysis -> ``share`` of the target
    comparisons detected, mean interval ``width`` over them, Kendall's ``tau`` of the skills,
    ``best`` (:func:`best_first`); for null-calibrated analyses also ``z`` (|z| of the target
    comparisons) and ``null_z`` (|z| of the same comparisons in the replicate's null twin; empty from
    replicate :data:`NULL_TWINS` on)."""
    assumptions, design, analyses, seed, replicate = item
    study = simulate_study(assumptions, design, seed, replicate)
    null = None
    out = {}
    for name in analyses:
        result = analyse(name, study)
        target = study.target
        estimated = skills_from_theta(result.estimate, study.pairs, len(study.skills))
        with warnings.catch_warnings():  # all estimates equal (a tiny study): tau is NaN, left out of the mean
            warnings.simplefilter("ignore")
            tau = kendalltau(study.skills, estimated).statistic
        out[name] = {"share": float(result.excludes_zero[target].mean()) if target.any() else np.nan,
                     "width": float(result.width[target].mean()) if target.any() else np.nan,
                     "tau": float(tau), "best": best_first(study.skills, estimated)}
        if ANALYSES[name].null_calibrated:
            out[name]["z"] = np.abs(result.z[target])
            out[name]["null_z"] = np.empty(0)
            if replicate < NULL_TWINS:
                if null is None:
                    null = simulate_study(assumptions, design, seed, replicate, null=True)
                out[name]["null_z"] = np.abs(analyse(name, null).z[target])
    return out


def _comparisons(assumptions: Assumptions) -> int:
    if assumptions.pilot is not None:
        return len(assumptions.pilot.pairs)
    pairs = assumptions.n_systems * (assumptions.n_systems - 1) // 2
    return min(pairs, assumptions.comparisons or pairs)


def _rows(assumptions: Assumptions, group: tuple[int, int, str], analyses: list[str], results: list[dict],
          seconds_per_judgment: float, cost_per_hour: float) -> list[dict]:
    prompts, annotators, strategy = group
    judgments = _comparisons(assumptions) * prompts * annotators
    rows = []
    for name in analyses:
        share, width, tau, best = (np.array([r[name][k] for r in results]) for k in ("share", "width", "tau", "best"))
        calibration = {"critical_z": np.nan, "calibration_factor": np.nan, "nominal_false_detection": np.nan}
        if ANALYSES[name].null_calibrated:
            null_z = np.concatenate([r[name]["null_z"] for r in results])
            critical, nominal = float(np.quantile(null_z, LEVEL)), float(norm.ppf(1 - ALPHA / 2))
            calibration = {"critical_z": critical, "calibration_factor": critical / nominal,
                           "nominal_false_detection": float(np.mean(null_z > nominal))}
            z = [r[name]["z"] for r in results]
            share = _shares(z, np.array([critical]))[0]
            width = width * calibration["calibration_factor"]
        power, power_se = _mean_se(share)
        if ANALYSES[name].null_calibrated:
            power_se = float(np.hypot(power_se, _critical_sd(z, [r[name]["null_z"] for r in results])))
        best_mean, best_se = _mean_se(best)
        rows.append({
            "prompts": prompts, "annotators": annotators, "strategy": strategy, "analysis": name,
            "power": power, "power_mc_se": power_se, "interval_width": _mean(width),
            "kendall_tau": _mean(tau), "judgments": judgments, "hours": judgments * seconds_per_judgment / 3600,
            "cost": judgments * seconds_per_judgment / 3600 * cost_per_hour,
            "best_first": best_mean, "best_first_mc_se": best_se, **calibration,
        })
    return rows


def _shares(z: list[np.ndarray], critical: np.ndarray) -> np.ndarray:
    """Share of each replicate's target comparisons with |z| above each critical value: shape
    (len(critical), R), NaN for a replicate without target comparisons."""
    shares = np.full((len(critical), len(z)), np.nan)
    for i, zr in enumerate(z):
        if len(zr):
            shares[:, i] = 1 - np.searchsorted(np.sort(zr), critical, side="right") / len(zr)
    return shares


def _critical_sd(z: list[np.ndarray], null_z: list[np.ndarray]) -> float:
    """SD of a calibrated power from its critical z's Monte-Carlo error alone: the null twins are resampled
    by replicate (the comparisons of one study are correlated), and the 95th percentile and the power
    recomputed on every resample (fixed seed: a plan's numbers are reproducible). The replicates'
    own spread (:func:`_mean_se`) is independent of it: the two add in quadrature. Without it, a
    plan of 40 studies and 20 twins reported an SE of 0.072 where repeated plans spread by 0.119
    (``tests/planning``)."""
    twins = [t for t in null_z if len(t)]
    rng = np.random.default_rng(0)
    picks = rng.integers(len(twins), size=(BOOTSTRAP, len(twins)))
    critical = np.array([np.quantile(np.concatenate([twins[i] for i in pick]), LEVEL) for pick in picks])
    with warnings.catch_warnings():  # replicates without target comparisons are NaN, left out
        warnings.simplefilter("ignore", RuntimeWarning)
        return float(np.std(np.nanmean(_shares(z, critical), axis=1)))


def _mean(values: np.ndarray) -> float:
    """Mean over the replicates that have a value (NaN: none)."""
    return float(np.nanmean(values)) if (~np.isnan(values)).any() else np.nan


def _mean_se(values: np.ndarray) -> tuple[float, float]:
    """:func:`_mean` and its Monte-Carlo SE, sd / sqrt(R) over the R replicates that have a value."""
    values = values[~np.isnan(values)]
    return _mean(values), float(values.std() / np.sqrt(len(values))) if len(values) else np.nan


def _groups(designs: list[Design]) -> dict[tuple[int, int, str], list[str]]:
    """Designs by (prompts, annotators, strategy), the analyses asked of each, in the designs' order."""
    groups: dict[tuple[int, int, str], list[str]] = {}
    for d in designs:
        names = groups.setdefault((d.prompts, d.annotators, d.strategy), [])
        if d.analysis not in names:
            names.append(d.analysis)
    return groups


def iter_plan(
    assumptions: Assumptions,
    designs: list[Design],
    *,
    replicates: int = 200,
    seed: int = 0,
    engine: Engine | None = None,
    progress: Progress | None = None,
    seconds_per_judgment: float = 30.0,
    cost_per_hour: float = 15.0,
    batch: int | None = None,
) -> Iterator[pd.DataFrame]:
    """:func:`plan` as it goes: yields the rows (:data:`PLAN_COLUMNS`) of each design size as soon as all
    its studies are analysed. Stopping the iteration (a cancel) cancels the rest and keeps what
    was yielded. Not cached; the parameters are :func:`plan`'s."""
    _check(assumptions, designs, replicates, seconds_per_judgment, cost_per_hour)
    groups = _groups(designs)
    keys = list(groups)
    items = [(assumptions, Design(p, n, s, groups[(p, n, s)][0]), tuple(groups[(p, n, s)]), seed, r)
             for (p, n, s) in keys for r in range(replicates)]
    pending: dict[int, list] = {g: [None] * replicates for g in range(len(keys))}
    if engine is None:
        def run():
            for index, item in enumerate(items):
                yield index, _replicate(item)
                if progress is not None:
                    progress(index + 1, len(items))
        results = run()
    else:  # a batch never spans two design sizes, so each worker compiles a solver shape once per batch
        results = engine.map(_replicate, items, progress=progress, batch=batch or min(replicates, 25))
    for index, result in results:
        g, r = divmod(index, replicates)
        pending[g][r] = result
        if all(x is not None for x in pending[g]):
            yield pd.DataFrame(_rows(assumptions, keys[g], groups[keys[g]], pending.pop(g),
                                     seconds_per_judgment, cost_per_hour), columns=PLAN_COLUMNS)


def _check(assumptions: Assumptions, designs: list[Design], replicates: int, seconds: float, rate: float) -> None:
    assumptions.validate()
    if not designs:
        raise SettingsError("no design to plan: give at least one number of prompts and of annotators")
    for d in designs:
        d.validate(assumptions)
    if replicates < 2:
        raise SettingsError(f"at least 2 replicates are needed for a Monte-Carlo error (got {replicates})")
    if not (np.isfinite(seconds) and seconds >= 0 and np.isfinite(rate) and rate >= 0):
        raise SettingsError("seconds per judgment and cost per hour must be non-negative numbers")


def _json_default(value):
    if isinstance(value, np.ndarray):
        return [str(value.dtype), value.shape, hashlib.sha256(np.ascontiguousarray(value).tobytes()).hexdigest()]
    raise TypeError(type(value))


def plan_key(assumptions: Assumptions, designs: list[Design], **settings) -> str:
    """Hash of everything a plan depends on: names its cache entry."""
    text = json.dumps([CACHE_VERSION, asdict(assumptions), [asdict(d) for d in designs], settings],
                      default=_json_default, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def plan(
    assumptions: Assumptions,
    designs: list[Design],
    *,
    replicates: int = 200,
    seed: int = 0,
    engine: Engine | None = None,
    progress: Progress | None = None,
    seconds_per_judgment: float = 30.0,
    cost_per_hour: float = 15.0,
) -> pd.DataFrame:
    """Estimate power, interval width, ranking accuracy and cost of every design.

    Parameters
    ----------
    assumptions : Assumptions
    designs : list of Design
    replicates : int
        Simulated studies per design (R); the Monte-Carlo SE of a power p is about sqrt(p (1-p) / R).
    seed : int
        Every replicate's streams derive from (seed, replicate, design size)
        (:func:`lib.planning.simulate.seeds`): the same plan gives the same numbers in this
        process, an embedded cluster or a remote one.
    engine : Engine, optional
        Where the studies run (an entered :class:`lib.engine.Engine`); None runs them here, one
        after another.
    progress : callable, optional
        ``progress(done, total)`` in studies.
    seconds_per_judgment, cost_per_hour : float
        Annotator time per judgment and pay rate, for ``hours`` and ``cost``.

    Returns
    -------
    DataFrame
        One row per design, in their order, with exactly :data:`PLAN_COLUMNS`: ``power`` (share of
        the comparisons of the stated size whose 95% interval excludes 0), ``power_mc_se``,
        ``interval_width`` (mean, on the analysis's scale, :mod:`lib.planning.analyses`),
        ``kendall_tau`` (of the estimated to the true system ranking), ``judgments``
        (comparisons x prompts x annotators), ``hours`` and ``cost`` (:data:`COLUMNS`, ``power.csv``);
        ``best_first`` (share of studies whose estimated best system is the true best,
        :func:`best_first`; NaN when the truth has no single best) and ``best_first_mc_se``;
        for null-calibrated analyses (:attr:`lib.planning.design.Analysis.null_calibrated`)
        ``critical_z`` (95th percentile of |z| of the target comparisons in the null twins of the
        first :data:`NULL_TWINS` replicates, used for
        ``power``), ``calibration_factor`` (it over 1.96; ``interval_width`` is widened by it)
        and ``nominal_false_detection`` (share of null comparisons with |z| > 1.96), NaN for the
        others. Cached on disk (``cache_dir("plans")``) by :func:`plan_key`.

    Raises
    ------
    SettingsError
        Invalid assumptions, designs, replicates or costs (checked before any simulation).
    """
    _check(assumptions, designs, replicates, seconds_per_judgment, cost_per_hour)
    settings = {"replicates": replicates, "seed": seed, "seconds_per_judgment": seconds_per_judgment,
                "cost_per_hour": cost_per_hour}
    path = cache_dir("plans") / f"{plan_key(assumptions, designs, **settings)}.csv"
    if path.exists():
        try:
            # "%.17g" writes 1.0 as "1": read the measured columns back as floats, as computed
            measured = {c: float for c in PLAN_COLUMNS if c not in (*_KEYS, "judgments")}
            cached = pd.read_csv(path, keep_default_na=False, na_values=[""], dtype=measured)
            if list(cached.columns) == PLAN_COLUMNS and len(cached) == len(designs):
                if progress is not None:
                    progress(1, 1)
                return cached
            raise ValueError("the entry does not match the plan")
        except (ValueError, pd.errors.ParserError):  # a damaged or foreign entry is a miss
            discard(path)
    parts = list(iter_plan(assumptions, designs, replicates=replicates, seed=seed, engine=engine,
                           progress=progress, seconds_per_judgment=seconds_per_judgment, cost_per_hour=cost_per_hour))
    found = pd.concat(parts, ignore_index=True).set_index(["prompts", "annotators", "strategy", "analysis"])
    order = [(d.prompts, d.annotators, d.strategy, d.analysis) for d in designs]
    result = found.loc[order].reset_index()[PLAN_COLUMNS]
    store(path, lambda tmp: result.to_csv(tmp, index=False, float_format="%.17g"), "plan")
    return result


def cheapest(plan_df: pd.DataFrame, target_power: float = 0.8) -> pd.DataFrame:
    """The cheapest design of every (strategy, analysis) that reaches the target power.

    Parameters
    ----------
    plan_df : DataFrame
        A plan (:func:`plan`).
    target_power : float
        In (0, 1).

    Returns
    -------
    DataFrame
        One row per (strategy, analysis) in the plan's order: ``strategy, analysis, reached``
        (False: no design of the grid reaches the target, the design columns are empty),
        ``prompts, annotators, power, power_mc_se, judgments, hours, cost``, and
        ``saving``: the cost of the cheapest ``random`` design of the same analysis minus this
        one's (the saving of IRT-informed prompts at equal target power; empty for ``random`` or
        when either misses the target). Ties in cost go to fewer prompts.

    Raises
    ------
    SettingsError
        A target power outside (0, 1).
    """
    if not (0 < target_power < 1):
        raise SettingsError(f"the target power must be between 0 and 1 (got {target_power})")
    fields = ["prompts", "annotators", "power", "power_mc_se", "judgments", "hours", "cost"]
    rows = []
    for (strategy, analysis), group in plan_df.groupby(["strategy", "analysis"], sort=False):
        reached = group[group["power"] >= target_power].sort_values(["cost", "prompts"], kind="stable")
        row = {"strategy": strategy, "analysis": analysis, "reached": not reached.empty}
        row.update({f: reached.iloc[0][f] if not reached.empty else np.nan for f in fields})
        rows.append(row)
    out = pd.DataFrame(rows, columns=["strategy", "analysis", "reached", *fields])
    random_cost = out[out["strategy"] == "random"].set_index("analysis")["cost"]
    out["saving"] = [np.nan if s == "random" else random_cost.get(a, np.nan) - c
                     for s, a, c in zip(out["strategy"], out["analysis"], out["cost"], strict=True)]
    return out
