"""AppTest of the "Human cost" page on the bundled synthetic example study."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from lib.cost.analysis import analyse
from lib.cost.costs import DEFAULT_WEIGHT, Weights
from lib.cost.schema import read_study
from lib.io.display import readable
from lib.judgments.formats import read_csv
from tests.app.shown import unescaped

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "cost.py")
EXAMPLE = ROOT / "data" / "cost_example" / "study.csv"


@pytest.fixture(scope="module")
def expected():
    study = read_study(read_csv(EXAMPLE, EXAMPLE.name), file=EXAMPLE.name)
    return study, analyse(study)


def _run() -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=60)
    return at.run()


def test_page_opens_on_example_without_upload(expected):
    _study, res = expected
    at = _run()
    assert not at.exception
    assert not at.error
    assert any("synthetic" in w.value.lower() for w in at.warning)
    assert len(at.get("plotly_chart")) >= 3  # effort, cost curves, gap (the correlation tab too)
    loss = at.dataframe[0].value
    pd.testing.assert_frame_equal(loss.reset_index(drop=True), readable(res.loss_table).frame, check_dtype=False)
    assert at.selectbox(key="cost_with_example").value == "with_model"
    # Fig. 5 shows the external L_E when the file has it, as in the paper.
    gap = next(df.value for df in at.dataframe if "loss_source" in df.value.columns)
    assert set(gap.loss_source) == {"external"}
    assert at.selectbox(key="cost_example_role_usefulness").value == "usefulness"
    labels = {b.proto.label for b in at.get("download_button")}
    assert {
        f"Download {f}" for f in ("loss_table.csv", "effort_medians.csv", "cost_curve.csv", "spearman.csv")
    } <= labels


def test_weights_change_break_even(expected):
    study, _ = expected
    at = _run()
    for key in ("alpha", "beta", "gamma", "delta"):
        assert at.select_slider(key=f"cost_w_{key}").value == DEFAULT_WEIGHT
        at.select_slider(key=f"cost_w_{key}").set_value(0.1)
    at.run()
    assert not at.exception and not at.error
    want = analyse(study, weights=Weights(0.1, 0.1, 0.1, 0.1)).cost_terms
    terms = next(df.value for df in at.dataframe if "break_even_n" in df.value.columns)
    assert terms.break_even_n.astype(str).tolist() == [str(n) if pd.notna(n) else "never" for n in want.break_even_n]
    assert any("0.01 (the default)" in c.value for c in at.sidebar.caption)


def test_bad_mapping_shows_error_not_traceback():
    at = _run()
    # Age (19-65) is not a 1-5 Likert score: the page must say which file, rows and column.
    at.selectbox(key="cost_example_role_usefulness").set_value("age")
    at.run()
    assert not at.exception
    assert len(at.error) == 1
    message = unescaped(at.error[0].value)
    assert "study.csv" in message and "column 'age'" in message and "1-5" in message and "row" in message


def test_with_label_switch_flips_conditions():
    at = _run()
    at.selectbox(key="cost_with_example").set_value("without_model")
    at.run()
    # Times of the model steps are now on the "without" rows: a precise error, no crash.
    assert not at.exception
    assert "only applies to condition 'without_model'" in unescaped(at.error[0].value)


def _upload(content: bytes, name: str = "mine.csv") -> AppTest:
    at = _run()
    at.radio(key="cost_source").set_value("Upload a CSV").run()
    at.file_uploader(key="cost_upload").set_value((name, content, "text/csv"))
    return at.run()


def test_upload_with_other_column_names_is_mapped_by_guess():
    df = pd.read_csv(EXAMPLE).rename(columns={"condition": "Group", "usefulness": "Likert", "instance": "h"})
    df["Group"] = df["Group"].map({"with_model": "GPT-3", "without_model": "Human"})
    at = _upload(df.to_csv(index=False).encode())
    assert not at.exception and not at.error
    fid = next(w.key for w in at.selectbox if w.key and w.key.startswith("cost_with_"))
    assert at.selectbox(key=fid).value == "GPT-3"
    assert at.dataframe[0].value.condition.tolist()[:2] == ["GPT-3", "Human"]


def test_bad_upload_shows_precise_error():
    df = pd.read_csv(EXAMPLE)
    df.loc[4, "usefulness"] = 9
    at = _upload(df.to_csv(index=False).encode(), "bad.csv")
    assert not at.exception
    assert unescaped(at.error[0].value) == (
        "bad.csv, row 5, column 'usefulness': usefulness must be on the Likert scale 1-5"
    )
    at = _upload(b"\xff\xfe not utf-8", "latin.csv")
    assert not at.exception and "latin.csv" in unescaped(at.error[0].value) and "UTF-8" in unescaped(at.error[0].value)


def test_validation_zero_readable_tables_id_columns_and_file_name():
    """Issue 8 item 9 on the page: take V_H as 0 when not measured, no None / Infinity in tables,
    id-like columns not preselected as covariates, the file name shown as text."""
    df = pd.read_csv(EXAMPLE).drop(columns="validate_time_s")
    df["session_id"] = df["participant"].str[1:].astype(int) + 1000
    at = _upload(df.to_csv(index=False).encode(), "*my* study.csv")
    assert not at.exception and not at.error
    assert any("V_H not measured" in unescaped(w.value) for w in at.warning)
    cov = next(w for w in at.multiselect if w.key.startswith("cost_cov_"))
    assert "session_id" in cov.options and "session_id" not in cov.value and "age" in cov.value
    assert any("\\*my\\* study" in m.value for m in at.markdown)
    terms = next(d.value for d in at.dataframe if "break_even_n" in d.value.columns)
    assert terms.break_even_n.isna().all()  # no cost: not measured, shown empty
    at.checkbox(key="cost_validation_zero").check().run()
    assert not at.exception and not at.error
    assert not any("no cost" in unescaped(w.value) for w in at.warning)
    assert any("V_H not measured, taken as 0 s" in unescaped(w.value) for w in at.warning)
    terms = next(d.value for d in at.dataframe if "break_even_n" in d.value.columns)
    for d in at.dataframe:
        assert d.proto.placeholder == ""  # a missing cell is shown empty, not None or nan
        assert not d.value.astype(str).isin(["inf", "-inf"]).any().any()  # ∞ is spelled out
    assert (terms.V_H == 0).all() and terms.break_even_n.notna().all()
