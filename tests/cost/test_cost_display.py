"""lib.display: tables as a reader sees them."""

from __future__ import annotations

import numpy as np
import pandas as pd

from lib.cost.analysis import analyse
from lib.cost.costs import Weights
from lib.display import readable


def test_readable_tables_spell_out_missing_and_infinite_values(effort_study):
    res = analyse(effort_study, weights=Weights(1, 0, 1, 1))  # solving alone costs nothing: never pays
    shown = readable(res.cost_terms)
    assert shown.break_even_n.tolist() == ["—", "—"] and shown.n_star.tolist() == ["∞", "∞"]
    assert shown.loss_with.tolist() == res.cost_terms.loss_with.tolist()  # finite columns stay numbers
    table = pd.DataFrame(
        {
            "x": [1.5, np.nan, -np.inf],
            "n": pd.array([1, None, 2], dtype="Int64"),
            "p": [0.000123, np.nan, 0.5],
            "name": ["a", None, "c"],
        }
    )
    out = readable(table, formats={"p": "{:.2e}"})
    assert out.x.tolist() == ["1.5", "—", "-∞"] and out.n.tolist() == ["1", "—", "2"]
    assert out.p.tolist() == ["1.23e-04", "—", "5.00e-01"]
    assert out.name.tolist() == ["a", "—", "c"]
