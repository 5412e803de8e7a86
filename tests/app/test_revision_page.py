"""AppTest of pages/revision.py on the bundled LAMP edits, with no API key."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from lib.revision import run
from lib.revision.lamp import load_lamp
from lib.revision.locate import locate_edits
from tests.app.shown import unescaped
from tests.fake_openai import edit, edits, error
from tests.revision.lamp_upload import EDIT_MAPPING, WRITERS, per_writer_means, write_upload
from tests.timing import slowdown

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "revision.py")


@pytest.fixture
def at(monkeypatch, tmp_path):
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("EVAL_CACHE_DIR", str(tmp_path))
    return AppTest.from_file(PAGE, default_timeout=120).run()


def frames(at):
    return [d.value for d in at.dataframe]


def test_human_edits_show_revision_distance_per_model_writer_and_categories(at):
    assert not at.exception and not at.error
    tables = frames(at)
    by_model = next(t for t in tables if "system" in t.columns and "token_edit_distance" in t.columns)
    assert set(by_model["system"]) == {"gpt4o", "claude3.5-sonnet", "llama370B"}
    assert by_model["n"].sum() == 150  # 50 paragraphs x 3 writers
    by_writer = next(t for t in tables if "editor" in t.columns and "mean" in t.columns)
    assert set(by_writer["editor"]) == {"W3", "W12", "W16"}
    # the three writers' totals are the 1,093 LAMP edits
    assert (by_writer["mean"] * by_writer["n"]).sum() == pytest.approx(1093, abs=0.2)  # means shown to 3 dp
    category = next(t for t in tables if "Total" in t.columns)
    assert "Cliche" in category.columns
    assert category["Total"].tolist() == pytest.approx(by_model["mean"].tolist(), abs=0.006)  # 2 vs 3 dp
    assert len(at.metric) == 1 and "%" in at.metric[0].delta
    assert any(c.value.startswith("Key: none") for c in at.caption)


def test_side_by_side_renders_highlights_and_insertions(at):
    body = at.html[0].proto.body
    assert "<mark" in body and 'title="#1' in body
    assert "<ins" in at.html[1].proto.body


def test_diff_based_edits_and_agreement_with_writers(at):
    at.radio(key="revision_source").set_value("Diff-based (towards a reference)").run()
    at.selectbox(key="revision_candidate").set_value("diff-based").run()
    assert not at.exception and not at.error
    agreement = next(t for t in frames(at) if "f1" in t.columns)
    w3 = agreement.query("reference == 'W3' and system == 'all'").iloc[0]
    # diff-based edits towards W3's own post-edit text nearly coincide with W3's spans
    assert w3["recall"] > 0.9 and "category_agreement" not in agreement.columns


def test_uploaded_edits_are_escaped_and_unknown_drafts_are_an_error(at):
    at.radio(key="revision_source").set_value("Uploaded edits").run()
    edit = {
        "text_id": "lamp-01",
        "system": "gpt4o",
        "action_name": "<b>bold</b>",
        "revision_description": "<script>alert(1)</script>",
        "revision_level": "word",
        "revision_intention": "Cliche",
        "original_snippet": "Maria's evenings",
        "revised_snippet": "<img src=x onerror=alert(2)>",
    }
    at.file_uploader(key="revision_edits_file").set_value(
        ("e.jsonl", json.dumps(edit).encode(), "application/json")
    ).run()
    assert not at.exception and not at.error
    left, right = at.html[0].proto.body, at.html[1].proto.body
    assert "<script" not in left + right and "<img" not in right
    assert "&lt;img src=x onerror=alert(2)&gt;" in right and "&lt;script&gt;" in left
    wrong = dict(edit, text_id="nope")
    at.file_uploader(key="revision_edits_file").set_value(
        ("e.jsonl", (json.dumps(edit) + "\n" + json.dumps(wrong)).encode(), "application/json")
    ).run()
    message = at.error[0].value.replace("\\", "")  # Markdown escapes
    assert not at.exception and "row 2" in message and "text_id" in message


def test_llm_source_waits_for_a_model_without_calling_anything(at):
    at.radio(key="revision_source").set_value("LLM (OpenAI-compatible)").run()
    assert not at.exception and not at.error
    assert any("Set a model" in i.value for i in at.info)


def test_llm_run_keeps_finished_drafts_and_compares_with_writers(at, fake_openai):
    def handler(request):
        if request.draft.startswith(first_draft):
            return error(400, "context length exceeded")
        return edits(edit(" ".join(request.draft.split()[:3]), revision_level="phrase"))

    from lib.revision.lamp import load_lamp

    first_draft = load_lamp().drafts["draft"].iloc[0]
    server = fake_openai(handler)
    at.text_input(key="revision_base_url").input(server.url).run()  # no key configured: none is needed
    at.text_input(key="revision_model").input("m").run()
    at.radio(key="revision_source").set_value("LLM (OpenAI-compatible)").run()
    at.radio(key="revision_prompt").set_value("reference-free").run()
    at.button(key="revision_run").click().run()
    at.selectbox(key="revision_candidate").set_value("LLM: m").run()
    assert not at.exception and not at.error
    assert "1 draft(s) failed" in at.warning[0].value
    by_editor = next(t for t in frames(at) if "editor" in t.columns and "mean" in t.columns)
    assert by_editor[["editor", "n", "mean"]].values.tolist() == [["LLM: m", 53, 1.0]]
    agreement = next(t for t in frames(at) if "f1" in t.columns).query("system == 'all'")
    assert set(agreement["reference"]) == {"W3", "W12", "W16"}
    # every paragraph a writer revised except the failed one (lamp-01, seen by all three writers)
    assert agreement["drafts"].tolist() == [49, 49, 49]
    # results belong to the references they were asked with: another writer's text needs a new run
    at.radio(key="revision_prompt").set_value("reference-based").run()
    at.button(key="revision_run").click().run()
    assert not at.exception and not any("Press the button" in i.value for i in at.info)
    at.selectbox(key="revision_ref_writer").set_value("W12").run()
    assert any("Press the button" in i.value for i in at.info)


def test_edits_with_other_column_names_are_mapped_with_drop_downs(at):
    at.radio(key="revision_source").set_value("Uploaded edits").run()
    csv = "doc,model_name,before,after,kind\nlamp-01,gpt4o,Maria's evenings,Her evenings,Cliche\n"
    at.file_uploader(key="revision_edits_file").set_value(("mine.csv", csv.encode(), "text/csv")).run()
    assert not at.exception and not at.error
    # guessed roles are preselected, a role without a guess starts unmapped
    assert at.selectbox(key="revision_edits_role_text_id").value == "doc"
    assert at.selectbox(key="revision_edits_role_original_snippet").value == "before"
    assert at.selectbox(key="revision_edits_role_revision_intention").value == "(none)"
    at.selectbox(key="revision_edits_role_revision_intention").set_value("kind").run()
    assert not at.exception and not at.error
    by_editor = next(t for t in frames(at) if "editor" in t.columns and "mean" in t.columns)
    assert by_editor[["editor", "n"]].values.tolist() == [["uploaded", 54]]  # every LAMP draft counts
    category = next(t for t in frames(at) if "Total" in t.columns)
    assert "Cliche" in category.columns
    at.selectbox(key="revision_edits_role_system").set_value("(none)").run()
    assert not at.exception and "system" in at.warning[0].value


def test_a_1_mb_draft_is_an_error_on_the_page_fast(at):
    import time

    big = "word " * 200_000
    csv = pd.DataFrame(
        {"text_id": ["small", "huge"], "system": ["A", "A"], "draft": ["a b", big], "reference": ["a", big]}
    ).to_csv(index=False)
    at.radio(key="revision_drafts_source").set_value("Upload a drafts CSV").run()
    factor = slowdown()  # reading 1 MB is work: 3.0 s at a load average of 22 (3 CPU burners); aligning it, minutes
    start = time.perf_counter()
    at.file_uploader(key="revision_drafts_file").set_value(("big.csv", csv.encode(), "text/csv")).run()
    assert time.perf_counter() - start < 5 * factor
    message = at.error[0].value.replace("\\", "")
    assert not at.exception and "row 2" in message and "text_id 'huge'" in message and "1,000,000" in message


def test_user_text_in_markdown_elements_is_escaped(at):
    image = "![x](http://127.0.0.1:9/x.png)"
    csv = f"text_id,system,draft,reference\n1,{image},a b c,a c\n2,B,d e f,d f\n1,B,g h,g\n"
    at.radio(key="revision_drafts_source").set_value("Upload a drafts CSV").run()
    at.file_uploader(key="revision_drafts_file").set_value(("d.csv", csv.encode(), "text/csv")).run()
    at.radio(key="revision_source").set_value("Diff-based (towards a reference)").run()
    assert not at.exception and not at.error
    label = at.metric[0].label
    assert image not in label and unescaped(label).startswith(image)
    # a file name and a value quoted in an error are escaped too
    bad = f"text_id,system,draft\n1,A,x\n1,A,{image}\n"
    at.file_uploader(key="revision_drafts_file").set_value((f"{image}.csv", bad.encode(), "text/csv")).run()
    assert not at.exception and image not in at.error[0].value and image in unescaped(at.error[0].value)


def shown_rd(at) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The page's Revision Distance per model and per editor (``system``/``editor``, ``n``, ``mean``)."""
    tables = frames(at)
    by_model = next(t for t in tables if "system" in t.columns and "token_edit_distance" in t.columns)
    by_editor = next(t for t in tables if "editor" in t.columns and "mean" in t.columns)
    return by_model.set_index("system")[["n", "mean"]], by_editor.set_index("editor")[["n", "mean"]]


def test_each_writer_of_the_lamp_reannotation_files_revised_only_its_own_drafts(at, tmp_path):
    """Drafts under each writer's own ids (``W3_reannotation_1`` ...): Revision Distance is the
    per-writer count (claude 6.74, gpt4o 7.46), not a third of it (a draft counted as revised by all
    three writers gave 2.25, 2.49), the page says how many drafts each writer revised, and "Side by
    side" opens on a draft with its writer's edits."""
    drafts_csv, edits_csv = write_upload(tmp_path)
    at.radio(key="revision_drafts_source").set_value("Upload a drafts CSV").run()
    at.file_uploader(key="revision_drafts_file").set_value(("drafts.csv", drafts_csv.read_bytes(), "text/csv")).run()
    at.radio(key="revision_source").set_value("Uploaded edits").run()
    at.file_uploader(key="revision_edits_file").set_value(("edits.csv", edits_csv.read_bytes(), "text/csv")).run()
    for role, column in EDIT_MAPPING.items():  # the user maps the columns the names do not give
        at.selectbox(key=f"revision_edits_role_{role}").set_value(column)
    at.run()
    assert not at.exception and not at.error and not at.warning
    by_model, by_editor = shown_rd(at)
    expected = per_writer_means()
    assert by_model["mean"].to_dict() == pytest.approx(expected.to_dict(), abs=5e-4)  # shown to 3 dp
    assert by_model["mean"].round(2).to_dict() == {"claude3.5-sonnet": 6.74, "gpt4o": 7.46, "llama370B": 7.8}
    assert by_model["n"].to_dict() == {"claude3.5-sonnet": 57, "gpt4o": 48, "llama370B": 45}  # 150 paragraphs
    assert by_editor["n"].to_dict() == {w: 50 for w in WRITERS}
    said = unescaped(next(c.value for c in at.caption if "Drafts each editor revised" in c.value))
    assert "W12 50 (50 with edits), W16 50 (50 with edits), W3 50 (50 with edits)" in said
    assert "Every draft has edits from one editor only" in said
    draft = at.selectbox(key="revision_draft")
    assert draft.format_func(draft.value) == "W3_reannotation_1 · gpt4o"
    assert at.selectbox(key="revision_editor").options == ["W3"]
    assert any(m.value.startswith("**Draft** (6 edits, 0 unlocated") for m in at.markdown)


def test_shared_drafts_with_gaps_ask_which_drafts_each_editor_revised(at):
    """The page's own download of the LAMP writers' edits, uploaded again: writers share most
    paragraphs but each revised 50 of the 54, so the edits cannot tell whether a paragraph without
    a writer's edits was revised with no change or never seen. The page asks; stated, the figures
    are the human source's."""
    human_model, human_editor = shown_rd(at)
    at.radio(key="revision_source").set_value("Uploaded edits").run()
    lamp = load_lamp()
    located = locate_edits(lamp.edits, lamp.drafts)
    upload = run.edits_jsonl(located).encode()
    at.file_uploader(key="revision_edits_file").set_value(("edits.jsonl", upload, "application/json")).run()
    assert not at.exception and not at.error
    warning = unescaped(at.warning[0].value)
    assert "W3: 50 of 54" in warning and "only the drafts with its edits" in warning and not at.dataframe
    at.radio(key="revision_revised_rule").set_value("edited").run()
    assert not at.exception and not at.error and not at.warning
    by_model, by_editor = shown_rd(at)
    pd.testing.assert_frame_equal(by_model, human_model)
    pd.testing.assert_frame_equal(by_editor, human_editor)
    said = unescaped(next(c.value for c in at.caption if "Drafts each editor revised" in c.value))
    assert "W3 50 (50 with edits)" in said and "As stated: only the drafts with its edits." in said
