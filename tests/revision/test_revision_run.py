"""lib.revision.run: the steps the page and ``python -m lib revise`` share, computed in one place."""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st

import lib.cli as cli
import lib.revision.run as run
from lib.io.export import csv_text
from lib.io.paths import ROOT
from lib.revision.client import LLMSettings
from lib.revision.prompts import REFERENCE_BASED, REFERENCE_FREE
from lib.revision.schema import DIFF_EDITOR
from tests.fake_openai import edit, edits, error

DRAFTS = pd.DataFrame(
    {
        "text_id": ["1", "2"],
        "system": ["A", "B"],
        "draft": ["The cat sat on the mat.", "Hello there world."],
        "reference": ["The black cat sat on the mat.", "Hello there world."],
    }
)


def test_diff_revision_scores_and_writes_what_the_command_writes(tmp_path):
    revision = run.diff_revision(DRAFTS)
    assert revision.editor == DIFF_EDITOR and revision.failures.empty
    assert revision.evaluated.to_dict("list") == {
        "text_id": ["1", "2"],
        "system": ["A", "B"],
        "draft": list(DRAFTS["draft"]),
        "editor": [DIFF_EDITOR] * 2,
    }
    located, per_draft = run.score(revision.edits, DRAFTS, revision.evaluated)
    assert per_draft["revision_distance"].tolist() == [1, 0]
    lines = [json.loads(x) for x in run.edits_jsonl(located).splitlines()]
    assert lines == [
        {
            "text_id": "1",
            "system": "A",
            "editor": DIFF_EDITOR,
            "action_name": "insert",
            **{k: lines[0][k] for k in ("revision_description", "revision_level", "revision_intention")},
            "original_snippet": "The",
            "revised_snippet": "The black",
            "located": True,
        }
    ]
    DRAFTS.to_csv(tmp_path / "d.csv", index=False)
    assert (
        cli.main(["revise", "--drafts", str(tmp_path / "d.csv"), "--engine", "diff", "--out", str(tmp_path / "out")])
        == 0
    )
    assert (tmp_path / "out" / "edits.jsonl").read_text(encoding="utf-8") == run.edits_jsonl(located, editor=False)
    assert (tmp_path / "out" / "revision_distance.csv").read_text() == csv_text(per_draft[run.RD_COLUMNS])


def test_llm_revision_leaves_failed_drafts_out_and_sends_the_reference_only_when_asked(
    fake_openai, tmp_path, monkeypatch
):
    server = fake_openai(
        lambda request: error(400, "context too long") if "Hello" in request.user else edits(edit("cat", "dog"))
    )
    monkeypatch.setenv("EVAL_CACHE_DIR", str(tmp_path))
    settings = LLMSettings(model="m", base_url=server.url, max_retries=0)
    progress = []
    revision = run.llm_revision(DRAFTS, settings, REFERENCE_BASED, progress=lambda d, n: progress.append((d, n)))
    assert revision.editor == "LLM: m" and progress[-1] == (2, 2)
    assert revision.evaluated[["text_id", "editor"]].values.tolist() == [["1", "LLM: m"]]
    assert revision.failures["text_id"].tolist() == ["2"] and "context too long" in revision.failures["error"][0]
    assert all("black cat" in r.user for r in server.requests if "cat" in r.user)
    first = len(server.requests)
    run.llm_revision(DRAFTS.drop(columns="reference"), settings, REFERENCE_FREE)
    sent = [r.user for r in server.requests[first:]]
    assert sent and not any("Human-written" in s for s in sent)
    _, per_draft = run.score(revision.edits, DRAFTS, revision.evaluated)
    assert per_draft[["text_id", "revision_distance"]].values.tolist() == [["1", 1]]


def test_the_command_and_the_page_compute_through_the_run_functions(tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest

    calls = []
    for name in ("diff_revision", "score", "edits_jsonl"):
        real = getattr(run, name)
        monkeypatch.setattr(run, name, lambda *a, _real=real, _name=name, **kw: calls.append(_name) or _real(*a, **kw))
    DRAFTS.to_csv(tmp_path / "d.csv", index=False)
    assert (
        cli.main(["revise", "--drafts", str(tmp_path / "d.csv"), "--engine", "diff", "--out", str(tmp_path / "out")])
        == 0
    )
    assert calls == ["diff_revision", "score", "edits_jsonl"]
    calls.clear()
    st.cache_data.clear()
    monkeypatch.setenv("EVAL_CACHE_DIR", str(tmp_path / "cache"))
    at = AppTest.from_file(str(ROOT / "pages" / "revision.py"), default_timeout=120)
    at.session_state["revision_source"] = "Diff-based (towards a reference)"
    at.run()
    assert not at.exception and not at.error
    assert {"diff_revision", "score", "edits_jsonl"} <= set(calls)


def test_an_llm_run_is_keyed_by_server_model_prompt_version_and_the_exact_drafts():
    key = run.llm_run_key(DRAFTS, "http://a/v1", "m", REFERENCE_BASED)
    assert key[:3] == ("http://a/v1", "m", REFERENCE_BASED.version) and len(key[3]) == 64
    assert run.llm_run_key(DRAFTS.copy(), "http://a/v1", "m", REFERENCE_BASED) == key
    other_reference = DRAFTS.assign(reference=["The cat sat.", "Hello there world."])
    assert run.llm_run_key(other_reference, "http://a/v1", "m", REFERENCE_BASED)[3] != key[3]
    assert run.llm_run_key(DRAFTS, "http://b/v1", "m", REFERENCE_BASED) != key


def test_only_drafts_with_a_reference_text_go_to_the_diff_engine_and_the_reference_based_prompt():
    blank = DRAFTS.assign(reference=["  ", None])
    assert run.with_reference(DRAFTS)["text_id"].tolist() == ["1", "2"]
    assert run.with_reference(blank).empty
    none = run.with_reference(DRAFTS.drop(columns="reference"))
    assert none.empty and "reference" in none.columns


def test_the_llm_revises_the_drafts_with_a_reference_for_the_reference_based_prompt_else_all_without_one():
    blank = DRAFTS.assign(reference=["The black cat sat on the mat.", " "])
    assert run.llm_drafts(blank, REFERENCE_BASED).equals(run.with_reference(blank))
    free = run.llm_drafts(blank, REFERENCE_FREE)
    assert free["text_id"].tolist() == ["1", "2"] and free["reference"].isna().all()
    assert run.llm_drafts(DRAFTS.drop(columns="reference"), REFERENCE_FREE)["reference"].isna().all()


def test_other_edits_are_compared_with_the_writers_edits_and_drafts_beside_their_own():
    revision = run.diff_revision(DRAFTS)
    located, per_draft = run.score(revision.edits, DRAFTS, revision.evaluated)
    writers = located.assign(editor="writer")
    writers_revised = per_draft.assign(editor="writer")
    edits, revised = run.beside_writers(located, per_draft, writers, writers_revised)
    assert edits["editor"].tolist() == [*located["editor"], *writers["editor"]]
    assert edits.index.tolist() == list(range(len(located) + len(writers)))
    assert revised["editor"].tolist() == [*per_draft["editor"], *writers_revised["editor"]]
