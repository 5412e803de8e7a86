"""AppTest of the Leaderboard page: opens on HANNA, every bundled data set, uploads, escaped names.

The page script runs on its own (it reads the Data page's choice from session state); Laplace fits
take seconds.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from lib.datasets import DATASETS
from lib.inputs import analysis_input

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "leaderboard.py")


@pytest.fixture
def at(monkeypatch, tmp_path):
    monkeypatch.setenv("EVAL_CACHE_DIR", str(tmp_path))
    return AppTest.from_file(PAGE, default_timeout=180)


def table(at: AppTest) -> pd.DataFrame:
    return next(d.value for d in at.dataframe if d.key == "lb_table")


def test_page_opens_on_hanna_with_table_plots_and_next_batch(at):
    at.run()
    assert not at.exception and not at.error
    assert at.radio(key="lb_source").value == "hanna_means"
    board = table(at)
    assert len(board) == 11 and board["p_best"].sum() == pytest.approx(1.0)
    assert board["bt_rating"].isna().all()  # ratings: no votes for Bradley–Terry, and the page says so
    assert any("Bradley–Terry baseline needs pairwise votes" in i.value for i in at.info)
    charts = [c.proto.id for c in at.get("plotly_chart")]
    assert len(charts) >= 3
    nxt = next(d.value for d in at.dataframe if d.key == "lb_next_table")
    assert list(nxt.columns) == ["system_a", "system_b", "prompt_id", "score"] and len(nxt) == 20


def test_page_switches_to_the_data_pages_three_systems(at):
    at.run()
    at.radio(key="lb_source").set_value("lamp_rankings").run()
    assert not at.exception and not at.error
    assert set(table(at)["system"]) == {"AI-edited", "AI-generated", "Human-edited"}
    assert table(at)["bt_rating"].notna().all()


@pytest.mark.parametrize("key", list(DATASETS))
def test_page_works_on_every_bundled_data_set(at, key):
    at.session_state["view_dataset"] = key
    at.run()
    assert not at.exception
    if DATASETS[key].fmt == "responses":
        assert any("no systems to rank" in e.value for e in at.error)
        return
    assert not at.error
    systems = at.session_state["analysis_input"].matrix.comparisons[["system_a", "system_b"]].stack().nunique()
    assert len(table(at)) == systems


def test_page_ranks_an_upload_and_escapes_its_system_names(at):
    rows = [{"prompt": f"q{p}", "system_a": a, "system_b": b, "annotator": f"r{r}",
             "choice": "B" if (p + r) % 3 else "A"}
            for p in range(8) for r in range(3)
            for a, b in [("*star*", "[x](http://e.com)"), ("*star*", "plain"), ("[x](http://e.com)", "plain")]]
    data = analysis_input(pd.DataFrame(rows), "pairwise", file="<b>t</b>.csv", merge_redundant=False)
    at.session_state["view_dataset"] = "upload"
    at.session_state["analysis_input"] = data
    at.run()
    assert not at.exception and not at.error
    assert set(table(at)["system"]) == {"*star*", "[x](http://e.com)", "plain"}
    shown = " ".join(m.value for m in at.markdown)
    assert "\\<b\\>t\\</b\\>.csv" in shown and "<b>t</b>" not in shown
    assert at.selectbox(key="lb_baseline").options[1:] == ["*star*", "[x](http://e.com)", "plain"]


def test_page_reports_a_bad_baseline_setting_as_an_error_without_a_traceback(at):
    at.run()
    at.selectbox(key="lb_likelihood").set_value("votes").run()
    assert not at.exception
    assert any("votes likelihood needs pairwise votes" in e.value for e in at.error)


def test_nuts_waits_for_the_button(at):
    at.run()
    at.selectbox(key="lb_sampler").set_value("numpyro").run()
    assert not at.exception and not at.error
    assert any("Press" in i.value for i in at.info)
