"""AppTest of the Prompt selection page on bundled data (fast calibration: MAP fits)."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from lib.selection import default_k_grid

APP = str(Path(__file__).resolve().parents[2] / "app.py")


@pytest.fixture
def at(monkeypatch, tmp_path):
    monkeypatch.setenv("EVAL_CACHE_DIR", str(tmp_path))
    at = AppTest.from_file(APP, default_timeout=180).run()
    at.switch_page("pages/selection.py").run()
    return at


def needed_table(at: AppTest):
    return next(d.value for d in at.dataframe if "k_needed" in d.value.columns)


def chart_titles(at: AppTest) -> list[str]:
    return [el.proto.spec for el in at.get("plotly_chart")]


def test_default_data_shows_curve_needed_table_and_what_if(at):
    assert not at.exception and not at.error
    specs = chart_titles(at)
    assert len(specs) == 2  # SE-vs-k and the adaptive what-if
    assert "SE of the held-out ability" in specs[0] and "fast calibration" in specs[0]
    assert "Adaptive what-if" in specs[1]
    needed = needed_table(at)
    assert len(needed) == 6 and set(needed.columns) == {"strategy", "target_se", "k_needed"}
    # every comparison of LAMP has all 200 prompts: with all of them each strategy meets a target
    # set 10% above the all-prompt SE, at a k of the default grid
    assert needed["k_needed"].notna().all()
    assert set(needed["k_needed"]) <= set(default_k_grid(200))


def test_what_if_on_a_real_comparison_and_a_bad_k_grid(at):
    at.selectbox(key="selection_which").set_value("Human-edited vs AI-generated").run()
    assert not at.exception and not at.error
    assert any("Prompts until SE" in m.value for m in at.markdown)
    at.text_input(key="selection_ks").set_value("5, 500").run()
    assert not at.exception
    assert any("between 1 and the number of prompts (200)" in e.value for e in at.error)
    at.text_input(key="selection_ks").set_value("5, 50").run()
    for box in at.checkbox:
        if box.key.startswith("selection_use_"):
            box.uncheck()
    at.run()
    assert [e.value for e in at.error] == ["choose at least one strategy"]


def test_hanna_means_criterion_with_three_strategies(at):
    at.switch_page("pages/data.py").run()
    at.radio(key="dataset").set_value("hanna_means").run()
    at.switch_page("pages/selection.py").run()
    for name in ("max_info", "group", "cat_info"):
        at.checkbox(key=f"selection_use_{name}").uncheck()
    at.number_input(key="selection_random").set_value(5).run()
    assert not at.exception and not at.error
    assert any("55 comparisons" in m.value for m in at.markdown)
    needed = needed_table(at)
    assert list(needed["strategy"]) == ["Random", "Prompt weighted (top alpha)",
                                        "Adaptive: min expected posterior variance"]
