"""AppTest of a browser reload after an upload (issue 29 item 4): a reload is a new session with the same URL.
Before, the Data page and the Study planner then said "No upload yet" although the URL said data=upload;
now the upload and its reading choices are kept on disk under a key the URL carries, and a link whose upload
is no longer kept says so."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from lib.io.paths import ROOT
from tests.app.shown import unescaped
from tests.app.test_state import VOTES

PLANNER = str(ROOT / "pages" / "planner.py")


def uploaded(at: AppTest) -> AppTest:
    """Upload the votes file on the Data page and make a choice of one's own (keep two annotators' rows)."""
    at.radio(key="dataset").set_value("upload").run()
    at.file_uploader(key="data_upload").set_value(("mine.csv", VOTES.encode(), "text/csv")).run()
    at.selectbox(key="up_filter_column").set_value("annotator").run()
    at.multiselect(key="up_filter_values").set_value(["r1", "r2"]).run()
    assert not at.exception and not at.error
    return at


def reload(new_session, at: AppTest, path: str | None = None) -> AppTest:
    """A new session of the same URL (what the browser does on a reload)."""
    again = new_session() if path is None else AppTest.from_file(path, default_timeout=180)
    again.query_params.update(dict(at.query_params))
    return again.run()


def test_a_reload_of_the_data_page_keeps_the_upload_and_its_choices(new_session):
    at = uploaded(new_session().run())
    assert at.query_params["data"] == "upload" and at.query_params["upload"]
    assert any("a reload of the page keeps it" in c.value for c in at.caption)
    again = reload(new_session, at)
    assert not again.exception and not again.error
    assert not [i for i in again.info if "Upload a CSV" in i.value]
    assert again.radio(key="dataset").value == "upload"
    assert again.multiselect(key="up_filter_values").value == ["r1", "r2"]  # the choice made before
    data = again.session_state["analysis_input"]
    assert data.source == "mine.csv" and set(data.judgments.votes["annotator_id"]) == {"r1", "r2"}


def test_a_reload_of_the_planner_plans_from_the_same_upload(new_session, monkeypatch, tmp_path):
    at = uploaded(new_session().run())
    monkeypatch.setenv("EVAL_CACHE_DIR", str(tmp_path))  # the same server's cache
    again = reload(new_session, at, PLANNER)
    assert not again.exception and not again.error
    assert not [i for i in again.info if "No upload yet" in i.value]
    assert any("Planning from the pilot" in m.value and "mine.csv" in unescaped(m.value) for m in again.markdown)


def test_a_link_whose_upload_is_not_kept_says_so(new_session):
    at = new_session()
    at.query_params.update({"data": "upload", "upload": "A" * 22})
    at.run()
    assert not at.exception
    assert any("not kept on this server any more" in unescaped(w.value) for w in at.warning)
    assert at.session_state["upload"] is None
