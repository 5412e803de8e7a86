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


def stopped_upload(at: AppTest, name: str, text: str) -> AppTest:
    """The state a click on another page leaves when it stops the Data page's run between storing a new upload
    and reading it (a browser test caught this): the file and its default choices, no data read."""
    at.radio(key="dataset").set_value("upload").run()
    at.session_state["upload"] = (name, text.encode())
    at.session_state["analysis_input"] = None
    return at


def test_a_page_shown_before_the_data_page_read_the_upload_reads_it(at):
    stopped_upload(at, "mine.csv", VOTES)
    at.switch_page("pages/abilities.py").run()
    assert not at.exception and not at.warning and not at.error
    assert at.button(key="abil_fit")  # the page offers its fit, not "your upload could not be used"
    assert at.session_state["analysis_input"].source == "mine.csv"
    at.switch_page("pages/data.py").run()
    assert at.selectbox(key="up_format").value == "pairwise"
    assert at.session_state["analysis_input"].source == "mine.csv"


def test_a_file_the_uploader_received_is_kept_when_the_click_on_a_page_comes_first(at):
    """The uploader's new file and the click on Abilities reach the server in one rerun: the Data page
    does not run, and Abilities keeps and reads the file."""
    at.radio(key="dataset").set_value("upload").run()
    at.file_uploader(key="data_upload").set_value(("mine.csv", VOTES.encode(), "text/csv"))
    at.switch_page("pages/abilities.py").run()
    assert not at.exception and not at.warning
    assert not [i for i in at.info if "No upload yet" in i.value]
    assert at.button(key="abil_fit")
    assert at.session_state["upload"] == ("mine.csv", VOTES.encode())
    assert at.session_state["analysis_input"].source == "mine.csv"


def test_an_upload_read_by_another_page_takes_the_data_pages_first_criterion(at):
    rows = VOTES.splitlines()
    text = "\n".join([rows[0] + ",criterion", *(f"{r},{c}" for r in rows[1:] for c in ("fluency", "coherence"))])
    stopped_upload(at, "crit.csv", text)
    at.switch_page("pages/prompts.py").run()
    assert not at.exception and not at.warning and not at.error
    assert at.session_state["analysis_input"].criterion == "coherence"  # the Data page's default: sorted, first
    at.switch_page("pages/data.py").run()
    assert at.selectbox(key="up_criterion").value == "coherence"


def test_an_unusable_upload_read_by_another_page_says_why(at):
    stopped_upload(at, "bad.csv", VOTES.replace("q1,x,y,r1,", "q1,x,y,r1,maybe"))
    at.switch_page("pages/abilities.py").run()
    assert not at.exception
    (shown,) = [m.value for m in at.warning if "could not be used" in m.value]
    assert "row 5" in shown and "maybeB" in shown and escape_markdown("bad.csv") in shown  # file, row, value
    assert at.session_state["analysis_input"] is None


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
