"""AppTest of the Data, Abilities and Prompts pages on the bundled data (MAP fits: seconds)."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[2] / "app.py")


@pytest.fixture
def at(monkeypatch, tmp_path):
    monkeypatch.setenv("EVAL_CACHE_DIR", str(tmp_path))
    return AppTest.from_file(APP, default_timeout=180).run()


def fit_map(at: AppTest) -> AppTest:
    at.switch_page("pages/abilities.py").run()
    at.selectbox(key="abil_sampler").set_value("map").run()
    at.button(key="abil_fit").click().run()
    return at


def test_data_page_summarises_the_default_lamp_rankings(at):
    assert not at.exception and not at.error
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["systems"] == "3"
    assert metrics["comparisons"] == "3"
    assert metrics["prompts"] == "200"
    assert metrics["votes"] == "1809"
    assert metrics["annotators"] == "13"
    assert any("Fleiss' kappa" in c.value for c in at.caption)


def test_data_page_switches_to_rome_with_a_criterion(at):
    at.radio(key="dataset").set_value("rome_bestworst").run()
    assert not at.exception and not at.error
    assert at.selectbox(key="data_criterion").value == "consistency"
    at.selectbox(key="data_criterion").set_value("fluency").run()
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["votes"] == "480" and metrics["prompts"] == "60"


def test_abilities_page_fits_map_and_shows_the_forest_plot(at):
    fit_map(at)
    assert not at.exception and not at.error
    table = at.dataframe[0].value
    assert list(table["comparison"]) == ["AI-generated vs AI-edited", "Human-edited vs AI-edited",
                                         "Human-edited vs AI-generated"]
    # Writers preferred human-edited text over AI-generated text in LAMP.
    assert table.set_index("comparison").loc["Human-edited vs AI-generated", "theta_mean"] > 0
    assert any("MAP" in w.value for w in at.warning)


def test_prompts_page_after_a_fit_shows_alpha_table_and_texts(at):
    fit_map(at)
    at.switch_page("pages/prompts.py").run()
    assert not at.exception and not at.error
    table = at.dataframe[0].value
    assert len(table) == 200 and (table["alpha_mean"] > 0).all()
    assert len(at.text) >= 3  # prompt text and both responses


def test_prompts_page_without_fit_says_what_to_do(at):
    at.switch_page("pages/prompts.py").run()
    assert not at.exception
    assert any("Abilities" in i.value for i in at.info)


def test_reopening_the_app_shows_the_last_fit_at_once(at):
    fit_map(at)
    again = AppTest.from_file(APP, default_timeout=180).run()  # a new session, same disk cache
    again.switch_page("pages/abilities.py").run()
    assert not again.exception
    assert len(again.dataframe) == 1
    assert any("Showing the fit with map" in c.value for c in again.caption)


@pytest.mark.parametrize("key", ["pandalm_pairwise", "hanna_means", "science_mirt", "lsat7"])
def test_data_page_reads_every_bundled_data_set(at, key):
    at.radio(key="dataset").set_value(key).run()
    assert not at.exception and not at.error
    metrics = {m.label: m.value for m in at.metric}
    assert int(metrics.get("prompts", metrics.get("items"))) > 1
    assert at.session_state["analysis_input"].matrix.shape[0] >= 2


def test_abilities_page_runs_the_default_sampler_with_diagnostics(at):
    at.radio(key="dataset").set_value("rome_bestworst").run()
    at.switch_page("pages/abilities.py").run()
    assert at.selectbox(key="abil_sampler").value == "numpyro"
    at.number_input(key="abil_chains").set_value(2)
    at.number_input(key="abil_draws").set_value(100)
    at.number_input(key="abil_tune").set_value(100).run()
    at.button(key="abil_fit").click().run()
    assert not at.exception and not at.error
    metrics = {m.label: m.value for m in at.metric}
    assert {"max R-hat", "min bulk ESS", "divergences"} <= set(metrics)
    table = at.dataframe[0].value
    assert table["hdi_low"].lt(table["hdi_high"]).all()
    assert table["p_b_better"].between(0, 1).all()
