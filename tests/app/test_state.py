"""AppTest of the session's state across pages: the chosen data, mapping and fit stay until the
user changes them; a failed upload is never replaced by other data; the view lives in the URL."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from ui.text import escape_markdown

VOTES = "item,system_a,system_b,annotator,choice\n" + "".join(
    f"q{p},x,y,r{r},{'AB'[(p * r) % 2]}\n" for p in range(4) for r in range(3)
)


def away_and_back(at: AppTest) -> AppTest:
    at.switch_page("pages/abilities.py").run()
    return at.switch_page("pages/data.py").run()


def test_bundled_choice_criterion_and_merge_survive_other_pages(at):
    at.radio(key="dataset").set_value("rome_bestworst").run()
    at.selectbox(key="data_criterion").set_value("fluency").run()
    at.toggle(key="data_merge").set_value(False).run()
    away_and_back(at)
    assert not at.exception and not at.error
    assert at.radio(key="dataset").value == "rome_bestworst"
    assert at.selectbox(key="data_criterion").value == "fluency"
    assert at.toggle(key="data_merge").value is False
    data = at.session_state["analysis_input"]
    assert data.criterion == "fluency" and data.source.startswith("ROME")


def test_upload_and_its_mapping_survive_other_pages(at):
    at.radio(key="dataset").set_value("upload").run()
    at.file_uploader(key="data_upload").set_value(("mine.csv", VOTES.encode(), "text/csv")).run()
    at.selectbox(key="up_pairwise_role_annotator").set_value("(none)").run()
    at.selectbox(key="up_pairwise_role_annotator").set_value("annotator").run()
    assert at.session_state["analysis_input"].source == "mine.csv"
    at.switch_page("pages/abilities.py").run()
    assert not at.exception and not at.error
    assert at.session_state["analysis_input"].source == "mine.csv"
    at.switch_page("pages/data.py").run()
    assert at.radio(key="dataset").value == "upload"
    assert at.selectbox(key="up_format").value == "pairwise"
    assert at.selectbox(key="up_pairwise_role_prompt").value == "item"
    assert at.session_state["analysis_input"].source == "mine.csv"
    assert any(escape_markdown("mine.csv") in c.value for c in at.caption)


def test_a_failed_upload_is_not_replaced_by_the_previous_data(at):
    at.radio(key="dataset").set_value("upload").run()
    bad = VOTES.replace("q1,x,y,r1,", "q1,x,y,r1,maybe")
    at.file_uploader(key="data_upload").set_value(("bad.csv", bad.encode(), "text/csv")).run()
    assert any("maybe" in e.value for e in at.error)
    assert at.session_state["analysis_input"] is None
    at.switch_page("pages/abilities.py").run()
    assert not at.exception
    assert any("could not be used" in m.value for m in [*at.warning, *at.error, *at.info])
    assert at.session_state["analysis_input"] is None  # not the default LAMP data


def test_the_view_is_read_from_and_written_to_the_url(new_session):
    at = new_session()
    at.query_params.update({"data": "rome_bestworst", "criterion": "fluency", "merge": "0"})
    at.run()
    assert not at.exception and not at.error
    assert at.radio(key="dataset").value == "rome_bestworst"
    assert at.selectbox(key="data_criterion").value == "fluency"
    data = at.session_state["analysis_input"]
    assert data.criterion == "fluency" and len(data.matrix.groups) == data.matrix.shape[1]  # unmerged
    at.radio(key="dataset").set_value("hanna_means").run()
    assert at.query_params["data"] == "hanna_means" and at.query_params["criterion"] == "Relevance"
    # Another page opened by link finds the same view.
    other = new_session()
    other.query_params.update({"data": "hanna_means", "criterion": "Empathy"})
    other.run()
    other.switch_page("pages/abilities.py").run()  # a page that computes nothing before a click
    assert not other.exception
    assert other.session_state["analysis_input"].criterion == "Empathy"


def test_an_unknown_data_set_in_the_url_says_so(new_session):
    at = new_session()
    at.query_params["data"] = "nope"
    at.run()
    assert not at.exception
    assert any("nope" in w.value for w in at.warning)
    assert at.radio(key="dataset").value == "lamp_rankings"
