"""AppTest of the Human cost page on a study of the published shape (issue 16, item 17): one time column
for both conditions, a session number, an extraction time column."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "cost.py")


def test_the_published_shape_loads_with_its_rule_said_and_no_session_covariate():
    rows = ["Condition,Participant,Session,Task,Instance,Usefulness,Prompt time (s),Extraction time (s),Age"]
    rows += [
        f"{'GPT-3' if p < 3 else 'no model'},P{p},{p % 2 + 1},numbers,{h},{(p + h) % 5 + 1},"
        f"{(30 if p < 3 else 200) + 10 * h + p},{5 + h if p < 3 else ''},{20 + 3 * p}"
        for p in range(6)
        for h in (1, 2, 3)
    ]
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    at.radio(key="cost_source").set_value("Upload a CSV").run()
    at.file_uploader(key="cost_upload").set_value(("published.csv", "\n".join(rows).encode(), "text/csv")).run()
    assert not at.exception and not at.error
    assert any("read per condition" in w.value for w in at.warning)
    roles = {s.label: s.value for s in at.selectbox}
    assert roles["unwrap_time_s (optional)"] == "Extraction time (s)"
    assert at.multiselect[0].value == ["Age"]  # not the session number
