"""AppTest of the Study planner page: a tiny plan from typed-in assumptions, the pilot's summary, bad
grids as messages, and the scheduler field only when the operator allows it."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from lib.planning.choice import CHEAPEST_COLUMNS
from lib.planning.nuts import NUTS_COLUMNS
from lib.planning.power import COLUMNS, PAIR_COLUMNS, RANKING_COLUMNS
from tests.app.shown import unescaped

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "planner.py")


@pytest.fixture
def at(monkeypatch, tmp_path):
    monkeypatch.setenv("EVAL_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("EVAL_ALLOW_SCHEDULER", raising=False)
    return AppTest.from_file(PAGE, default_timeout=180).run()


def typed_tiny_plan(at: AppTest) -> AppTest:
    at.radio(key="planner_source").set_value("Typed in").run()
    at.number_input(key="planner_effect").set_value(0.8)
    at.text_input(key="planner_prompts").set_value("5, 10")
    at.text_input(key="planner_annotators").set_value("1")
    at.multiselect(key="planner_analyses").set_value(["sign_test", "t_test"])
    at.number_input(key="planner_replicates").set_value(4)
    return at.run()


def test_a_tiny_plan_shows_curves_cheapest_design_costs_and_downloads(at):
    typed_tiny_plan(at)
    assert not at.exception and not at.error
    assert not at.get("plotly_chart")  # nothing simulated before the button
    at.button(key="planner_run").click().run()
    assert not at.exception and not at.error
    specs = [el.proto.spec for el in at.get("plotly_chart")]
    assert len(specs) == 2 and "Power against prompts" in specs[0] and "Power against annotators" in specs[1]
    best = next(d.value for d in at.dataframe if "saving" in d.value.columns)
    costs = next(d.value for d in at.dataframe if "cheapest" in d.value.columns)
    assert list(best["strategy"]) == ["random", "random", "top_alpha", "top_alpha"]
    assert list(best.columns) == CHEAPEST_COLUMNS
    assert list(costs.columns) == [*COLUMNS, "cheapest"] and len(costs) == 8
    reached = best[best["reached"]]
    assert costs["cheapest"].sum() == len(reached)
    nominal = best[best["critical_z"].isna()]  # the Studies page default: at an analysis's usual level only
    assert list(at.session_state["planner_best"]["strategy"]) == list(nominal["strategy"])
    ranking = next(d.value for d in at.dataframe if "best_first" in d.value.columns)
    assert list(ranking.columns) == RANKING_COLUMNS and ranking["best_first"].between(0, 1).all()
    labels = [b.proto.label for b in at.get("download_button")]
    assert labels == ["power.csv", "cheapest.csv", "ranking.csv", "power_pairs.csv", "calibration.csv"]
    validity = next(d.value for d in at.dataframe if "valid" in d.value.columns)
    assert validity["false_detection"].between(0, 1).all() and validity["valid"].dtype == bool
    assert not any(b.key == "planner_nuts_run" for b in at.button)  # no GRM analysis to check
    assert not any(el.label.startswith("Dask scheduler") for el in at.text_input)
    # the plan stays on screen while the settings stay; changing them asks for a new run
    at.text_input(key="planner_annotators").set_value("1, 2").run()
    assert not at.get("plotly_chart") and any("Run plan" in i.value for i in at.info)


def test_grm_map_shows_its_threshold_and_a_nuts_check_compares_it(at):
    typed_tiny_plan(at)
    at.text_input(key="planner_prompts").set_value("6")
    at.multiselect(key="planner_analyses").set_value(["grm_map"])
    at.button(key="planner_run").click().run()
    assert not at.exception and not at.error
    assert [b.proto.label for b in at.get("download_button")][-1] == "calibration.csv"
    at.number_input(key="planner_nuts_studies").set_value(1)
    at.number_input(key="planner_nuts_draws").set_value(50)
    at.button(key="planner_nuts_run").click().run()
    assert not at.exception and not at.error
    table = next(d.value for d in at.dataframe if "nuts_mean" in d.value.columns)
    assert list(table.columns) == NUTS_COLUMNS and len(table) == 1 and table["analysis"].eq("grm_map").all()
    assert any("The intervals agree on excluding 0 in" in m.value for m in at.markdown)
    assert [b.proto.label for b in at.get("download_button")][-1] == "nuts_check.csv"


def test_bad_grid_is_a_message_and_the_pilot_is_summarised(at):
    assert not at.exception and not at.error
    assert any("Planning from the pilot" in m.value and "comparisons x" in m.value for m in at.markdown)
    at.text_input(key="planner_prompts").set_value("5, many").run()
    assert not at.exception
    assert [unescaped(e.value) for e in at.error] == [
        "Prompts per comparison must be whole numbers separated by commas (got '5, many')"
    ]
    at.text_input(key="planner_prompts").set_value("5000").run()
    assert any("5000 prompts asked but the prompt bank holds" in e.value for e in at.error)


def test_the_scheduler_field_only_when_the_operator_allows_it(monkeypatch, tmp_path):
    monkeypatch.setenv("EVAL_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("EVAL_ALLOW_SCHEDULER", "1")
    at = typed_tiny_plan(AppTest.from_file(PAGE, default_timeout=180).run())
    assert at.text_input(key="planner_scheduler").value == ""
    at.text_input(key="planner_scheduler").set_value("tcp://127.0.0.1:1").run()
    at.button(key="planner_run").click().run()
    assert not at.exception
    assert any("tcp://127.0.0.1:1" in unescaped(e.value) and "reach" in e.value for e in at.error)


def test_the_selection_page_offers_the_scheduler_in_full_mode_only_when_allowed(monkeypatch, tmp_path):
    monkeypatch.setenv("EVAL_CACHE_DIR", str(tmp_path))
    selection = str(Path(PAGE).with_name("selection.py"))
    for allowed, shown in (("0", False), ("1", True)):
        monkeypatch.setenv("EVAL_ALLOW_SCHEDULER", allowed)
        at = AppTest.from_file(selection, default_timeout=180).run()
        assert not any(t.key == "selection_scheduler" for t in at.text_input)  # fast mode runs here
        at.radio(key="selection_mode").set_value("full").run()
        assert not at.exception
        assert any(t.key == "selection_scheduler" for t in at.text_input) == shown


def test_the_pilot_is_checked_before_any_power_and_the_binding_pair_is_named(at):
    """Issue 16 items 2, 3, 5: the simulator check comes first, power per pair, the binding pair named."""
    assert not at.exception and not at.error
    assert any("a simulated annotator gives one judgment" in unescaped(c.value) for c in at.caption)
    at.number_input(key="planner_item_sd").set_value(0.0)  # the nominal tests: no calibration under the null
    at.number_input(key="planner_annotator_sd").set_value(0.0)
    at.number_input(key="planner_effect").set_value(0.05)
    at.text_input(key="planner_prompts").set_value("5, 10")
    at.text_input(key="planner_annotators").set_value("1")
    at.multiselect(key="planner_strategies").set_value(["random"])
    at.multiselect(key="planner_analyses").set_value(["t_test"])
    at.number_input(key="planner_replicates").set_value(4)
    at.number_input(key="planner_target").set_value(0.05)
    at.run()
    at.button(key="planner_run").click().run()
    assert not at.exception and not at.error
    headers = [h.value for h in at.subheader]
    assert headers.index("Does the simulator look like the pilot?") < headers.index("Power of every pair")
    pairs = next(d.value for d in at.dataframe if "system_b" in d.value.columns)
    assert list(pairs.columns) == PAIR_COLUMNS
    binding = [unescaped(i.value) for i in at.info if "binds" in i.value]
    assert binding and " vs " in binding[0]


def test_a_reload_plans_from_the_same_data(monkeypatch, tmp_path):
    """Issue 16 item 6: the planner's URL had no data setting, so a reload planned from the default data."""
    monkeypatch.setenv("EVAL_CACHE_DIR", str(tmp_path))
    first = AppTest.from_file(PAGE, default_timeout=180)
    first.session_state["view_dataset"] = "pandalm_pairwise"  # chosen on the Data page
    first.run()
    assert not first.exception and first.query_params["data"] == "pandalm_pairwise"
    reloaded = AppTest.from_file(PAGE, default_timeout=180)
    reloaded.query_params.update(dict(first.query_params))
    reloaded.run()
    assert not reloaded.exception
    assert any(
        "Planning from the pilot" in m.value and "pandalm" in unescaped(m.value).lower() for m in reloaded.markdown
    )


def test_a_preset_brings_card_et_al_components_and_says_which_tests_do_not_hold_their_level(at):
    """Issue 16 item 7: Card et al.'s high-variance setting on the page, the mixed models offered by default;
    issue 30: the t-test a user runs declares differences that are not there, and the page says so."""
    at.radio(key="planner_source").set_value("Typed in").run()
    at.selectbox(key="planner_preset").set_value("card2020_high").run()
    assert not at.exception and not at.error
    assert at.selectbox(key="planner_response").disabled
    assert any("Preset card2020_high: normal response model" in c.value for c in at.caption)
    assert {"lmm", "lmm_reml"} <= set(at.multiselect(key="planner_analyses").value)
    at.text_input(key="planner_prompts").set_value("50")
    at.text_input(key="planner_annotators").set_value("3")
    at.multiselect(key="planner_strategies").set_value(["random"])
    at.multiselect(key="planner_analyses").set_value(["t_test", "lmm_reml"])
    at.number_input(key="planner_replicates").set_value(12)
    at.run()
    at.button(key="planner_run").click().run()
    assert not at.exception and not at.error
    notes = [unescaped(w.value) for w in at.warning if "invalid at its nominal 5% level" in w.value]
    assert any(n.startswith("t_test is invalid") for n in notes), notes


def test_the_pilots_variance_components_are_shown_and_can_be_stated(at):
    assert any("variance components from the pilot" in unescaped(c.value) for c in at.caption)
    at.number_input(key="planner_annotator_sd").set_value(0.5).run()
    assert not at.exception and not at.error
    assert any("and 0.50 (annotator x comparison)" in unescaped(c.value) for c in at.caption)


def test_the_page_and_the_command_share_one_default(at):
    """Issue 29: the page simulated 100 studies of 4 analyses, the command 200 of 6, so the same pilot gave
    different powers. Both now take every default from lib.planning.grid.PLAN_DEFAULTS."""
    import argparse

    from lib.commands.plan import add_parser
    from lib.planning.design import Assumptions
    from lib.planning.grid import PLAN_DEFAULTS, default_analyses

    parser = argparse.ArgumentParser()
    add_parser(parser.add_subparsers())
    command = parser.parse_args(["plan", "--out", "x"])
    at.radio(key="planner_source").set_value("Typed in").run()
    assert not at.exception and not at.error
    d, typed = PLAN_DEFAULTS, Assumptions()
    page = {
        "replicates": at.number_input(key="planner_replicates").value,
        "analyses": at.multiselect(key="planner_analyses").value,
        "prompts": at.text_input(key="planner_prompts").value,
        "annotators": at.text_input(key="planner_annotators").value,
        "strategies": at.multiselect(key="planner_strategies").value,
        "target": at.number_input(key="planner_target").value,
        "seconds": at.number_input(key="planner_seconds").value,
        "rate": at.number_input(key="planner_rate").value,
        "seed": at.number_input(key="planner_seed").value,
    }
    assert page == {
        "replicates": d.replicates,
        "analyses": default_analyses(typed),
        "prompts": ", ".join(map(str, d.prompts_for(typed.bank_size))),
        "annotators": ", ".join(map(str, d.annotators)),
        "strategies": d.strategies(),
        "target": d.target_power,
        "seconds": d.seconds_per_judgment,
        "rate": d.cost_per_hour,
        "seed": d.seed,
    }
    assert (command.replicates, command.target_power, command.seed) == (d.replicates, d.target_power, d.seed)
    assert (command.seconds_per_judgment, command.cost_per_hour) == (d.seconds_per_judgment, d.cost_per_hour)
    assert command.annotators == ",".join(map(str, d.annotators)) and command.strategies == ",".join(d.strategies())
    assert command.prompts is None and command.analyses is None  # the bank's share of d.prompts, default_analyses


def test_a_reload_shows_the_plan_run_before(at, monkeypatch, tmp_path):
    """Issue 29: reloading the Study planner dropped the plan. Its settings are bound to the URL (the browser
    writes every value that is not the default there, tests/browser/test_planner_flow.py); a new session
    opened on that URL shows the plan from the plan cache, without a click."""
    typed_tiny_plan(at)
    at.button(key="planner_run").click().run()
    before = next(d.value for d in at.dataframe if "saving" in d.value.columns)
    again = AppTest.from_file(PAGE, default_timeout=180)
    again.query_params.update(
        {
            "planner_source": "Typed in",
            "planner_effect": "0.8",
            "planner_prompts": "5, 10",
            "planner_annotators": "1",
            "planner_analyses": ["sign_test", "t_test"],
            "planner_replicates": "4",
        }
    )
    again.run()
    assert not again.exception and not again.error
    assert any("shown from the plan cache" in c.value for c in again.caption)
    after = next(d.value for d in again.dataframe if "saving" in d.value.columns)
    pd.testing.assert_frame_equal(after, before)
    assert len(again.get("plotly_chart")) == 2
