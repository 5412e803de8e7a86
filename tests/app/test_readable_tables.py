"""Tables read as a researcher expects (issue 29, item 5): numbers to a few significant digits, counts as
whole numbers, missing cells empty, and the downloads keep every digit.

A page's table reaches the browser as its data (``.value``: what sorting uses and the browser formats)
and, for a highlighted table, the text of each cell (the Styler's display values): both are checked."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit import dataframe_util
from streamlit.testing.v1 import AppTest

import lib.io.export
from lib.planning.power import COLUMNS

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def downloads(monkeypatch) -> dict[int, str]:
    """The CSV text of every download the pages build, in order (``lib.io.export.csv_text`` recorded: the page
    scripts import it at each run)."""
    made: dict[int, str] = {}
    real = lib.io.export.csv_text

    def recording(table, *args, **kwargs):
        text = real(table, *args, **kwargs)
        made[len(made)] = text
        return text

    monkeypatch.setattr(lib.io.export, "csv_text", recording)
    return made


def last(downloads: dict[int, str], header: str) -> str:
    """The latest download whose CSV header starts with ``header``."""
    return [text for text in downloads.values() if text.startswith(header)][-1]


def four_digits(values) -> list[float]:
    """Each value to 4 significant digits (the values checked here are below 1,000 in size)."""
    return [float(f"{v:.4g}") for v in values]


def shown_text(element) -> pd.DataFrame:
    """The text the browser shows in each cell of a highlighted table (its Styler's display values)."""
    return dataframe_util.convert_arrow_bytes_to_pandas_df(element.proto.arrow_data.styler.display_values)


def table_with(at: AppTest, column: str):
    return next(d for d in at.dataframe if column in d.value.columns)


def test_the_planners_tables_read_as_numbers_and_its_downloads_keep_every_digit(monkeypatch, tmp_path, downloads):
    monkeypatch.setenv("EVAL_CACHE_DIR", str(tmp_path))
    at = AppTest.from_file(str(ROOT / "pages" / "planner.py"), default_timeout=180).run()
    at.radio(key="planner_source").set_value("Typed in").run()
    at.number_input(key="planner_effect").set_value(0.3)  # too small for 5 or 10 prompts: no design reaches it
    at.text_input(key="planner_prompts").set_value("5, 10")
    at.text_input(key="planner_annotators").set_value("1")
    at.multiselect(key="planner_analyses").set_value(["sign_test", "t_test"])
    at.number_input(key="planner_replicates").set_value(4)
    at.number_input(key="planner_seconds").set_value(2.4)
    at.number_input(key="planner_rate").set_value(1530.0)  # 10 judgments cost 10 x 2.4 / 3600 x 1530 = 10.2000...01
    at.run()
    at.button(key="planner_run").click().run()
    assert not at.exception and not at.error

    power = pd.read_csv(io.StringIO(last(downloads, ",".join(COLUMNS))))
    raw_cost, raw_hours = 10 * 2.4 / 3600 * 1530, 10 * 2.4 / 3600
    assert raw_cost == 10.200000000000001 and len(repr(raw_hours)) > 15
    assert set(power["cost"]) == {raw_cost / 2, raw_cost} and set(power["hours"]) == {raw_hours / 2, raw_hours}

    costs = table_with(at, "cheapest")  # highlighted: the browser shows its display values
    text = shown_text(costs)
    assert set(text["cost"]) == {"5.1", "10.2"} and set(text["hours"]) == {"0.003333", "0.006667"}
    assert not any(t.endswith("0000") for t in text["power"])  # not 0.180000
    assert costs.value["cost"].tolist() == four_digits(costs.value["cost"])

    cheapest = table_with(at, "saving")  # nothing reaches the target: the design's counts are missing
    assert cheapest.proto.placeholder == ""  # a missing cell is shown empty, not "None"
    for count in ("prompts", "annotators", "judgments"):
        assert pd.api.types.is_integer_dtype(cheapest.value[count].dtype) and cheapest.value[count].isna().all()
    assert pd.api.types.is_integer_dtype(table_with(at, "best_first").value["prompts"].dtype)


def test_the_judges_leaderboard_shows_four_significant_digits_and_its_download_keeps_every_digit(
    new_session, downloads
):
    at = new_session()
    at.session_state["view_dataset"] = "pandalm_pairwise"
    at.run()
    at.switch_page("pages/judges.py").run()
    at.slider(key="judge_share").set_value(15).run()
    assert not at.exception and not at.error

    board = table_with(at, "ppi_rank")
    full = pd.read_csv(io.StringIO(last(downloads, "system,")))
    full = full.set_index("system").loc[board.value["system"]]
    assert (full["ppi_skill"].astype(str).str.len() > 8).all()  # the download: every digit
    np.testing.assert_array_equal(board.value["ppi_skill"], four_digits(full["ppi_skill"]))
    text = shown_text(board)
    assert text["ppi_skill"].tolist() == [f"{v:.4g}" for v in full["ppi_skill"]]
    assert text["human_rank"].tolist() == [str(r) for r in board.value["human_rank"]]

    quality = table_with(at, "kappa")  # no judge was seen in both orders: its position bias is missing
    assert quality.value["position_bias"].isna().all() and quality.proto.placeholder == ""


def test_the_judge_plan_counts_items_votes_and_verdicts_in_whole_numbers(new_session):
    at = new_session()
    at.session_state["view_dataset"] = "pandalm_pairwise"  # its bundled judges reach the planner
    at.run()
    at.switch_page("pages/planner.py").run()
    assert not at.exception and not at.error
    plan = table_with(at, "judge_verdicts").value
    for count in ("human_items", "judge_only_items", "human_votes", "judge_verdicts"):
        assert pd.api.types.is_integer_dtype(plan[count].dtype), count
