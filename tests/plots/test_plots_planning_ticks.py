"""The planner's power curve counts prompts and annotators in whole numbers (issue 16, item 19)."""

from __future__ import annotations

import pandas as pd
import pytest

from lib.plots.planning import power_curve


@pytest.mark.parametrize(("x", "values"), [("annotators", [1, 2, 3]), ("prompts", [10, 25, 50])])
def test_ticks_are_the_designs_counts(x, values):
    other = {"annotators": "prompts", "prompts": "annotators"}[x]
    plan = pd.DataFrame(
        {
            x: values * 2,
            other: [5] * 3 + [7] * 3,
            "strategy": "random",
            "analysis": "t_test",
            "power": [0.2, 0.5, 0.8] * 2,
            "power_mc_se": 0.01,
            "false_detection": 0.05,
            "valid": True,
            "interval_width": 1.0,
            "kendall_tau": 0.5,
            "judgments": 10,
            "cost": 1.0,
        }
    )
    fig = power_curve(plan, x=x)
    axes = [fig.layout[name] for name in fig.layout if name.startswith("xaxis")]
    assert len(axes) == 2 and all(list(axis.tickvals) == values for axis in axes)
