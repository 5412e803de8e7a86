"""Power, interval width, ranking accuracy and cost of study designs by Monte Carlo (``docs/planner.md``).

For every design, ``replicates`` studies are simulated (:func:`lib.planning.simulate.simulate_study`)
and each is analysed as the user would (:data:`lib.planning.design.ANALYSES`); designs that differ
only in the analysis share their simulated studies. Power is the share of studies (and of the
comparisons of the stated size in them) that the analysis detects at its nominal 5% level (its 95%
interval excludes 0), with Monte-Carlo standard error ``sd / sqrt(R)`` (``sqrt(p (1 - p) / R)`` for one
comparison). Each of the first :data:`NULL_TWINS` replicates also has a null twin (the comparisons of the
stated size at theta 0), analysed the same way: the share it detects is the analysis's real
false-detection rate under the design, by which it is valid or not there (:func:`valid_at_nominal`), and
the 95th percentile of its ``|z|`` is the threshold that would hold 5% under the assumptions
(``critical_z``, with the power at it; its Monte-Carlo SE adds the error of that percentile, a bootstrap
of the twins).
"""

from __future__ import annotations

import hashlib
import io
import json
import warnings
from collections.abc import Iterator
from dataclasses import asdict
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import kendalltau, norm

from lib.engine.cluster import Engine, TaskProgress
from lib.errors import PlanStopped, SettingsError
from lib.io.cache import check_digest, digest, load, prune, store
from lib.io.paths import cache_dir
from lib.planning.analyses import ALPHA, LEVEL, analyse
from lib.planning.design import ANALYSES, MAX_MINUTES, Assumptions, Design
from lib.planning.grid import PLAN_DEFAULTS
from lib.planning.simulate import simulate_study, skills_from_theta

COLUMNS = [
    "prompts",
    "annotators",
    "strategy",
    "analysis",
    "power",
    "power_mc_se",
    "interval_width",
    "kendall_tau",
    "judgments",
    "hours",
    "cost",
    "false_detection",
    "false_detection_mc_se",
    "valid",
]
"""The columns of ``power.csv``: the first 11 as they have always been (``power`` at the analysis's nominal 5%
level), then its real false-detection rate under the design with its Monte-Carlo SE and whether it may be
used there at that level (:func:`valid_at_nominal`; issue 30)."""

RANKING_COLUMNS = ["prompts", "annotators", "strategy", "analysis", "best_first", "best_first_mc_se", "kendall_tau"]
"""The columns of ``ranking.csv``: how often the true best system is estimated best, Kendall's tau."""

CALIBRATION_COLUMNS = [
    "prompts",
    "annotators",
    "strategy",
    "analysis",
    "critical_z",
    "calibration_factor",
    "calibrated_power",
    "calibrated_power_mc_se",
]
"""The columns of ``calibration.csv``: for every analysis and design, the threshold on |z| that holds a 5%
false-detection rate under the assumptions (95th percentile of the null twins' |z|), it over 1.96, and the
power at it (the smallest over the pairs of interest with a pilot)."""

PLAN_COLUMNS = [
    *COLUMNS,
    "best_first",
    "best_first_mc_se",
    "critical_z",
    "calibration_factor",
    "calibrated_power",
    "calibrated_power_mc_se",
    "binding_pair",
]
"""The columns of a plan (:func:`plan`): ``power.csv``'s, then the ranking and calibration ones, and the
pair whose power is the smallest ("B vs A"; with a pilot, ``power`` is that pair's)."""

PAIR_COLUMNS = [
    "prompts",
    "annotators",
    "strategy",
    "analysis",
    "system_a",
    "system_b",
    "effect",
    "power",
    "power_mc_se",
]
"""The columns of ``power_pairs.csv``: the power of every pair power is read on, with its Monte-Carlo SE;
``effect`` is the pair's true difference (B minus A, logits; the mean over the studies in which it
is of the stated size)."""

MAX_STUDY_JUDGMENTS = 5_000_000
"""Judgments of one simulated study (comparisons x prompts x annotators) at most: its arrays take
about 60 bytes per judgment, so 300 MB, on every worker at once."""

SECONDS_PER_JUDGMENT_SIMULATED = 2e-7
"""Measured cost on the 2-core machine (one core) of drawing and analysing one simulated judgment; an
analysis that fits a model adds its own (:attr:`lib.planning.design.Analysis.seconds_per_cell`)."""

MAX_SECONDS_PER_JUDGMENT = 86_400.0
MAX_COST_PER_HOUR = 1e6
"""Ranges of the cost settings: a day per judgment, a million per hour (so that every cost is finite)."""

_KEYS = ["prompts", "annotators", "strategy", "analysis"]

NULL_TWINS = 250
"""Replicates of a design that get a null twin, whose detections measure the false-detection rate and whose
|z| of every target comparison (250 x the comparisons of the stated size) place the 95th percentile: a
large plan does not analyse every study twice, at the price of that percentile's Monte-Carlo error, which
``calibrated_power_mc_se`` includes (at the benchmark's design it is 0.016 of the 0.017 of 1,000 studies)."""

MAX_FALSE_DETECTION = 0.06
"""An analysis whose real false-detection rate under a design exceeds this (credibly:
:func:`valid_at_nominal`) is invalid there at its nominal level: never chosen as the cheapest at it (issue 30)."""

VALIDITY_Z = float(norm.ppf(0.95))
"""One-sided z by which a false-detection rate must exceed :data:`MAX_FALSE_DETECTION` to make an analysis
invalid (:func:`valid_at_nominal`)."""

BOOTSTRAP = 400
"""Resamples of the null twins that measure how much the critical z's own Monte-Carlo error moves a
calibrated power (:func:`_critical_sd`)."""

CACHE_VERSION = 7
"""Part of every cache key: raise it when the simulation or the analyses change."""


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


def _replicate(item: tuple) -> dict[str, Any]:
    """Simulate one study and analyse it every asked way: analysis -> ``share`` of the target
    comparisons detected at the analysis's nominal 5% level, mean interval ``width`` over them, Kendall's
    ``tau`` of the skills, ``best`` (:func:`best_first`), ``detected`` and ``z`` (|z|) per target comparison,
    and from the replicate's null twin (replicates below :data:`NULL_TWINS`; empty after) ``null_detected``
    and ``null_z`` of the same comparisons. Key ``"_pairs"``: the target comparisons' (system_a, system_b,
    theta), for stated assumptions oriented weaker to stronger."""
    assumptions, design, analyses, seed, replicate = item
    study = simulate_study(assumptions, design, seed, replicate)
    null = simulate_study(assumptions, design, seed, replicate, null=True) if replicate < NULL_TWINS else None
    target = study.target
    names = [n for n, t in zip(study.pair_names(), target, strict=True) if t]
    theta = study.theta[target]
    if assumptions.pilot is None:  # exchangeable systems named by rank: weaker first, difference positive
        names = [n if d >= 0 else n[::-1] for n, d in zip(names, theta, strict=True)]
        theta = np.abs(theta)
    out: dict[str, Any] = {"_pairs": [(x, y, float(d)) for (x, y), d in zip(names, theta, strict=True)]}
    for name in analyses:
        result = analyse(name, study)
        estimated = skills_from_theta(result.estimate, study.pairs, len(study.skills))
        with warnings.catch_warnings():  # all estimates equal (a tiny study): tau is NaN, left out of the mean
            warnings.simplefilter("ignore")
            tau = kendalltau(study.skills, estimated).statistic
        assert result.z is not None  # every analysis gives its z, by which it is calibrated under the null
        out[name] = {
            "share": float(result.excludes_zero[target].mean()) if target.any() else np.nan,
            "width": float(result.width[target].mean()) if target.any() else np.nan,
            "tau": float(tau),
            "best": best_first(study.skills, estimated),
            "detected": result.excludes_zero[target].astype(float),
            "z": np.abs(result.z[target]),
            "null_detected": np.empty(0),
            "null_z": np.empty(0),
        }
        if null is not None:
            twin = analyse(name, null)
            assert twin.z is not None
            out[name]["null_detected"] = twin.excludes_zero[target].astype(float)
            out[name]["null_z"] = np.abs(twin.z[target])
    return out


def _comparisons(assumptions: Assumptions) -> int:
    if assumptions.pilot is not None:
        return len(assumptions.pilot.pairs)
    pairs = assumptions.n_systems * (assumptions.n_systems - 1) // 2
    return min(pairs, assumptions.comparisons or pairs)


def _rows(
    assumptions: Assumptions,
    group: tuple[int, int, str],
    analyses: list[str],
    results: list[dict],
    seconds_per_judgment: float,
    cost_per_hour: float,
) -> tuple[list[dict], list[dict]]:
    """The plan's rows (:data:`PLAN_COLUMNS`) and per-pair rows (:data:`PAIR_COLUMNS`) of one design size."""
    prompts, annotators, strategy = group
    judgments = _comparisons(assumptions) * prompts * annotators
    rows, pair_rows = [], []
    keys = [[(x, y) for x, y, _ in r["_pairs"]] for r in results]
    pairs = list(dict.fromkeys(k for ks in keys for k in ks))
    for name in analyses:
        share, width, tau, best = (np.array([r[name][k] for r in results]) for k in ("share", "width", "tau", "best"))
        detected, z = [r[name]["detected"] for r in results], [r[name]["z"] for r in results]
        twins = [r[name]["null_detected"] for r in results if len(r[name]["null_detected"])]
        false, false_se = _mean_se(np.array([t.mean() for t in twins]))
        null_z = np.concatenate([r[name]["null_z"] for r in results])
        critical = float(np.quantile(null_z, LEVEL))
        criticals = _bootstrap_criticals([r[name]["null_z"] for r in results])
        calibrated = [(zr > critical).astype(float) for zr in z]
        power, power_se = _mean_se(share)
        calibrated_power, calibrated_se = _mean_se(_shares(z, np.array([critical]))[0])
        calibrated_se = float(np.hypot(calibrated_se, _critical_sd(z, criticals)))
        per_pair, calibrated_pairs = [], []
        for pair in pairs:
            picks = [(i, ks.index(pair)) for i, ks in enumerate(keys) if pair in ks]
            p, se = _mean_se(np.array([detected[i][k] for i, k in picks]))
            cp, cse = _mean_se(np.array([calibrated[i][k] for i, k in picks]))
            calibrated_pairs.append(
                (cp, float(np.hypot(cse, _critical_sd([np.array([z[i][k]]) for i, k in picks], criticals))))
            )
            effect = float(np.mean([results[i]["_pairs"][k][2] for i, k in picks]))
            per_pair.append(
                {
                    "prompts": prompts,
                    "annotators": annotators,
                    "strategy": strategy,
                    "analysis": name,
                    "system_a": pair[0],
                    "system_b": pair[1],
                    "effect": effect,
                    "power": p,
                    "power_mc_se": se,
                }
            )
        binding = min(per_pair, key=lambda r: r["power"]) if per_pair else None
        if assumptions.pilot is not None and binding is not None:  # power is the weakest pair's
            power, power_se = binding["power"], binding["power_mc_se"]
            calibrated_power, calibrated_se = min(calibrated_pairs)
        best_mean, best_se = _mean_se(best)
        rows.append(
            {
                "prompts": prompts,
                "annotators": annotators,
                "strategy": strategy,
                "analysis": name,
                "power": power,
                "power_mc_se": power_se,
                "interval_width": _mean(width),
                "kendall_tau": _mean(tau),
                "judgments": judgments,
                "hours": judgments * seconds_per_judgment / 3600,
                "cost": judgments * seconds_per_judgment / 3600 * cost_per_hour,
                "false_detection": false,
                "false_detection_mc_se": false_se,
                "valid": valid_at_nominal(false, false_se, sum(len(t) for t in twins)),
                "best_first": best_mean,
                "best_first_mc_se": best_se,
                "critical_z": critical,
                "calibration_factor": critical / float(norm.ppf(1 - ALPHA / 2)),
                "calibrated_power": calibrated_power,
                "calibrated_power_mc_se": calibrated_se,
                "binding_pair": f"{binding['system_b']} vs {binding['system_a']}" if binding else "",
            }
        )
        pair_rows.extend(per_pair)
    return rows, pair_rows


def valid_at_nominal(false_detection: float, mc_se: float, nulls: int) -> bool:
    """Whether an analysis may be used at its nominal 5% level for a design: its real false-detection rate
    (share of the null twins' comparisons detected) does not credibly exceed :data:`MAX_FALSE_DETECTION` (a
    one-sided z-test at 5% against that rate, with the larger of the estimate's Monte-Carlo SE, by twin, and the
    binomial SE of 6% over the ``nulls`` null comparisons: a floor where the estimate's own SE is 0).

    A bare "estimate above 6%" would declare an exact 5% test invalid at a quarter of the designs of a plan of
    200 twins; this rule does at 0.6% of them, a test of true rate 10% at 63%, 13% at 95%, 16% at 99.7%
    (exact binomial sums, ``tests/planning/test_choice.py``).

    Returns
    -------
    bool
        False also when there is no null comparison (no measure).
    """
    if nulls == 0 or not np.isfinite(false_detection):
        return False
    se = max(mc_se, float(np.sqrt(MAX_FALSE_DETECTION * (1 - MAX_FALSE_DETECTION) / nulls)))
    return bool((false_detection - MAX_FALSE_DETECTION) / se <= VALIDITY_Z)


def _shares(z: list[np.ndarray], critical: np.ndarray) -> np.ndarray:
    """Share of each replicate's target comparisons with |z| above each critical value: shape
    (len(critical), R), NaN for a replicate without target comparisons."""
    shares = np.full((len(critical), len(z)), np.nan)
    for i, zr in enumerate(z):
        if len(zr):
            shares[:, i] = 1 - np.searchsorted(np.sort(zr), critical, side="right") / len(zr)
    return shares


def _bootstrap_criticals(null_z: list[np.ndarray]) -> np.ndarray:
    """The critical z (95th percentile of the null twins' |z|) on :data:`BOOTSTRAP` resamples of the
    twins by replicate (the comparisons of one study are correlated); fixed seed, so a plan's numbers
    are reproducible. Shape (BOOTSTRAP,)."""
    twins = [t for t in null_z if len(t)]
    rng = np.random.default_rng(0)
    picks = rng.integers(len(twins), size=(BOOTSTRAP, len(twins)))
    return np.array([np.quantile(np.concatenate([twins[i] for i in pick]), LEVEL) for pick in picks])


def _critical_sd(z: list[np.ndarray], criticals: np.ndarray) -> float:
    """SD of a calibrated power from its critical z's Monte-Carlo error alone: the power recomputed at
    every bootstrap critical z (:func:`_bootstrap_criticals`). The replicates' own spread
    (:func:`_mean_se`) is independent of it: the two add in quadrature. Without it, a plan of 40
    studies and 20 twins reported an SE of 0.072 where repeated plans spread by 0.119
    (``tests/planning``)."""
    with warnings.catch_warnings():  # replicates without target comparisons are NaN, left out
        warnings.simplefilter("ignore", RuntimeWarning)
        return float(np.std(np.nanmean(_shares(z, criticals), axis=1)))


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


def check_plan(
    assumptions: Assumptions,
    designs: list[Design],
    replicates: int,
    seconds: float,
    rate: float,
    max_minutes: float = MAX_MINUTES,
) -> None:
    """Check a plan before anything runs: every assumption's range, the designs, the costs, and its size.

    Raises
    ------
    SettingsError
        A value out of range, or a plan too large: a simulated study beyond
        :data:`MAX_STUDY_JUDGMENTS`, or an estimated time (:func:`estimate_seconds`) beyond
        ``max_minutes``; the message names the limit and what lifts it.
    """
    assumptions.validate()
    if not designs:
        raise SettingsError("no design to plan: give at least one number of prompts and of annotators")
    for d in designs:
        d.validate(assumptions)
    if replicates < 2:
        raise SettingsError(f"at least 2 replicates are needed for a Monte-Carlo error (got {replicates})")
    if not (np.isfinite(seconds) and 0 <= seconds <= MAX_SECONDS_PER_JUDGMENT):
        raise SettingsError(
            f"seconds per judgment must be between 0 and {MAX_SECONDS_PER_JUDGMENT:g} (got {seconds:g})"
        )
    if not (np.isfinite(rate) and 0 <= rate <= MAX_COST_PER_HOUR):
        raise SettingsError(f"cost per hour must be between 0 and {MAX_COST_PER_HOUR:g} (got {rate:g})")
    if not (np.isfinite(max_minutes) and max_minutes > 0):
        raise SettingsError(f"the time limit must be a positive number of minutes (got {max_minutes:g})")
    comparisons = _comparisons(assumptions)
    largest = max(designs, key=lambda d: d.prompts * d.annotators)
    size = comparisons * largest.prompts * largest.annotators
    if size > MAX_STUDY_JUDGMENTS:
        raise SettingsError(
            f"one simulated study of {comparisons:,} comparisons x {largest.prompts:,} prompts x "
            f"{largest.annotators:,} annotators holds {size:,} judgments, more than the limit of "
            f"{MAX_STUDY_JUDGMENTS:,} (about {60 * MAX_STUDY_JUDGMENTS / 1e9:.1f} GB per worker): "
            "plan fewer systems, prompts or annotators"
        )
    minutes = estimate_seconds(assumptions, designs, replicates) / 60
    if not minutes <= max_minutes:
        raise SettingsError(
            f"this plan would take about {minutes:,.0f} minutes on one core, more than the limit "
            f"of {max_minutes:g} minutes: lower the replicates or the designs, or raise the "
            "limit (--max-minutes)"
        )


def estimate_seconds(assumptions: Assumptions, designs: list[Design], replicates: int) -> float:
    """Estimated time of a plan on one core, from its sizes (:data:`SECONDS_PER_JUDGMENT_SIMULATED` and each
    analysis's fitting cost), the null twins of the first :data:`NULL_TWINS` replicates included."""
    comparisons = _comparisons(assumptions)
    total = 0.0
    for (prompts, annotators, _), names in _groups(designs).items():
        cells = comparisons * prompts
        twins = 1 + min(replicates, NULL_TWINS) / replicates  # studies analysed per replicate, twins included
        per_study = cells * annotators * SECONDS_PER_JUDGMENT_SIMULATED * (1 + len(names) * twins)
        for name in names:
            per_study += (
                cells * ANALYSES[name].seconds_per_cell + comparisons * ANALYSES[name].seconds_per_comparison
            ) * twins
        total += replicates * per_study
    return total


def iter_plan(
    assumptions: Assumptions,
    designs: list[Design],
    *,
    replicates: int = PLAN_DEFAULTS.replicates,
    seed: int = PLAN_DEFAULTS.seed,
    engine: Engine | None = None,
    progress: TaskProgress | None = None,
    seconds_per_judgment: float = PLAN_DEFAULTS.seconds_per_judgment,
    cost_per_hour: float = PLAN_DEFAULTS.cost_per_hour,
    batch: int | None = None,
    max_minutes: float = MAX_MINUTES,
) -> Iterator[tuple[pd.DataFrame, pd.DataFrame]]:
    """:func:`plan` as it goes: yields the rows (:data:`PLAN_COLUMNS`) and per-pair rows
    (:data:`PAIR_COLUMNS`) of each design size as soon as all its studies are analysed, each stored
    in the plan cache first, so a stopped plan keeps them and a rerun takes them from there (cached
    sizes come first). Stopping the iteration (a cancel) cancels the rest. The parameters are
    :func:`plan`'s.

    Raises
    ------
    PlanStopped
        The engine failed (e.g. no worker left) after some design sizes finished: they are kept in
        the cache and in the exception's ``finished``; the message says how many.
    """
    check_plan(assumptions, designs, replicates, seconds_per_judgment, cost_per_hour, max_minutes)
    groups = _groups(designs)
    settings = {
        "replicates": replicates,
        "seed": seed,
        "seconds_per_judgment": seconds_per_judgment,
        "cost_per_hour": cost_per_hour,
    }
    entry, paths, sized = _entries(assumptions, groups, settings)
    finished, keys = [], []
    for g in groups:
        part = _load_part(paths[g], entry[g], sized[g])
        if part is None:
            keys.append(g)
        else:
            finished.append(part)
            yield part
    items = [
        (assumptions, Design(p, n, s, groups[(p, n, s)][0]), tuple(groups[(p, n, s)]), seed, r)
        for (p, n, s) in keys
        for r in range(replicates)
    ]
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
    try:
        for index, result in results:
            g, r = divmod(index, replicates)
            pending[g][r] = result
            if all(x is not None for x in pending[g]):
                rows, pair_rows = _rows(
                    assumptions, keys[g], groups[keys[g]], pending.pop(g), seconds_per_judgment, cost_per_hour
                )
                part = (pd.DataFrame(rows, columns=PLAN_COLUMNS), pd.DataFrame(pair_rows, columns=PAIR_COLUMNS))
                _store_part(paths[keys[g]], entry[keys[g]], part)
                finished.append(part)
                yield part
    except PlanStopped:
        raise
    except SettingsError as err:  # the engine's (lib.errors.ClusterError): no worker left, a lost scheduler
        raise PlanStopped(
            f"{err}; {len(finished)} of {len(groups)} design sizes had finished and are kept "
            "(run the same plan again to resume from them)",
            finished,
        ) from None


def _entries(
    assumptions: Assumptions, groups: dict[tuple[int, int, str], list[str]], settings: dict
) -> tuple[dict, dict, dict]:
    """Per design size: its cache key, its cache file and its designs."""
    sized = {g: [Design(*g, a) for a in names] for g, names in groups.items()}
    entry = {g: plan_key(assumptions, d, **settings) for g, d in sized.items()}
    return entry, {g: cache_dir("plans") / f"{k}.json" for g, k in entry.items()}, sized


def cached_parts(
    assumptions: Assumptions,
    designs: list[Design],
    *,
    replicates: int = PLAN_DEFAULTS.replicates,
    seed: int = PLAN_DEFAULTS.seed,
    seconds_per_judgment: float = PLAN_DEFAULTS.seconds_per_judgment,
    cost_per_hour: float = PLAN_DEFAULTS.cost_per_hour,
) -> list[tuple[pd.DataFrame, pd.DataFrame]] | None:
    """The plan's parts (:func:`iter_plan`) when every design size is in the plan cache, else None; nothing is
    simulated (the page shows a plan run before, e.g. before a reload, without a click)."""
    settings = {
        "replicates": replicates,
        "seed": seed,
        "seconds_per_judgment": seconds_per_judgment,
        "cost_per_hour": cost_per_hour,
    }
    groups = _groups(designs)
    entry, paths, sized = _entries(assumptions, groups, settings)
    parts = []
    for g in groups:
        part = _load_part(paths[g], entry[g], sized[g])
        if part is None:
            return None
        parts.append(part)
    return parts


def _load_part(path, key: str, designs: list[Design]) -> tuple[pd.DataFrame, pd.DataFrame] | None:
    """A design size's cached rows and pair rows (:func:`_cached_plan`), or None (a miss)."""

    def parse(raw: bytes):
        rows = _cached_plan(raw, key, designs)
        entry = json.loads(raw.decode("utf-8"))
        check_digest(entry["pairs_csv"].encode(), entry["pairs_csv_sha256"])
        pairs = pd.read_csv(
            io.StringIO(entry["pairs_csv"]),
            keep_default_na=False,
            na_values=[""],
            dtype={"system_a": str, "system_b": str, "effect": float, "power": float, "power_mc_se": float},
        )
        if list(pairs.columns) != PAIR_COLUMNS or np.isinf(pairs[["effect", "power", "power_mc_se"]].to_numpy()).any():
            raise ValueError("the entry's pairs are not a plan's")
        return rows, pairs

    return load(path, parse)


def _store_part(path, key: str, part: tuple[pd.DataFrame, pd.DataFrame]) -> None:
    rows, pairs = (t.to_csv(index=False, float_format="%.17g") for t in part)
    store(
        path,
        json.dumps(
            {
                "key": key,
                "csv_sha256": digest(rows.encode()),
                "csv": rows,
                "pairs_csv_sha256": digest(pairs.encode()),
                "pairs_csv": pairs,
            }
        ).encode(),
        "plan",
    )
    prune(([f] for f in path.parent.glob("*.json")), max_entries=PLAN_CACHE_MAX_ENTRIES, max_bytes=PLAN_CACHE_MAX_BYTES)


def _json_default(value):
    if isinstance(value, np.ndarray):
        return [str(value.dtype), value.shape, hashlib.sha256(np.ascontiguousarray(value).tobytes()).hexdigest()]
    raise TypeError(type(value))


def plan_key(assumptions: Assumptions, designs: list[Design], **settings) -> str:
    """Hash of everything a plan depends on: names its cache entry."""
    text = json.dumps(
        [CACHE_VERSION, asdict(assumptions), [asdict(d) for d in designs], settings],
        default=_json_default,
        sort_keys=True,
    )
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def plan(assumptions: Assumptions, designs: list[Design], **options) -> pd.DataFrame:
    """Estimate power, interval width, ranking accuracy and cost of every design.

    ``options`` are :func:`iter_plan`'s keywords, described here; its signature holds their types and
    defaults (from :data:`lib.planning.grid.PLAN_DEFAULTS`).

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
        Where the studies run (an entered :class:`lib.engine.cluster.Engine`); None runs them here, one
        after another.
    progress : callable, optional
        ``progress(done, total)`` in studies.
    seconds_per_judgment, cost_per_hour : float
        Annotator time per judgment and pay rate, for ``hours`` and ``cost``.
    max_minutes : float
        Refuse a plan whose estimated time on one core (:func:`estimate_seconds`) is longer.

    Returns
    -------
    DataFrame
        One row per design, in their order, with exactly :data:`PLAN_COLUMNS`: ``power`` (share of
        the comparisons of the stated size that the analysis detects at its nominal 5% level; with a pilot,
        that of the weakest pair of interest, named in ``binding_pair``), ``power_mc_se``,
        ``interval_width`` (mean width of the nominal 95% interval, on the analysis's scale,
        :mod:`lib.planning.analyses`), ``kendall_tau`` (of the estimated to the true system ranking),
        ``judgments`` (comparisons x prompts x annotators), ``hours`` and ``cost``; ``false_detection``
        (share of those comparisons detected in the null twins of the first :data:`NULL_TWINS` replicates:
        the real false-detection rate at the nominal level) with its ``false_detection_mc_se`` and
        ``valid`` (:func:`valid_at_nominal`) (:data:`COLUMNS`, ``power.csv``); ``best_first`` (share of
        studies whose estimated best system is the true best, :func:`best_first`; NaN when the truth has no
        single best) and ``best_first_mc_se``; ``critical_z`` (95th percentile of the twins' |z|: the
        threshold that holds 5% under the assumptions), ``calibration_factor`` (it over 1.96) and
        ``calibrated_power`` (the power at it) with its ``calibrated_power_mc_se``
        (:data:`CALIBRATION_COLUMNS`).
        Cached on disk (``cache_dir("plans")``) by :func:`plan_key`, one entry per design size.

    Raises
    ------
    SettingsError
        Invalid assumptions, designs, replicates or costs, or a plan too large (checked before any
        simulation, :func:`check_plan`).
    PlanStopped
        The engine failed midway (:func:`iter_plan`).
    """
    return plan_with_pairs(assumptions, designs, **options)[0]


def plan_with_pairs(assumptions: Assumptions, designs: list[Design], **options) -> tuple[pd.DataFrame, pd.DataFrame]:
    """:func:`plan` (the same options) and the power of every pair (:data:`PAIR_COLUMNS`, ``power_pairs.csv``),
    both in the designs' order."""
    parts = list(iter_plan(assumptions, designs, **options))
    return order_parts(parts, designs)


def order_parts(
    parts: list[tuple[pd.DataFrame, pd.DataFrame]], designs: list[Design]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The plan's rows and pair rows of the finished design sizes (:func:`iter_plan`), in the designs' order."""
    order = pd.DataFrame([asdict(d) for d in designs])
    rows = order.merge(pd.concat([p[0] for p in parts], ignore_index=True), on=_KEYS)[PLAN_COLUMNS]
    pairs = order.merge(pd.concat([p[1] for p in parts], ignore_index=True), on=_KEYS)[PAIR_COLUMNS]
    return rows, pairs


PLAN_CACHE_MAX_ENTRIES = 200
PLAN_CACHE_MAX_BYTES = 20 * 2**20
"""Bounds of the plan cache (a plan of 48 designs is about 10 kB)."""


def _cached_plan(raw: bytes, key: str, designs: list[Design]) -> pd.DataFrame:
    """The plan stored in a cache entry (:func:`lib.io.cache.load` parses with it).

    Raises
    ------
    LookupError, ValueError
        The entry was stored for another request (its key or designs differ), its table is not the one
        its hash names, or it holds values a plan cannot have (a probability outside [0, 1]; a
        negative, infinite or missing Monte-Carlo SE beside an estimate; an infinite cost): a miss.
    """
    entry = json.loads(raw.decode("utf-8"))
    if entry["key"] != key:
        raise LookupError("the entry belongs to another plan")
    check_digest(entry["csv"].encode(), entry["csv_sha256"])
    # "%.17g" writes 1.0 as "1": read the measured columns back as floats, as computed
    measured = {c: float for c in PLAN_COLUMNS if c not in (*_KEYS, "judgments", "binding_pair", "valid")}
    cached = pd.read_csv(
        io.StringIO(entry["csv"]),
        keep_default_na=False,
        na_values=[""],
        dtype={**measured, "binding_pair": str, "valid": bool},
    ).fillna({"binding_pair": ""})
    asked = [(d.prompts, d.annotators, d.strategy, d.analysis) for d in designs]
    if list(cached.columns) != PLAN_COLUMNS or list(cached[_KEYS].itertuples(index=False, name=None)) != asked:
        raise LookupError("the entry does not match the designs asked for")
    for estimate, se in (
        ("power", "power_mc_se"),
        ("best_first", "best_first_mc_se"),
        ("false_detection", "false_detection_mc_se"),
        ("calibrated_power", "calibrated_power_mc_se"),
    ):
        p, e = cached[estimate].to_numpy(), cached[se].to_numpy()
        if (p < 0).any() or (p > 1).any() or np.isinf(e).any() or (e < 0).any() or (np.isnan(e) != np.isnan(p)).any():
            raise ValueError(f"the entry's {estimate} or {se} cannot come from a plan")
    if not np.isfinite(cached[["judgments", "hours", "cost"]].to_numpy(dtype=float)).all():
        raise ValueError("the entry's judgments, hours or cost are not finite")
    return cached
