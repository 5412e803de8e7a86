"""``python -m lib study create / export / summary / revoke``: links written, the export readable, errors exit 2."""

from __future__ import annotations

import urllib.parse

import pandas as pd
from study_helpers import answer, items_table

from lib.cli import main
from lib.formats import guess_format
from lib.study.annotate import open_page, submit


def _tokens(links: pd.DataFrame) -> list[str]:
    return [urllib.parse.parse_qs(urllib.parse.urlparse(u).query)["study_token"][0] for u in links["link"]]


def test_create_from_items_then_export(db, tmp_path, capsys):
    items = tmp_path / "items.csv"
    items_table(4).to_csv(items, index=False)
    links_file = tmp_path / "links.csv"
    argv = ["study", "create", "--items", str(items), "--task", "bestworst", "--criteria", "consistency,fluency"]
    assert (
        main([*argv, "--per-item", "2", "--annotators", "4", "--out-link", str(links_file), "--base-url", "http://h:1"])
        == 0
    )
    links = pd.read_csv(links_file)
    assert links["annotator"].tolist() == ["annotator-1", "annotator-2", "annotator-3", "annotator-4"]
    assert all(u.startswith("http://h:1/?study_token=") for u in links["link"])
    for token in _tokens(links):
        while (page := open_page(token).page) is not None:
            submit(token, page.assignment_id, answer(page))
    out = tmp_path / "judgments.csv"
    assert main(["study", "export", "--study", "1", "--out", str(out)]) == 0
    table = pd.read_csv(out)
    assert len(table) == 4 * 2 * 2 * 3  # items x per item x criteria x systems
    assert guess_format(list(table.columns)) == "bestworst"
    assert main(["study", "summary", "--study", "1"]) == 0
    assert "annotator-4" in capsys.readouterr().out
    # the links file is never overwritten: it holds the only copy a researcher may have sent
    assert main([*argv, "--out-link", str(links_file)]) == 2
    assert "already exists" in capsys.readouterr().err


def test_demo_study_and_revoke(db, tmp_path, capsys):
    links_file = tmp_path / "links.csv"
    assert main(["study", "create", "--demo", "--max-prompts", "2", "--out-link", str(links_file)]) == 0
    token = _tokens(pd.read_csv(links_file))[0]
    progress = open_page(token)
    assert progress.criteria == ["consistency", "fluency"] and progress.total == 2
    assert "Counterfactual AI Writing Study" in progress.instructions and "Breaking Bad" in progress.example
    assert main(["study", "revoke", "--study", "1", "--annotator", "annotator-1"]) == 0
    assert main(["study", "revoke", "--study", "1", "--annotator", "nobody"]) == 2
    assert "no annotator 'nobody'" in capsys.readouterr().err


def test_items_without_task_or_a_bad_file_exit_2(db, tmp_path, capsys):
    items = tmp_path / "items.csv"
    items_table(2).drop(columns=["response"]).to_csv(items, index=False)
    base = ["study", "create", "--items", str(items), "--out-link", str(tmp_path / "l.csv")]
    assert main(base) == 2
    assert "--items needs --task and --criteria" in capsys.readouterr().err
    assert main([*base, "--task", "bestworst", "--criteria", "consistency"]) == 2
    assert "items.csv: missing column response" in capsys.readouterr().err
    assert not (tmp_path / "l.csv").exists()


def test_extend_from_a_next_batch_file(db, tmp_path, capsys):
    links_file = tmp_path / "links.csv"
    assert (
        main(
            [
                "study",
                "create",
                "--demo",
                "--max-prompts",
                "2",
                "--per-item",
                "1",
                "--annotators",
                "2",
                "--out-link",
                str(links_file),
            ]
        )
        == 0
    )
    batch = tmp_path / "next_batch.csv"
    batch.write_text("system_a,system_b,prompt_id,score\nFT_L,ROME,case_1004.json,0.3\nFT_L,ROME,nowhere,0.1\n")
    capsys.readouterr()
    assert main(["study", "extend", "--study", "1", "--next", str(batch)]) == 0
    out = capsys.readouterr()
    assert out.out.strip().endswith(": 1 new page(s)") and "nowhere" in out.err
    assert sorted(open_page(t).total for t in _tokens(pd.read_csv(links_file))) == [1, 2]
