"""Which design to run: the cheapest that reaches a target power with a test that holds its level, and when
no design of the grid does, how many prompts or annotators would, from the power curve (``docs/planner.md``).

A plan (:func:`lib.planning.power.plan`) gives every design's power at the analysis's nominal 5% level, its
real false-detection rate there (``valid``: not credibly above 6%), and the threshold that holds 5% under the
assumptions (``critical_z``) with the power at it. A design is chosen at the nominal level when it is valid
there; an analysis that is valid at no design reaching the target is chosen at its calibrated threshold,
which is then printed with it; an invalid design is never chosen at the nominal level (issue 30).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy.optimize import nnls
from scipy.stats import norm

from lib.errors import SettingsError
from lib.planning.analyses import ALPHA
from lib.planning.power import MAX_FALSE_DETECTION

CHEAPEST_COLUMNS = [
    "strategy",
    "analysis",
    "reached",
    "prompts",
    "annotators",
    "power",
    "power_mc_se",
    "judgments",
    "hours",
    "cost",
    "saving",
    "binding_pair",
    "false_detection",
    "critical_z",
    "prompts_needed",
    "annotators_needed",
]
"""The columns of ``cheapest.csv`` (:func:`cheapest`)."""

CURVE_POWERS = (0.1, 0.98)
"""Powers of a design that inform the extrapolation (:func:`needed`): near the test's size or near 1 a
power's normal quantile is mostly Monte-Carlo noise."""

Z_TEST = float(norm.ppf(1 - ALPHA / 2))


def usable(plan_df: pd.DataFrame) -> pd.DataFrame:
    """The plan with the power a user gets at each design: ``usable`` (with ``usable_se``) is the nominal power
    where the analysis is valid there (``threshold`` NaN: its usual 5% test); where no analysis of the plan is
    valid at that design (prompts, annotators, strategy), a calibrated threshold is the only valid way, and it
    is the power at ``critical_z`` (``threshold``); otherwise NaN (the analysis is invalid there and another is
    not: never chosen)."""
    size = ["prompts", "annotators", "strategy"]
    only_way = ~plan_df.groupby(size, sort=False)["valid"].transform("any").astype(bool)
    valid = plan_df["valid"].astype(bool)
    return plan_df.assign(
        usable=np.where(valid, plan_df["power"], np.where(only_way, plan_df["calibrated_power"], np.nan)),
        usable_se=np.where(
            valid, plan_df["power_mc_se"], np.where(only_way, plan_df["calibrated_power_mc_se"], np.nan)
        ),
        threshold=np.where(~valid & only_way, plan_df["critical_z"], np.nan),
    )


def needed(group: pd.DataFrame, target_power: float, along: str) -> float:
    """How many prompts (or annotators) one (strategy, analysis) needs to reach the target power, at the
    grid's largest number of annotators (or prompts), from its power curve.

    The power of a test at 5% is about ``Phi(s - 1.96)`` with ``s`` the effect over the estimate's SD, and
    under the crossed model (prompt x comparison, annotator x comparison and residual variance) ``1 / s^2 =
    A + B / x`` in the number x of prompts (or annotators) with the other fixed: ``A`` is the part that more of
    x does not average away (the annotators' own preference, when x is prompts). ``A, B >= 0`` are fitted by
    least squares to the designs whose usable power (:func:`usable`) lies in :data:`CURVE_POWERS`.

    Parameters
    ----------
    group : DataFrame
        The :func:`usable` plan's rows of one strategy and analysis.
    target_power : float
    along : {"prompts", "annotators"}

    Returns
    -------
    float
        The smallest whole number reaching the target by the fit; ``inf`` when no number does (``A`` too
        large); NaN when fewer than two designs inform the curve.
    """
    other = "annotators" if along == "prompts" else "prompts"
    rows = group[group[other] == group[other].max()]
    powers = rows["usable"].to_numpy(dtype=float)
    keep = (powers >= CURVE_POWERS[0]) & (powers <= CURVE_POWERS[1])  # NaN (not usable) is left out
    x = rows[along].to_numpy(dtype=float)[keep]
    if len(np.unique(x)) < 2:
        return np.nan
    signal = norm.ppf(powers[keep]) + Z_TEST
    (floor, slope), _ = nnls(np.column_stack([np.ones_like(x), 1 / x]), 1 / signal**2)
    wanted = 1 / (norm.ppf(target_power) + Z_TEST) ** 2
    if slope <= 0:
        return np.nan
    if floor >= wanted:
        return math.inf
    return float(math.ceil(slope / (wanted - floor)))


def cheapest(plan_df: pd.DataFrame, target_power: float = 0.8) -> pd.DataFrame:
    """The cheapest design of every (strategy, analysis) that reaches the target power with a test a user
    can run, and what would reach it when none does.

    A design is taken at the analysis's nominal 5% level where that is valid (``valid``: its real
    false-detection rate not credibly above 6%), else only where no analysis of the plan is valid at that design, at the
    threshold calibrated under the assumptions (``critical_z`` then set: declare a difference only above it;
    :func:`usable`). Designs at the nominal level come first, then the cheapest; ties in cost go to fewer
    prompts.

    Parameters
    ----------
    plan_df : DataFrame
        A plan (:func:`lib.planning.power.plan`).
    target_power : float
        In (0, 1).

    Returns
    -------
    DataFrame
        :data:`CHEAPEST_COLUMNS`, one row per (strategy, analysis) in the plan's order: ``reached`` (False:
        no design of the grid reaches the target, the design columns are empty), the design, its usable
        power (:func:`usable`) and cost; ``saving``: the cost of the cheapest ``random`` design of the same
        analysis minus this one's (empty for ``random`` or when either misses the target);
        ``binding_pair``: the pair whose power is the smallest there; ``false_detection``: the analysis's
        real rate at its nominal level there; ``critical_z``: empty at the nominal level, else the threshold;
        when not reached, ``prompts_needed`` (at the grid's most annotators) and ``annotators_needed`` (at
        its most prompts) extrapolated by :func:`needed` (``inf``: no number does).

    Raises
    ------
    SettingsError
        A target power outside (0, 1).
    """
    if not (0 < target_power < 1):
        raise SettingsError(f"the target power must be between 0 and 1 (got {target_power})")
    rows = []
    for (strategy, analysis), group in usable(plan_df).groupby(["strategy", "analysis"], sort=False):
        found = group[group["usable"] >= target_power].assign(nominal=lambda d: d["threshold"].isna())
        found = found.sort_values(["nominal", "cost", "prompts"], ascending=[False, True, True], kind="stable")
        row: dict = {"strategy": strategy, "analysis": analysis, "reached": not found.empty}
        if found.empty:
            row.update(
                prompts_needed=needed(group, target_power, "prompts"),
                annotators_needed=needed(group, target_power, "annotators"),
            )
        else:
            best = found.iloc[0]
            row.update({k: best[k] for k in ("prompts", "annotators", "judgments", "hours", "cost")})
            row.update(
                power=best["usable"],
                power_mc_se=best["usable_se"],
                binding_pair=best.get("binding_pair", ""),
                false_detection=best["false_detection"],
                critical_z=best["threshold"],
            )
        rows.append(row)
    out = pd.DataFrame(rows).reindex(columns=CHEAPEST_COLUMNS)
    out["reached"] = out["reached"].astype(bool)
    out["binding_pair"] = out["binding_pair"].fillna("")
    random_cost = out[out["strategy"] == "random"].set_index("analysis")["cost"]
    out["saving"] = [
        np.nan if s == "random" else random_cost.get(a, np.nan) - c
        for s, a, c in zip(out["strategy"], out["analysis"], out["cost"], strict=True)
    ]
    return out


def advice(best: pd.DataFrame, plan_df: pd.DataFrame, target_power: float) -> list[str]:
    """What :func:`cheapest`'s table means where it needs words (the command prints them, the page shows
    them): a design reached only at a calibrated threshold, with the threshold to apply; an analysis that
    reaches the target nowhere in the grid, with the extrapolated prompts or annotators that would."""
    lines = []
    for r in best.itertuples():
        name = f"{r.analysis} ({r.strategy} prompts)"
        if r.reached and np.isfinite(r.critical_z):
            lines.append(
                f"{name}: at {r.prompts:.0f} prompts x {r.annotators:.0f} annotators its usual 5% test declares a "
                f"difference that is not there in {r.false_detection:.0%} of studies; it reaches power "
                f"{r.power:.2f} only when a difference is declared at |z| > {r.critical_z:.2f} (two-sided p < "
                f"{2 * norm.sf(r.critical_z):.2g}), a threshold calibrated under the assumed variance components "
                "(if they are wrong, so is the threshold)"
            )
        elif not r.reached:
            rows = plan_df[(plan_df["analysis"] == r.analysis) & (plan_df["strategy"] == r.strategy)]
            if not rows["valid"].astype(bool).any():
                lines.append(
                    f"{name}: invalid at its nominal 5% level at every design of the grid (it declares a "
                    f"difference that is not there in {rows['false_detection'].min():.0%} to "
                    f"{rows['false_detection'].max():.0%} of studies) while another analysis is valid: use that one"
                )
                continue
            most = {x: int(plan_df[x].max()) for x in ("prompts", "annotators")}
            invalid = int((~rows["valid"].astype(bool)).sum())
            held = f" (it does not hold its 5% level at {invalid} of {len(rows)} designs)" if invalid else ""
            lines.append(
                f"{name}: no design of the grid reaches power {target_power:g}{held}; " + _needed_words(r, most)
            )
    return lines


def _needed_words(r, most: dict[str, int]) -> str:
    """The extrapolated prompts and annotators of an unreached row, in words (``most``: the grid's largest)."""
    words = []
    for count, unit, other in (
        (r.prompts_needed, "prompts", "annotators"),
        (r.annotators_needed, "annotators", "prompts"),
    ):
        if math.isinf(count):
            words.append(
                f"no number of {unit} does at {most[other]} {other} (the {other}' own effect does not average "
                f"out over {unit})"
            )
        elif np.isfinite(count):
            words.append(f"about {count:,.0f} {unit} at {most[other]} {other}")
    if not words:
        return "too few designs have a power between 0.1 and 0.98 to extrapolate the power curve: widen the grid"
    return "extrapolating the power curve: " + "; or ".join(words)


def validity_notes(plan_df: pd.DataFrame) -> list[str]:
    """One line per analysis that is invalid at its nominal level at some design of the plan: at how many, its
    largest real false-detection rate, and the thresholds that hold 5% there (``calibration.csv``); and one per
    analysis whose rate is above 6% somewhere but within Monte-Carlo error of it (more replicates would tell)."""
    lines = []
    for name, rows in plan_df.groupby("analysis", sort=False):
        bad = rows[~rows["valid"].astype(bool)]
        unsure = rows[rows["valid"].astype(bool) & (rows["false_detection"] > MAX_FALSE_DETECTION)]
        if len(unsure):
            worst = unsure.loc[unsure["false_detection"].idxmax()]
            lines.append(
                f"{name} may not hold its 5% level at {len(unsure)} of {len(rows)} designs: it declares a difference "
                f"that is not there in up to {worst['false_detection']:.1%} (+-{worst['false_detection_mc_se']:.1%}) "
                "of studies, not credibly above 6% with this many simulated studies: raise them to tell"
            )
        if len(bad):
            lines.append(
                f"{name} is invalid at its nominal 5% level at {len(bad)} of {len(rows)} designs: it declares a "
                f"difference that is not there in up to {bad['false_detection'].max():.0%} of studies (power.csv, "
                f"valid = False); the threshold that holds 5% there is |z| > {bad['critical_z'].min():.2f} to "
                f"{bad['critical_z'].max():.2f} (calibration.csv)"
            )
    return lines
