"""AppTest of the Data page with uploads: format and role guesses, missing roles, degenerate
mappings, incomplete rows, row filters, Markdown in user text, bounded upload caches."""

from __future__ import annotations

import re

from streamlit.testing.v1 import AppTest

from ui.text import escape_markdown

# Two writers rank three conditions on four items; the passage id is the same for every system of
# an item, so reading it as a rank makes every pair a tie.
RANKING = "passage_id,item,annotator,condition,{rank}\n" + "".join(
    f"{100 + i},i{i},{w},{c},{r}\n"
    for i in range(4)
    for w in ("w1", "w2")
    for c, r in zip(("AI", "edited", "human"), ((1, 2, 3) if (i + (w == "w2")) % 2 else (3, 1, 2)), strict=True)
)


def ratings_csv() -> str:
    """Three systems on four prompts, two criteria; 'style' misses two scores (data rows 14, 23)."""
    rows = ["prompt,system,criterion,score,level"]
    for crit in ("fluency", "style"):
        for p in range(4):
            for s, base in (("x", 1), ("y", 3), ("z", 4)):
                score = (
                    "" if (crit, p, s) in {("style", 0, "y"), ("style", 3, "y")} else (base + p * (s != "x")) % 5 + 1
                )
                rows.append(f"p{p},{s},{crit},{score},{'turn' if p < 2 else 'dialog'}")
    return "\n".join(rows) + "\n"


def upload(at: AppTest, text: str, name: str = "study.csv") -> AppTest:
    at.radio(key="dataset").set_value("upload").run()
    at.file_uploader(key="data_upload").set_value((name, text.encode(), "text/csv"))
    return at.run()


def texts(at: AppTest) -> list[str]:
    """Every element value rendered as Markdown (main area and sidebar)."""
    kinds = (at.markdown, at.caption, at.error, at.warning, at.info, at.success, at.title, at.subheader)
    return [str(e.value) for kind in kinds for e in kind]


def test_ranking_upload_is_recognised_and_read_without_any_choice(at):
    upload(at, RANKING.format(rank="rank"))
    assert not at.exception and not at.error and not at.warning
    assert at.selectbox(key="up_format").value == "ranking"
    assert at.selectbox(key="up_ranking_role_rank").value == "rank"
    assert at.selectbox(key="up_ranking_role_prompt").value == "item"
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["votes"] == str(4 * 2 * 3) and metrics["tie rate"] == "0%"
    assert at.session_state["analysis_input"].source == "study.csv"


def test_unrecognised_columns_ask_for_choices_and_a_degenerate_mapping_is_refused(at):
    upload(at, RANKING.format(rank="order_given"))
    # Nothing the user did is wrong yet: no error, a request to choose the format.
    assert not at.exception and not at.error
    assert at.selectbox(key="up_format").value is None
    assert any("format" in i.value for i in at.info)
    at.selectbox(key="up_format").set_value("ranking").run()
    assert not at.error
    assert at.selectbox(key="up_ranking_role_rank").value == "(none)"  # never the first column
    assert any("rank" in w.value for w in [*at.warning, *at.info])
    assert at.session_state["analysis_input"] is None
    # The passage id taken as the rank: every pair ties; the design report refuses it.
    at.selectbox(key="up_ranking_role_rank").set_value("passage_id").run()
    assert not at.exception
    assert any("tie" in e.value for e in at.error)
    assert at.session_state["analysis_input"] is None


def test_blanks_of_another_criterion_do_not_block_and_dropped_rows_are_counted(at):
    upload(at, ratings_csv())
    assert at.selectbox(key="up_format").value == "ratings"
    assert at.selectbox(key="up_criterion").value == "fluency"
    assert not at.exception and not at.error
    assert at.session_state["analysis_input"].criterion == "fluency"
    at.selectbox(key="up_criterion").set_value("style").run()
    assert any("rows 14, 23" in e.value and "score" in e.value for e in at.error)
    assert at.session_state["analysis_input"] is None
    at.toggle(key="up_drop_incomplete").set_value(True).run()
    assert not at.error
    assert any("2 incomplete rows" in i.value and "14, 23" in i.value for i in at.info)
    assert at.session_state["analysis_input"].dropped_rows == (14, 23)


def test_rows_can_be_filtered_on_any_column(at):
    upload(at, ratings_csv())
    at.selectbox(key="up_filter_column").set_value("level").run()
    at.multiselect(key="up_filter_values").set_value(["dialog"]).run()
    assert not at.exception and not at.error
    assert {m.label: m.value for m in at.metric}["prompts"] == "2"
    assert list(at.session_state["analysis_input"].matrix.prompt_ids) == ["p2", "p3"]


EVIL_NAME = "![x](http://127.0.0.1:9/x.png)[link](http://e).csv"
EVIL_SYSTEM = "$\\frac{1}{2}$"
UNESCAPED = re.compile(r"(?<!\\)(!\[|\$|\]\()")


def test_file_names_and_quoted_values_render_as_text(new_session):
    votes = "prompt,system_a,system_b,annotator,choice\n" + "".join(
        f"p{p},{EVIL_SYSTEM},b,r{r},{'AB'[p % 2] if r else 'A'}\n" for p in range(3) for r in range(2)
    )
    # The upload as the session keeps it, so that the first run draws the sidebar with it (AppTest
    # reruns only the page script of an st.navigation app, not app.py's sidebar).
    at = new_session()
    at.session_state["view_dataset"] = "upload"
    at.session_state["upload"] = (EVIL_NAME, votes.encode())
    at.run()
    assert not at.exception and not at.error
    assert at.session_state["analysis_input"].source == EVIL_NAME
    assert any(escape_markdown(EVIL_NAME) in c.value for c in at.sidebar.caption)
    assert not [t for t in texts(at) if UNESCAPED.search(t)]
    # A message quoting the system name.
    one_system = "prompt,system_a,system_b,annotator,choice\np1,x,x,r,A\n".replace("x", EVIL_SYSTEM)
    at.file_uploader(key="data_upload").set_value((EVIL_NAME, one_system.encode(), "text/csv")).run()
    assert any(escape_markdown(EVIL_SYSTEM) in e.value for e in at.error)
    assert not [t for t in texts(at) if UNESCAPED.search(t)]


def test_upload_caches_are_bounded(monkeypatch):
    import ui.common as common

    calls = []
    real = common.read_csv
    monkeypatch.setattr(common, "read_csv", lambda data, name: calls.append(name) or real(data, name))
    files = [f"a,b\n{n},x\n".encode() for n in range(common.CACHE_ENTRIES + 1)]
    for data in files + files[:1]:
        common.cached_table(data, "bounded.csv")
    # The first file was evicted by the later ones, so it is read again.
    assert len(calls) == len(files) + 1
