"""What to buy next: the planned designs reach the target width when simulated, and a useless judge buys nothing."""

from __future__ import annotations

import numpy as np
import pytest

from lib.errors import DesignError, SettingsError
from lib.judges.budget import purchase_plan
from lib.judges.ppi import classical_fit, design, skill_fit
from lib.judges.simulate import simulate_items

SKILLS = np.linspace(-1, 1, 6)
SYSTEMS = [f"s{k}" for k in range(6)]


def pilot(rng, copy: float, bias: float, n: int = 300):
    first, second, y, yhat = simulate_items(rng, SKILLS, n, copy=copy, bias=bias)
    return design(first, second, 6), y, yhat


def widest_half_width(rng, n: int, big_n: int, copy: float, bias: float, sets: int = 30) -> float:
    """Mean over simulated studies of the widest 95% half-width (PPI++ when big_n > 0, else humans only)."""
    widths = []
    for _ in range(sets):
        first, second, y, yhat = simulate_items(rng, SKILLS, n + big_n, copy=copy, bias=bias)
        x = design(first, second, 6)
        fit = skill_fit(x[:n], y[:n], yhat[:n], x[n:], yhat[n:]) if big_n else classical_fit(x, y, what="votes")
        low, high = fit.interval()
        widths.append(((high - low) / 2).max())
    return float(np.mean(widths))


def test_the_planned_designs_reach_the_target_width_in_simulation():
    rng = np.random.default_rng(7)
    x, y, yhat = pilot(rng, copy=0.6, bias=1.0)
    plan = purchase_plan(x, y, yhat, SYSTEMS, half_width=0.25, human_item_cost=1.0, judge_item_cost=0.02)
    alone, both = plan.table.iloc[0], plan.table.iloc[1]
    assert both["cost"] < alone["cost"] and both["human_items"] < alone["human_items"] and both["judge_only_items"] > 0
    assert (plan.systems["ppi_corr"] > 0.2).all()
    # the pilot's sigma and rho are estimates (300 items) and the widest of 6 intervals varies: 10%
    assert widest_half_width(rng, int(alone["human_items"]), 0, 0.6, 1.0) == pytest.approx(0.25, rel=0.1)
    assert widest_half_width(rng, int(both["human_items"]), int(both["judge_only_items"]), 0.6, 1.0) == pytest.approx(
        0.25, rel=0.1
    )


def test_a_judge_that_only_guesses_buys_nothing():
    x, y, yhat = pilot(np.random.default_rng(8), copy=0.0, bias=0.0)
    plan = purchase_plan(x, y, yhat, SYSTEMS, half_width=0.3, human_item_cost=1.0, judge_item_cost=0.01)
    alone, both = plan.table.iloc[0], plan.table.iloc[1]
    assert (plan.systems["ppi_corr"].abs() < 0.2).all()
    assert both["cost"] >= 0.97 * alone["cost"]


def test_bad_settings_and_tiny_pilots_are_refused():
    x, y, yhat = pilot(np.random.default_rng(9), copy=0.5, bias=0.0)
    with pytest.raises(SettingsError, match="half-width"):
        purchase_plan(x, y, yhat, SYSTEMS, half_width=0.0, human_item_cost=1.0, judge_item_cost=0.1)
    with pytest.raises(DesignError, match="at least 20"):
        purchase_plan(x[:10], y[:10], yhat[:10], SYSTEMS, half_width=0.2, human_item_cost=1.0, judge_item_cost=0.1)
