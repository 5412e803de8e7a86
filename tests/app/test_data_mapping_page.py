"""AppTest of the Data page's mapping (issue 16): combined columns (item 14), the format chosen once
after a new upload (item 15), and no page text that is not meant for the user (item 19)."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from tests.test_tables_combine import STUDY


def upload(at: AppTest, text: str, name: str = "study.csv") -> AppTest:
    at.radio(key="dataset").set_value("upload").run()
    at.file_uploader(key="data_upload").set_value((name, text.encode(), "text/csv"))
    return at.run()


def test_two_columns_combined_into_the_prompt(at):
    upload(at, STUDY)
    at.selectbox(key="up_format").set_value("ratings").run()
    assert at.selectbox(key="up_ratings_role_prompt").value == "(none)"  # nothing names the prompt
    at.multiselect(key="up_ratings_combine").set_value(["story_id", "test"]).run()
    assert "story_id+test" in at.selectbox(key="up_ratings_role_prompt").options
    at.selectbox(key="up_ratings_role_prompt").set_value("story_id+test").run()
    assert not at.exception and not at.error
    data = at.session_state["analysis_input"]
    assert data.matrix.shape == (3, 8) and "s2 + origin" in set(data.matrix.prompt_ids)
    assert {m.label: m.value for m in at.metric}["prompts"] == "8"


RANKED = "item,annotator,condition,rank\n" + "".join(
    f"i{i},{w},{c},{r}\n"
    for i in range(4)
    for w in ("w1", "w2")
    for c, r in zip(("AI", "edited", "human"), (1, 2, 3), strict=True)
)


def test_after_a_new_upload_the_browser_is_told_every_format_and_role_value(at):
    """The browser keeps a keyed widget's last value until the server sends one (``set_value``). After
    a new upload the format was only forgotten on the server: the browser still showed the last file's
    format while the page asked for one, and choosing that format did nothing (reproduced in chromium:
    tests/browser/test_data_upload_flow.py)."""
    upload(at, RANKED, "first.csv")
    at.selectbox(key="up_format").set_value("bestworst").run()
    at.selectbox(key="up_bestworst_role_judgment").set_value("rank").run()
    at.file_uploader(key="data_upload").set_value(("second.csv", STUDY.encode(), "text/csv")).run()
    fmt = at.selectbox(key="up_format")
    assert fmt.value is None and fmt.proto.set_value  # the browser clears the format shown
    at.selectbox(key="up_format").set_value("bestworst").run()
    assert at.selectbox(key="up_format").value == "bestworst"
    roles = [s for s in at.selectbox if str(s.key).startswith("up_bestworst_role_")]
    assert roles and all(s.proto.set_value for s in roles)  # guesses for this file, not the last file's choices
    assert at.selectbox(key="up_bestworst_role_judgment").value == "(none)"


def test_no_page_script_holds_a_bare_string_that_streamlit_would_show(at):
    """Streamlit's magic writes every bare expression of a page script on the page; only docstrings (the
    first statement of a module, function or class) are left out. The Data page showed "Prefix of the
    widget keys..." (issue 16, item 19)."""
    import ast

    from lib.io.paths import ROOT
    from ui.navigation import SECTIONS

    assert not any("Prefix of the widget keys" in m.value for m in at.markdown)
    shown = []
    for path in sorted((ROOT / "pages").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            body = getattr(node, "body", None)
            if not isinstance(body, list):
                continue
            for i, stmt in enumerate(body):
                docstring = i == 0 and isinstance(
                    node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
                )
                if (
                    isinstance(stmt, ast.Expr)
                    and isinstance(stmt.value, ast.Constant)
                    and isinstance(stmt.value.value, str)
                    and not docstring
                ):
                    shown.append(f"{path.name}:{stmt.lineno}")
    # pages/ holds only page scripts: every one is listed in app.py's navigation and runs as a page.
    listed = {path.split("/")[-1] for pages in SECTIONS.values() for path, _, _ in pages}
    assert listed == {path.name for path in (ROOT / "pages").glob("*.py")}
    assert not shown
