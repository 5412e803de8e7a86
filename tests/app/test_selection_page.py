"""AppTest of the Prompt selection page on bundled data (fast calibration: MAP fits)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from lib.inputs import bundled_input
from lib.selection.settings import DEFAULT_TARGET_SE
from tests.app.shown import unescaped

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


def test_default_data_shows_curve_needed_table_what_if_and_the_few_comparisons_warning(at):
    assert not at.exception and not at.error
    specs = chart_titles(at)
    assert len(specs) == 2  # SE-vs-k and the adaptive what-if
    assert "SE of the held-out ability" in specs[0] and "fast calibration" in specs[0]
    assert "Adaptive what-if" in specs[1]
    needed = needed_table(at)
    assert len(needed) == 6 and list(needed.columns) == ["strategy", "target_se", "k_needed", "se_best"]
    # LAMP has 3 comparisons: each leave-one-out calibration rests on 2 of them
    assert any("3 comparisons" in w.value and "mostly prior" in w.value for w in at.warning)
    # one absolute target for both modes, the same in the table, the heading and the what-if
    assert at.number_input(key="selection_target").value == DEFAULT_TARGET_SE
    assert (needed["target_se"] == DEFAULT_TARGET_SE).all()
    assert any(h.value == "Prompts needed for SE <= 0.300" for h in at.subheader)
    assert any("Prompts until SE <= 0.300" in m.value for m in at.markdown)
    assert not needed["k_needed"].astype(str).isin(["None", "<NA>", "nan"]).any()
    at.radio(key="selection_mode").set_value("full").run()
    assert not at.exception and not at.error
    assert at.number_input(key="selection_target").value == DEFAULT_TARGET_SE
    assert st_fit_untouched(at)


def st_fit_untouched(at: AppTest) -> bool:
    """The selection never replaces the fit the Abilities page shows."""
    return at.session_state["fit"] is None


def test_what_if_on_a_real_comparison_and_a_bad_k_grid(at):
    at.selectbox(key="selection_which").set_value("Human-edited vs AI-generated").run()
    assert not at.exception and not at.error
    assert any("Prompts until SE" in m.value for m in at.markdown)
    at.text_input(key="selection_ks").set_value("5, 500").run()
    assert not at.exception
    assert any("between 1 and the number of prompts (200)" in unescaped(e.value) for e in at.error)
    at.text_input(key="selection_ks").set_value("5, 50").run()
    for box in at.checkbox:
        if box.key.startswith("selection_use_"):
            box.uncheck()
    at.run()
    assert [unescaped(e.value) for e in at.error] == ["choose at least one strategy"]


def test_hanna_means_informed_strategies_need_few_prompts_at_the_default_target(at):
    at.switch_page("pages/data.py").run()
    at.radio(key="dataset").set_value("hanna_means").run()
    # the settings are chosen before the page opens on HANNA: a curve of every strategy first (7 s)
    # would be thrown away (unchecking boxes on the page: test_what_if_on_a_real_comparison_and_a_bad_k_grid)
    off = ("max_info", "group", "cat_info")
    for name in off:
        at.session_state[f"selection_use_{name}"] = False
    at.session_state["selection_random"] = 5
    at.switch_page("pages/selection.py").run()
    assert not at.exception and not at.error
    assert not any(at.checkbox(key=f"selection_use_{name}").value for name in off)
    assert at.number_input(key="selection_random").value == 5
    assert any("55 comparisons" in unescaped(m.value) for m in at.markdown)
    assert not any("mostly prior" in w.value for w in at.warning)
    needed = needed_table(at).set_index("strategy")["k_needed"]
    assert list(needed.index) == ["Random", "Prompt weighted (top alpha)", "Adaptive: min expected posterior variance"]
    # a target taken from the curve's end needed all 96 prompts for every strategy
    assert int(needed["Prompt weighted (top alpha)"]) < 96
    assert int(needed["Adaptive: min expected posterior variance"]) < 96


def test_file_name_is_text_and_too_few_comparisons_is_an_error(at):
    lamp = bundled_input("lamp_rankings", None)
    name = "**bold** [link](http://example.com) `x`.csv"
    at.session_state["analysis_input"] = dataclasses.replace(lamp, source=name)
    at.run()
    assert not at.exception
    lines = [m.value for m in at.markdown if "comparisons x" in m.value]
    assert lines and "**bold**" not in lines[0] and name in unescaped(lines[0])
    rm = lamp.matrix
    two = dataclasses.replace(rm, u=rm.u[:2], comparisons=rm.comparisons.iloc[:2], n_votes=rm.n_votes[:2])
    at.session_state["analysis_input"] = dataclasses.replace(lamp, matrix=two, source=name)
    at.run()
    assert not at.exception
    assert len(at.error) == 1 and "at least 3 comparisons" in unescaped(at.error[0].value)
