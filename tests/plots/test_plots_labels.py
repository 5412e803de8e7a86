"""Issue 17, item 2: every figure builder escapes the user strings it draws (lib.plots.labels), so
plotly.js shows markup in a system, comparison or prompt name as text instead of reading its tags."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from lib.plots.irt import ability_density, ability_forest, net_rating_heatmap
from lib.plots.labels import label
from lib.plots.ranking import skill_forest
from lib.plots.selection import what_if_chart
from lib.selection.adaptive import WhatIf

SPAN = '<span style="fill:url(http://127.0.0.1:9/x.svg#x)">s</span>'
LINK = "<a href=http://127.0.0.1:9/y>y</a>"


def _markup(fig) -> bool:
    """Whether any text of the figure holds a raw tag of the hostile names."""
    text = json.dumps(fig.to_plotly_json(), default=str)
    return "<span" in text or "<a " in text


def _figures():
    comparisons, prompts = [f"{SPAN} vs {LINK}", "b vs a"], [LINK, "p2"]
    table = pd.DataFrame(
        {
            "comparison": comparisons,
            "theta_mean": [0.2, -0.1],
            "hdi_low": [-0.5, -0.8],
            "hdi_high": [0.9, 0.6],
            "p_b_better": [0.6, 0.4],
        }
    )
    board = pd.DataFrame(
        {
            "system": [SPAN, LINK],
            "skill_mean": [0.1, -0.1],
            "skill_low": [-1, -1],
            "skill_high": [1, 1],
            "p_best": [0.5, 0.5],
        }
    )
    path = pd.DataFrame(
        {
            "order": "random",
            "step": [1, 2],
            "prompt_id": prompts,
            "rating": [1, -1],
            "theta_mean": [0.1, 0.2],
            "theta_sd": [0.9, 0.8],
            "theta_lo": [-1, -1],
            "theta_hi": [1, 1],
        }
    )
    return {
        "heatmap": net_rating_heatmap(np.array([[1.0, -1.0], [0.0, 2.0]]), comparisons, prompts),
        "density": ability_density(np.random.default_rng(0).normal(size=(50, 2)), comparisons),
        "forest": ability_forest(table),
        "skills": skill_forest(board),
        "what-if": what_if_chart(WhatIf(path, {"random": None}, 0.15, None), 0.3),
    }


@pytest.mark.parametrize("name", list(_figures()))
def test_markup_in_names_reaches_no_figure_raw(name):
    fig = _figures()[name]
    assert not _markup(fig)
    assert label(LINK) in json.dumps(fig.to_plotly_json(), default=str)  # shown, as text
