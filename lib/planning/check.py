"""Does the planner's simulator look like the pilot? A predictive check (Gelman, Meng & Stern 1996):
data sets of the pilot's own layout (its cells, with as many judgments as each had) are simulated from
the pilot fit the planner uses (:func:`lib.planning.design.fit_pilot`) and compared with the pilot on
the recorded outcomes (the share of each judgment value, the net rating of the cells) and on every
pair's mean judgment, before any power is read."""

from __future__ import annotations

import numpy as np
import pandas as pd

from lib.irt.readouts import category_probs, judgment_probs
from lib.planning.design import PilotBank

CHECK_COLUMNS = ["check", "pilot", "simulated_mean", "simulated_low", "simulated_high", "p_value", "agrees"]
"""The columns of ``simulator_check.csv``."""

DISAGREE_BELOW = 0.01
"""A statistic disagrees when its two-sided predictive p-value is below this (1% per statistic, so a
check of some 15 statistics warns by chance in about 1 pilot in 7)."""


def simulator_check(pilot: PilotBank, replicates: int = 200, seed: int = 0, *, item_sd: float = 0.0) -> pd.DataFrame:
    """Compare the pilot with ``replicates`` data sets of its layout simulated from its fit.

    Parameters
    ----------
    pilot : PilotBank
    replicates : int
    seed : int
    item_sd : float
        The plan's prompt x comparison SD (logits): each simulated cell's judgments share ``theta_i + e_ij``,
        ``e_ij ~ N(0, item_sd)``, as the plan's studies do. (An annotator effect is not simulated here: the
        check keeps the pilot's cells, not who judged them.)

    Returns
    -------
    DataFrame
        :data:`CHECK_COLUMNS`, one row per statistic: ``share of judgments = v`` for every judgment value,
        for a pilot of votes ``share of cells of n votes with net rating k`` (n the most common number of
        votes per cell; 3 workers who never tie cannot give 0 or +-2), and ``mean judgment, B vs A``
        per pair. ``pilot`` is its value in the pilot, ``simulated_*`` the mean and central 95% range over
        the simulated data sets, ``p_value`` the two-sided predictive p-value
        ``2 min(P(sim <= pilot), P(sim >= pilot))`` (capped at 1) and ``agrees`` whether it is at least
        :data:`DISAGREE_BELOW`.
    """
    rng = np.random.default_rng(seed)
    n = pilot.counts.sum(axis=-1).astype(np.int64)  # (I, J) judgments per cell
    if item_sd > 0:
        theta = pilot.true_theta()[:, None] + item_sd * rng.standard_normal((replicates, *n.shape))  # (R, I, J)
        probs = judgment_probs(theta, pilot.alpha, pilot.b)  # (R, I, J, K)
    else:
        probs = category_probs(pilot.true_theta(), pilot.alpha, pilot.b)  # (I, J, K)
    probs = probs / probs.sum(axis=-1, keepdims=True)
    simulated = rng.multinomial(n, probs, size=None if item_sd > 0 else (replicates, *n.shape))  # (R, I, J, K)
    observed = _statistics(pilot, pilot.counts[None], n)
    found = _statistics(pilot, simulated, n)
    rows = []
    for name, value in observed.items():
        sims = found[name]
        p = min(1.0, 2 * min(np.mean(sims <= value[0]), np.mean(sims >= value[0])))
        rows.append(
            {
                "check": name,
                "pilot": float(value[0]),
                "simulated_mean": float(sims.mean()),
                "simulated_low": float(np.quantile(sims, 0.025)),
                "simulated_high": float(np.quantile(sims, 0.975)),
                "p_value": p,
                "agrees": p >= DISAGREE_BELOW,
            }
        )
    return pd.DataFrame(rows, columns=CHECK_COLUMNS)


def _statistics(pilot: PilotBank, counts: np.ndarray, n: np.ndarray) -> dict[str, np.ndarray]:
    """Each statistic of :func:`simulator_check` over the leading axis of ``counts`` (R, I, J, K)."""
    values = pilot.categories.astype(float)
    total = counts.sum(axis=(1, 2))  # (R, K)
    out = {f"share of judgments = {v:g}": total[:, k] / total.sum(axis=1) for k, v in enumerate(values)}
    if pilot.level == "vote" and (n > 1).any():
        common = int(np.bincount(n[n > 0]).argmax())
        cells = n == common
        net = (counts[..., -1] - counts[..., 0])[:, cells]  # (R, cells)
        for k in range(-common, common + 1):
            out[f"share of cells of {common} votes with net rating {k:+d}"] = np.mean(net == k, axis=1)
    sums = (counts * values).sum(axis=(2, 3))  # (R, I)
    judged = counts.sum(axis=(2, 3))
    with np.errstate(invalid="ignore", divide="ignore"):
        means = sums / judged
    for i, (a, b) in enumerate(pilot.pair_names()):
        out[f"mean judgment, {b} vs {a}"] = means[:, i]
    return out


def disagreements(check: pd.DataFrame) -> list[str]:
    """The statistics on which the simulator and the pilot disagree, each in words (for a warning)."""
    return [
        f"{r.check}: pilot {r.pilot:.3g}, simulated {r.simulated_low:.3g} to {r.simulated_high:.3g}"
        for r in check.itertuples()
        if not r.agrees
    ]
