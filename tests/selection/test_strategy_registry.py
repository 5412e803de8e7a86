"""Adding a selection strategy is one registry entry (issue 10): a throw-away strategy ("first_k",
the first k prompts in file order) registered here appears in the leave-one-out curve, in the
exported subset, in ``python -m lib select --strategies first_k`` and on the page's checkboxes."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from lib.io.paths import ROOT
from lib.irt.simulate import simulate_grm
from lib.selection.strategies import STRATEGIES, Ask, Strategy


class FirstK(Strategy):
    name = "first_k"
    label = "First k prompts"
    help = "the first k prompts in file order"

    def select(self, ask: Ask) -> np.ndarray:
        return np.flatnonzero(ask.remaining)[None]


@pytest.fixture
def first_k():
    STRATEGIES["first_k"] = FirstK()
    yield STRATEGIES["first_k"]
    del STRATEGIES["first_k"]


def test_first_k_in_the_curve_and_the_subset(first_k, codes_to_matrix):
    from lib.selection.calibration import make_calibration
    from lib.selection.curve import loo_curve
    from lib.selection.subset import select_subset

    sim = simulate_grm(6, 12, seed=3)
    rm = codes_to_matrix(sim.codes)
    cal = make_calibration(rm, "fast")
    curve = loo_curve(sim.codes, cal, ["first_k", "top_alpha"], [2, 12], seed=0)
    assert list(curve.summary["strategy"].unique()) == ["top_alpha", "first_k"]  # registry order
    # with every prompt both strategies use the same prompts, so the same SE
    se = curve.summary.set_index(["strategy", "k"])["se_mean"]
    assert se[("first_k", 12)] == pytest.approx(se[("top_alpha", 12)])
    subset = select_subset(cal, "first_k", 3, prompt_ids=rm.prompt_ids)
    assert list(subset["prompt_id"]) == ["p0", "p1", "p2"] and list(subset["rank"]) == [1, 2, 3]


def test_first_k_through_the_command_line(first_k, tmp_path, capsys):
    from lib.cli import main

    sim = simulate_grm(6, 12, seed=3)
    long = pd.DataFrame(
        [
            {"prompt": f"p{j}", "system": s, "score": score}
            for j in range(12)
            for s, score in zip("ABCD", [0, sim.codes[0, j] % 3, 1, 2], strict=True)
        ]
    )
    src = tmp_path / "ratings.csv"
    long.to_csv(src, index=False)
    out = tmp_path / "out"
    status = main(
        [
            "select",
            "--input",
            str(src),
            "--format",
            "ratings",
            "--strategies",
            "first_k",
            "--k",
            "2,5",
            "--no-merge",
            "--out",
            str(out),
        ]
    )
    assert status == 0, capsys.readouterr().err
    curve = pd.read_csv(out / "selection_curve.csv")
    assert set(curve["strategy"]) == {"first_k"} and list(curve["k"]) == [2, 5]
    subset = pd.read_csv(out / "subset_first_k.csv")
    assert list(subset["prompt_id"].iloc[:2]) == ["p0", "p1"]


def test_first_k_on_the_page(first_k, monkeypatch, tmp_path):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("EVAL_CACHE_DIR", str(tmp_path))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180).run()
    at.switch_page("pages/selection.py").run()
    for name in STRATEGIES:
        if name not in ("first_k", "top_alpha"):
            at.checkbox(key=f"selection_use_{name}").uncheck()
    at.run()
    assert not at.exception and not at.error
    assert at.checkbox(key="selection_use_first_k").label == "First k prompts"
    needed = next(d.value for d in at.dataframe if "k_needed" in d.value.columns)
    assert list(needed["strategy"]) == ["Prompt weighted (top alpha)", "First k prompts"]
