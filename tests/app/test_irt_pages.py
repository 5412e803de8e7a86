"""AppTest of the Data, Abilities and Prompts pages on the bundled data (MAP fits: seconds)."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from lib.irt.settings import DECISION_NOTE, default_cutpoints, fit_settings


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
    assert list(table["comparison"]) == [
        "AI-generated vs AI-edited",
        "Human-edited vs AI-edited",
        "Human-edited vs AI-generated",
    ]
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


def test_reopening_the_app_shows_the_last_fit_at_once(at, new_session):
    fit_map(at)
    again = new_session().run()  # a new session, same disk cache
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


def test_abilities_page_offers_the_fit_commands_defaults(at):
    """The page's settings are the command's when nothing is chosen (lib.irt.settings.fit_settings), so the
    reference tests, which run the command's defaults, check what the page fits too."""
    at.radio(key="dataset").set_value("science_mirt").run()
    at.switch_page("pages/abilities.py").run()
    defaults = fit_settings(default_cutpoints("responses"))
    shown = {
        "cutpoints": at.selectbox(key="abil_cutpoints").value,
        "sampler": at.selectbox(key="abil_sampler").value,
        **{k: at.number_input(key=f"abil_{k}").value for k in ("chains", "draws", "tune", "seed")},
        "target_ess": at.number_input(key="abil_target").value,
    }
    assert shown == {k: getattr(defaults, k) for k in shown}
    for sampler in ("pymc", "numpyro"):  # a sampler chosen: its sizes as `fit --sampler ...` takes them
        at.selectbox(key="abil_sampler").set_value(sampler).run()
        sizes = fit_settings(sampler=sampler)
        assert [at.number_input(key=f"abil_{k}").value for k in ("draws", "tune", "target")] == [
            sizes.draws,
            sizes.tune,
            sizes.target_ess or 0,
        ]


def test_abilities_page_runs_the_default_sampler_with_diagnostics(at):
    at.radio(key="dataset").set_value("rome_bestworst").run()
    at.switch_page("pages/abilities.py").run()
    assert at.selectbox(key="abil_sampler").value == "numpyro"
    at.number_input(key="abil_chains").set_value(2)
    at.number_input(key="abil_draws").set_value(100)
    at.number_input(key="abil_tune").set_value(100).run()
    at.button(key="abil_fit").click().run()
    # 2 x 100 draws give fewer effective draws than the target: shown as an error, numbers below it.
    assert not at.exception and len(at.error) == 1 and "This fit has not converged" in at.error[0].value
    metrics = {m.label: m.value for m in at.metric}
    assert {"max R-hat", "min bulk ESS", "divergences"} <= set(metrics)
    table = at.dataframe[0].value
    assert table["hdi_low"].lt(table["hdi_high"]).all()
    assert table["p_b_better"].between(0, 1).all()
    assert any(c.value == DECISION_NOTE for c in at.caption)  # how to decide, and its exact null rate
    assert "above 0.98 as B better and below 0.02 as A better" in DECISION_NOTE


def pairwise_input(systems=("*star*", "[x](http://e.com)"), votes=("B", "A", "B", "tie")):
    import pandas as pd

    from lib.inputs import analysis_input

    rows = [
        {
            "prompt": f"q{p}",
            "prompt_text": f"question {p}",
            "system_a": systems[0],
            "system_b": systems[1],
            "annotator": f"r{r}",
            "choice": votes[(p + r) % len(votes)],
        }
        for p in range(6)
        for r in range(3)
    ]
    return analysis_input(pd.DataFrame(rows), "pairwise", file="t.csv", merge_redundant=False)


def test_abilities_page_shows_no_code_comment_and_plain_sampler_names(at):
    at.switch_page("pages/abilities.py").run()
    assert not any("More density curves" in m.value for m in at.markdown)
    box = at.selectbox(key="abil_sampler")
    assert box.options == ["numpyro", "pymc", "nutpie", "map"]


def test_map_results_leave_probability_empty_and_say_what_the_reported_time_measures(at):
    fit_map(at)
    table = at.dataframe[0].value
    assert table["p_b_better"].isna().all() and "contraction" in table.columns
    said = next(s.value for s in at.success if s.value.startswith("Computed in"))
    assert "s on the server: from the start of the run your click began" in said  # what is measured
    assert "Not counted: the click's trip to the server and the browser drawing the page" in said  # what is not


def test_a_degenerate_design_shows_an_error_and_no_tick(at):
    at.session_state["analysis_input"] = pairwise_input(votes=("tie",))
    fit_map(at)
    assert not at.exception
    assert any("tie" in e.value for e in at.error)
    assert not any("✓" in c.value for c in at.sidebar.caption)
    assert len(at.dataframe) == 0


def test_prompts_page_renders_system_names_as_text_and_says_when_no_responses(at):
    at.session_state["analysis_input"] = pairwise_input()
    fit_map(at)
    at.switch_page("pages/prompts.py").run()
    assert not at.exception and not at.error
    heads = [m.value for m in at.markdown if "A:" in m.value or "B:" in m.value]
    assert heads and all("\\*star\\*" in h or "\\[x\\]" in h for h in heads)
    assert any("No response column mapped" in c.value for c in at.caption)
    assert not any("(empty response)" in t.value for t in at.text)


def test_a_corrupt_fit_cache_breaks_no_page(at, new_session, tmp_path):
    fit_map(at)
    for path in (tmp_path / "fits").iterdir():
        path.write_bytes(path.read_bytes()[:20])
    again = new_session().run()
    assert not again.exception
    again.switch_page("pages/abilities.py").run()
    assert not again.exception and len(again.dataframe) == 0
