"""``python -m lib study create / export / summary / revoke``: links written, the export readable, errors exit 2."""

from __future__ import annotations

import re
import urllib.parse

import pandas as pd
from study_helpers import answer, items_table

from lib.cli import main
from lib.judgments.formats import guess_format
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


def _asked(instruction: str) -> dict[str, dict[str, str]]:
    """What an attention check's line asks for, as the form's choices ({} on another page)."""
    criterion = {"CONSISTENT": "consistency", "FLUENT": "fluency"}
    out: dict[str, dict[str, str]] = {}
    for passage, key, label in re.findall(r"passage (\w) as (MOST|LEAST) (CONSISTENT|FLUENT)", instruction):
        out.setdefault(criterion[label], {})[key.lower()] = passage
    return out


def test_a_crowd_study_from_the_command_line(db, tmp_path, capsys):
    """Issue 33: --labels, --check-rate, --crowd and its one link, a system's name refused, the export saying
    who failed the checks, extend --new-links where every annotator has judged an item."""
    from lib.study.crowd import join

    items = tmp_path / "items.csv"
    items_table(3).to_csv(items, index=False)
    argv = ["study", "create", "--items", str(items), "--task", "bestworst", "--criteria", "consistency,fluency"]
    named = [*argv, "--name", "alpha against beta", "--out-link", str(tmp_path / "refused.csv")]
    assert main(named) == 2
    assert "the system 'alpha' appears in the title" in capsys.readouterr().err
    assert not (tmp_path / "refused.csv").exists()
    links_file = tmp_path / "links.csv"
    crowd = ["--labels", "consistent,fluent", "--check-rate", "0.25", "--crowd", "--completion-code", "OK-1"]
    assert main([*argv, *crowd, "--out-link", str(links_file), "--base-url", "http://h:1"]) == 0
    links = pd.read_csv(links_file)
    assert links["platform"].tolist() == ["prolific", "other platforms"]
    assert (
        links["link"][0].startswith("http://h:1/?study_link=") and "PROLIFIC_PID={{%PROLIFIC_PID%}}" in links["link"][0]
    )
    key = urllib.parse.parse_qs(urllib.parse.urlparse(links["link"][1]).query)["study_link"][0]
    tokens = [join(key, {"worker_id": f"W{i}"}) for i in range(3)]
    assert open_page(tokens[0]).labels == {"consistency": "consistent", "fluency": "fluent"}
    for i, token in enumerate(tokens):
        while (page := open_page(token).page) is not None:
            asked = _asked(page.instruction)
            if asked and i == 2:  # the third participant does the opposite of what the check asks
                asked = {c: {"most": pick["least"], "least": pick["most"]} for c, pick in asked.items()}
            submit(token, page.assignment_id, asked or answer(page))
    capsys.readouterr()
    out = tmp_path / "judgments.csv"
    assert main(["study", "export", "--study", "1", "--out", str(out)]) == 0
    said = capsys.readouterr()
    assert "Left out 1 annotator(s) who failed the attention checks (annotator-3" in said.err
    assert "--keep-failed keeps them" in said.err
    assert set(pd.read_csv(out)["annotator"]) == {"annotator-1", "annotator-2"}
    batch = tmp_path / "next_batch.csv"
    batch.write_text("system_a,system_b,prompt_id,score\nalpha,beta,p00,0.3\n")
    assert main(["study", "extend", "--study", "1", "--next", str(batch)]) == 0
    assert "every annotator has judged it" in capsys.readouterr().err
    new_links = tmp_path / "new_links.csv"
    assert main(["study", "extend", "--study", "1", "--next", str(batch), "--new-links", str(new_links)]) == 0
    assert "1 new place(s) on the study link" in capsys.readouterr().out
    assert pd.read_csv(new_links)["platform"].tolist() == ["prolific", "other platforms"]
    assert open_page(join(key, {"worker_id": "W3"})).total >= 1  # the new place, taken through the link
