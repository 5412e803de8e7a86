"""``python -m lib revise`` (dispatched by lib.cli) and the drafts / edits readers."""

from __future__ import annotations

import io
import json

import httpx2
import pandas as pd
import pytest

import lib.cli as cli
from lib.errors import FormatError
from lib.revision.io import read_drafts, read_edits


def write_drafts(path, reference_name="gold"):
    pd.DataFrame({"id": ["1", "2"], "model": ["A", "B"], "draft": ["The cat sat on the mat.", "Hello there world."],
                  reference_name: ["The black cat sat on the mat.", "Hello there world."]}).to_csv(path, index=False)


def test_diff_engine_writes_the_two_files(tmp_path, capsys):
    write_drafts(tmp_path / "d.csv")
    code = cli.main(["revise", "--drafts", str(tmp_path / "d.csv"), "--engine", "diff", "--reference-column", "gold",
                     "--columns", "text_id=id,system=model", "--out", str(tmp_path / "out")])
    assert code == 0
    lines = [json.loads(x) for x in (tmp_path / "out" / "edits.jsonl").read_text().splitlines()]
    assert list(lines[0]) == ["text_id", "system", "action_name", "revision_description", "revision_level",
                              "revision_intention", "original_snippet", "revised_snippet", "located"]
    assert (lines[0]["original_snippet"], lines[0]["revised_snippet"]) == ("The", "The black")
    assert lines[0]["located"] is True
    rd = pd.read_csv(tmp_path / "out" / "revision_distance.csv", dtype={"text_id": str})
    assert list(rd.columns) == ["text_id", "system", "revision_distance", "unlocated"]
    assert rd["revision_distance"].tolist() == [1, 0]


def test_missing_reference_is_exit_2_with_the_column_named(tmp_path, capsys):
    write_drafts(tmp_path / "d.csv")
    code = cli.main(["revise", "--drafts", str(tmp_path / "d.csv"), "--engine", "diff",
                     "--columns", "text_id=id,system=model", "--out", str(tmp_path / "out")])
    assert code == 2 and "missing column 'reference'" in capsys.readouterr().err


def test_openai_engine_keeps_finished_drafts_and_lists_failures(tmp_path, monkeypatch, capsys):
    write_drafts(tmp_path / "d.csv")
    edit = {"action_name": "a", "revision_description": "d", "revision_level": "word", "revision_intention": "i",
            "original_snippet": "cat", "revised_snippet": "dog"}

    def handler(request):
        user = json.loads(request.content)["messages"][-1]["content"]
        if "Hello" in user:
            return httpx2.Response(400, json={"error": {"message": "context too long"}})
        body = {"edits": [edit]}
        return httpx2.Response(200, json={"id": "x", "object": "chat.completion", "created": 0, "model": "m",
                                          "choices": [{"index": 0, "finish_reason": "stop", "message": {
                                              "role": "assistant", "content": json.dumps(body)}}]})

    import openai

    real = openai.OpenAI
    monkeypatch.setattr(openai, "OpenAI", lambda **kw: real(**{**kw, "http_client": httpx2.Client(
        transport=httpx2.MockTransport(handler))}))
    monkeypatch.setenv("EVAL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    code = cli.main(["revise", "--drafts", str(tmp_path / "d.csv"), "--engine", "openai", "--model", "m",
                     "--base-url", "http://llm.test/v1", "--columns", "text_id=id,system=model,reference=gold",
                     "--out", str(tmp_path / "out")])
    assert code == 1
    rd = pd.read_csv(tmp_path / "out" / "revision_distance.csv", dtype={"text_id": str})
    assert rd[["text_id", "revision_distance"]].values.tolist() == [["1", 1]]
    failures = pd.read_csv(tmp_path / "out" / "failures.csv", dtype={"text_id": str})
    assert failures["text_id"].tolist() == ["2"] and "context too long" in failures["error"].iloc[0]
    assert "sk-test" not in capsys.readouterr().err


def test_read_drafts_errors_name_file_rows_and_column():
    bad = io.BytesIO(b"text_id,system,draft\n1,A,ok\n2,A,\n1,A,again\n")
    with pytest.raises(FormatError, match=r"drafts.csv, row 2, column 'draft': empty draft"):
        read_drafts(bad, "drafts.csv")
    dup = io.BytesIO(b"text_id,system,draft\n1,A,ok\n1,A,again\n")
    with pytest.raises(FormatError, match="row 2: the same"):
        read_drafts(dup, "drafts.csv")


def test_read_edits_jsonl_and_csv():
    fields = "action_name,revision_description,revision_level,revision_intention,original_snippet,revised_snippet"
    csv = f"text_id,system,{fields}\n1,A,a,d,word,i,cat,\n1,A,a,d,word,i,mat,rug\n".encode()
    edits = read_edits(io.BytesIO(csv), "e.csv")
    assert edits["edit_index"].tolist() == [0, 1] and edits["revised_snippet"].tolist() == ["", "rug"]
    assert set(edits["editor"]) == {"uploaded"}
    with pytest.raises(FormatError, match="e.jsonl, row 2: line is not valid JSON"):
        read_edits(io.BytesIO(b'{"text_id": 1}\n{oops\n'), "e.jsonl")
    with pytest.raises(FormatError, match="missing field 'system'"):
        read_edits(io.BytesIO(b'{"text_id": 1}\n'), "e.jsonl")


def test_a_blank_named_reference_is_exit_2_before_any_llm_call(tmp_path, capsys):
    pd.DataFrame({"text_id": ["1", "2"], "system": ["A", "A"], "draft": ["x y", "z w"],
                  "gold": ["x", ""]}).to_csv(tmp_path / "d.csv", index=False)
    code = cli.main(["revise", "--drafts", str(tmp_path / "d.csv"), "--engine", "openai", "--model", "m",
                     "--base-url", "http://127.0.0.1:9/v1", "--reference-column", "gold", "--out", str(tmp_path / "o")])
    assert code == 2 and "row 2, column 'gold': empty reference" in capsys.readouterr().err
