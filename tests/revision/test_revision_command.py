"""``python -m lib revise`` (dispatched by lib.cli): outputs, failures, options and typed errors."""

from __future__ import annotations

import io
import json

import pandas as pd
import pytest

import lib.cli as cli
from lib.errors import FormatError
from lib.revision.io import read_edits
from tests.fake_openai import edit, edits, error
from tests.timing import slowdown


def write_drafts(path, reference_name="gold"):
    pd.DataFrame(
        {
            "id": ["1", "2"],
            "model": ["A", "B"],
            "draft": ["The cat sat on the mat.", "Hello there world."],
            reference_name: ["The black cat sat on the mat.", "Hello there world."],
        }
    ).to_csv(path, index=False)


def test_diff_engine_writes_the_two_files(tmp_path, capsys):
    write_drafts(tmp_path / "d.csv")
    code = cli.main(
        [
            "revise",
            "--drafts",
            str(tmp_path / "d.csv"),
            "--engine",
            "diff",
            "--reference-column",
            "gold",
            "--columns",
            "text_id=id,system=model",
            "--out",
            str(tmp_path / "out"),
        ]
    )
    assert code == 0
    lines = [json.loads(x) for x in (tmp_path / "out" / "edits.jsonl").read_text().splitlines()]
    assert list(lines[0]) == [
        "text_id",
        "system",
        "action_name",
        "revision_description",
        "revision_level",
        "revision_intention",
        "original_snippet",
        "revised_snippet",
        "located",
    ]
    assert (lines[0]["original_snippet"], lines[0]["revised_snippet"]) == ("The", "The black")
    assert lines[0]["located"] is True
    rd = pd.read_csv(tmp_path / "out" / "revision_distance.csv", dtype={"text_id": str})
    assert list(rd.columns) == ["text_id", "system", "revision_distance", "unlocated"]
    assert rd["revision_distance"].tolist() == [1, 0]


def test_missing_reference_is_exit_2_with_the_column_named(tmp_path, capsys):
    write_drafts(tmp_path / "d.csv")
    code = cli.main(
        [
            "revise",
            "--drafts",
            str(tmp_path / "d.csv"),
            "--engine",
            "diff",
            "--columns",
            "text_id=id,system=model",
            "--out",
            str(tmp_path / "out"),
        ]
    )
    assert code == 2 and "required role reference" in capsys.readouterr().err


def test_openai_engine_keeps_finished_drafts_and_lists_failures(fake_openai, tmp_path, monkeypatch, capsys):
    write_drafts(tmp_path / "d.csv")
    server = fake_openai(
        lambda request: error(400, "context too long") if "Hello" in request.user else edits(edit("cat", "dog"))
    )
    monkeypatch.setenv("EVAL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)  # the key's own server
    code = cli.main(
        [
            "revise",
            "--drafts",
            str(tmp_path / "d.csv"),
            "--engine",
            "openai",
            "--model",
            "m",
            "--base-url",
            server.url,
            "--columns",
            "text_id=id,system=model,reference=gold",
            "--out",
            str(tmp_path / "out"),
        ]
    )
    assert code == 1
    rd = pd.read_csv(tmp_path / "out" / "revision_distance.csv", dtype={"text_id": str})
    assert rd[["text_id", "revision_distance"]].values.tolist() == [["1", 1]]
    failures = pd.read_csv(tmp_path / "out" / "failures.csv", dtype={"text_id": str})
    assert failures["text_id"].tolist() == ["2"] and "context too long" in failures["error"].iloc[0]
    assert "sk-test" not in capsys.readouterr().err


def test_the_configured_key_never_goes_to_a_typed_url(fake_openai, tmp_path, monkeypatch, capsys):
    """Before, ``revise`` sent $OPENAI_API_KEY to whatever ``--base-url`` named; now as ``judge`` and the app."""
    write_drafts(tmp_path / "d.csv")
    server = fake_openai(lambda request: edits())
    monkeypatch.setenv("EVAL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-operator")  # configured for OpenAI, not for this server
    args = ["revise", "--drafts", str(tmp_path / "d.csv"), "--engine", "openai", "--model", "m"]
    args += ["--base-url", server.url, "--columns", "text_id=id,system=model"]
    assert cli.main([*args, "--out", str(tmp_path / "o1")]) == 2
    assert "is not the server this app is configured for" in capsys.readouterr().err
    assert server.authorizations() == [] and not (tmp_path / "o1").exists()
    monkeypatch.setenv("MY_KEY", "sk-mine")
    assert cli.main([*args, "--api-key-env", "MY_KEY", "--out", str(tmp_path / "o2")]) == 0
    assert set(server.authorizations()) == {"Bearer sk-mine"}


def test_a_blank_named_reference_is_exit_2_before_any_llm_call(tmp_path, capsys):
    pd.DataFrame({"text_id": ["1", "2"], "system": ["A", "A"], "draft": ["x y", "z w"], "gold": ["x", ""]}).to_csv(
        tmp_path / "d.csv", index=False
    )
    code = cli.main(
        [
            "revise",
            "--drafts",
            str(tmp_path / "d.csv"),
            "--engine",
            "openai",
            "--model",
            "m",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--reference-column",
            "gold",
            "--out",
            str(tmp_path / "o"),
        ]
    )
    assert code == 2 and "row 2, column 'gold': empty reference" in capsys.readouterr().err


def test_csv_outputs_neutralise_spreadsheet_formulas(fake_openai, tmp_path, monkeypatch):
    evil = '=HYPERLINK("http://evil.test","x")'
    pd.DataFrame(
        {
            "text_id": ["1", "2"],
            "system": [evil, "@SUM(A1)"],
            "draft": ["a b c", "d e f"],
            "reference": ["a c", "d e f"],
        }
    ).to_csv(tmp_path / "d.csv", index=False)
    assert (
        cli.main(["revise", "--drafts", str(tmp_path / "d.csv"), "--engine", "diff", "--out", str(tmp_path / "out")])
        == 0
    )
    rd = pd.read_csv(tmp_path / "out" / "revision_distance.csv", dtype=str)
    assert rd["system"].tolist() == ["'" + evil, "'@SUM(A1)"]

    server = fake_openai(lambda request: error(400, "=1+1"))
    monkeypatch.setenv("EVAL_CACHE_DIR", str(tmp_path / "cache"))
    assert (
        cli.main(
            [
                "revise",
                "--drafts",
                str(tmp_path / "d.csv"),
                "--engine",
                "openai",
                "--model",
                "m",
                "--base-url",
                server.url,
                "--max-retries",
                "0",
                "--out",
                str(tmp_path / "llm"),
            ]
        )
        == 1
    )
    failures = pd.read_csv(tmp_path / "llm" / "failures.csv", dtype=str)
    assert failures["system"].tolist() == ["'" + evil, "'@SUM(A1)"]


def test_out_is_checked_before_reading_anything(tmp_path, capsys):
    drafts = str(tmp_path / "absent.csv")  # never read: --out fails first
    (tmp_path / "file").write_text("x")
    assert cli.main(["revise", "--drafts", drafts, "--engine", "diff", "--out", str(tmp_path / "file")]) == 2
    assert "names a file" in capsys.readouterr().err
    full = tmp_path / "full"
    full.mkdir()
    (full / "notes.txt").write_text("keep")
    (full / "edits.jsonl").write_text("old")
    assert cli.main(["revise", "--drafts", drafts, "--engine", "diff", "--out", str(full)]) == 2
    assert "not empty" in capsys.readouterr().err
    write_drafts(tmp_path / "d.csv")
    assert (
        cli.main(
            [
                "revise",
                "--drafts",
                str(tmp_path / "d.csv"),
                "--engine",
                "diff",
                "--reference-column",
                "gold",
                "--columns",
                "text_id=id,system=model",
                "--out",
                str(full),
                "--overwrite",
            ]
        )
        == 0
    )
    assert (full / "notes.txt").read_text() == "keep" and (full / "edits.jsonl").read_text() != "old"


def test_unwritable_out_is_exit_2(tmp_path, capsys):
    (tmp_path / "file").write_text("x")  # a folder inside a file cannot be made, even by root
    assert cli.main(["revise", "--drafts", "x.csv", "--engine", "diff", "--out", str(tmp_path / "file" / "out")]) == 2
    assert "cannot write" in capsys.readouterr().err


def test_header_only_drafts_are_a_clear_error(tmp_path, capsys):
    (tmp_path / "d.csv").write_text("text_id,system,draft,reference\n")
    code = cli.main(["revise", "--drafts", str(tmp_path / "d.csv"), "--engine", "diff", "--out", str(tmp_path / "o")])
    assert code == 2 and "the file has a header but no data rows" in capsys.readouterr().err
    with pytest.raises(FormatError, match="header but no data rows"):
        read_edits(io.BytesIO(b"text_id,system,original_snippet,revised_snippet\n"), "e.csv")


def test_a_1_mb_draft_is_refused_fast_with_its_id_and_length(tmp_path, capsys):
    import time

    big = "word " * 200_000
    pd.DataFrame(
        {"text_id": ["small", "huge"], "system": ["A", "A"], "draft": ["a b", big], "reference": ["a", big + "x"]}
    ).to_csv(tmp_path / "d.csv", index=False)
    factor = slowdown()  # reading 1 MB is work: 3.1 s at a load average of 22 (3 CPU burners); aligning it, minutes
    start = time.perf_counter()
    code = cli.main(["revise", "--drafts", str(tmp_path / "d.csv"), "--engine", "diff", "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert time.perf_counter() - start < 5 * factor
    assert code == 2 and "row 2" in err and "text_id 'huge'" in err and "1,000,000 characters" in err


def test_diff_engine_bounds_the_alignment_of_texts_it_is_given():
    from lib.revision.diff_edits import MAX_WORD_PAIRS, diff_edits_table

    n = int(MAX_WORD_PAIRS**0.5) + 1  # one-letter words: within the character limit, too many pairs
    drafts = pd.DataFrame({"text_id": ["t"], "system": ["S"], "draft": ["a " * n], "reference": ["b " * n]})
    with pytest.raises(FormatError, match=r"text_id 't', system 'S'.*too long to align"):
        diff_edits_table(drafts)


def test_llm_timeout_is_an_option_and_a_silent_server_fails_fast(tmp_path, capsys, monkeypatch):
    import socket
    import time

    silent = socket.socket()  # accepts connections (backlog) but never answers
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    monkeypatch.setenv("EVAL_CACHE_DIR", str(tmp_path / "cache"))
    write_drafts(tmp_path / "d.csv")
    factor = slowdown()  # the 1 s timeout, and work: 2.0 s at a load average of 22 (3 CPU burners)
    start = time.perf_counter()
    try:
        code = cli.main(
            [
                "revise",
                "--drafts",
                str(tmp_path / "d.csv"),
                "--engine",
                "openai",
                "--model",
                "m",
                "--base-url",
                f"http://127.0.0.1:{silent.getsockname()[1]}/v1",
                "--timeout",
                "1",
                "--max-retries",
                "0",
                "--columns",
                "text_id=id,system=model",
                "--out",
                str(tmp_path / "o"),
            ]
        )
    finally:
        silent.close()
    assert time.perf_counter() - start < 1 + 3 * factor
    failures = pd.read_csv(tmp_path / "o" / "failures.csv", dtype=str)
    assert code == 1 and len(failures) == 2 and failures["error"].str.contains("within 1 s").all()
