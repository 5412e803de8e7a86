"""What goes out of a study must come back the same, and a study's settings must give every link a page
(issue 31, items 4, 5, 7, 11 (Likert gold digits) and 15 (the next batch's messages, a pandas warning)).

Each case runs the command (or the library call the app makes) under a time bound and checks the exit
code and the message."""

from __future__ import annotations

import itertools
import warnings

import pandas as pd
import pytest
from study_hostile import answer_all, items_table, pairwise_study, run

from lib.io.export import FORMULA_START, csv_text, write_csv
from lib.judgments.formats import read_pairwise
from lib.study import db as study_db
from lib.study.annotate import open_page
from lib.study.errors import StudyError
from lib.study.export import export_judgments
from lib.study.items import read_items
from lib.study.summary import list_studies
from lib.io.tables import read_csv

FORMULA_NAMES = ["-minus", "+plus", "=sum", "@cf/meta/llama-3-8b", "'-quoted", "''=twice"]
"""System and prompt names a spreadsheet would run, real model ids among them, and names that start with
the escape itself."""


@pytest.fixture
def sqlite_db(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'studies.sqlite'}"
    monkeypatch.setenv(study_db.DATABASE_ENV, url)
    yield url
    study_db.dispose(url)


# 4. Formula protection is undone by the project's own readers ---------------------------------------------------


def test_the_readers_undo_exactly_the_writers_escaping():
    """Every text of up to 4 characters over the characters that matter (11**4 + ... = 16,105 texts)."""
    from lib.io.export import neutral, unneutral  # new in issue 31

    alphabet = ["=", "+", "-", "@", "'", "\t", "\r", "a", "1", ".", " "]
    for n in range(5):
        for chars in itertools.product(alphabet, repeat=n):
            text = "".join(chars)
            assert unneutral(neutral(text)) == text
            if text.startswith(FORMULA_START) and not _is_number(text):
                assert neutral(text).startswith("'")  # still safe in a spreadsheet


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def test_a_written_csv_reads_back_with_every_name_unchanged():
    table = pd.DataFrame({"system": FORMULA_NAMES, "=score": ["1", "-2", "+3", "@4", "'5", "x"]})
    back = read_csv(csv_text(table).encode(), "t.csv")
    assert list(back.columns) == ["system", "=score"] and back["system"].tolist() == FORMULA_NAMES
    assert back["=score"].tolist() == ["1", "-2", "+3", "@4", "'5", "x"]


def test_export_then_next_batch_then_extend_keeps_every_name(sqlite_db, tmp_path):
    """Before: the export wrote ``'-minus``, rank ranked ``'-minus`` and ``study extend`` then placed nothing
    (exit 0, "judged by every annotator"); the Data page got the quoted names too."""
    systems, prompts = FORMULA_NAMES[:4], [f"-p{i}" for i in range(3)] + ["@p3"]
    created = pairwise_study(sqlite_db, prompts, systems, annotators=3, per_item=1)
    for _, token in created.tokens:
        answer_all(token, lambda page: {"fluency": {"winner": "A"}})
    export = tmp_path / "judgments.csv"
    code, _, err, _ = run(["study", "export", "--study", str(created.study_id), "--out", str(export)])
    assert (code, err) == (0, "")
    assert "'-minus" in export.read_text()  # still neutralised for a spreadsheet
    votes = read_pairwise(read_csv(export, export.name), file=export.name).votes  # what rank and the Data page read
    assert set(votes.system_a) | set(votes.system_b) == set(systems) and set(votes.prompt_id) == set(prompts)
    batch = tmp_path / "next_batch.csv"  # as rank --next writes it (lib.io.export.write_csv)
    write_csv(pd.DataFrame({"system_a": ["-minus", "=sum"], "system_b": ["+plus", "@cf/meta/llama-3-8b"],
                            "prompt_id": ["-p0", "@p3"]}), batch)
    code, out, err, _ = run(["study", "extend", "--study", str(created.study_id), "--next", str(batch)])
    assert (code, err) == (0, "") and sum(int(line.split(": ")[1].split()[0]) for line in out.splitlines()) == 2


# 5. A pairwise system named "tie" --------------------------------------------------------------------------------


def test_a_system_named_tie_and_a_tie_are_told_apart(sqlite_db):
    """Before: every "tie" click was exported as a win (``choice`` A or B) of the system called ``tie``."""
    created = pairwise_study(sqlite_db, ["p0", "p1", "p2", "p3"], ["tie", "zeta"], annotators=1)
    token = created.tokens[0][1]
    picks = iter(["tie", "tie", "system tie", "system zeta"])

    def pick(page):
        what = next(picks)
        if what == "tie":
            return {"fluency": {"winner": "tie"}}  # the form's tie option
        shown = [text.split(" answers ")[0] for _, text in page.passages]
        return {"fluency": {"winner": "AB"[shown.index(what.split()[1])]}}

    assert answer_all(token, pick) == 4
    table = export_judgments(created.study_id).sort_values("page")
    assert table["choice"].tolist() == ["tie", "tie", "A", "B"]  # system_a = "tie" (alphabetically first)


def test_a_gold_tie_and_a_gold_win_of_a_system_named_tie():
    items = read_items(items_table(["p0", "p1"], ["tie", "zeta"], gold={"tie": "tie", "zeta": "tie"}), "pairwise",
                       ["fluency"], file="items.csv")
    assert items[-1].gold == {"fluency": {"tie": True}}
    items = read_items(items_table(["p0", "p1"], ["tie", "zeta"], gold={"tie": "most"}), "pairwise",
                       ["fluency"], file="items.csv")
    assert items[-1].gold == {"fluency": {"winner": "tie"}}


# 7. Links without pages -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("annotators", "message"),
    [
        (10, "6 items x 1 annotator per item give 6 pages: 10 annotators would leave 4 links without a page; "
             "use at most 6 annotators, or 2 annotators per item (12 pages)"),
        (100_000, "6 items x 1 annotator per item give 6 pages: 100000 annotators would leave 99994 links without "
                  "a page; use at most 6 annotators"),
    ],
)
def test_links_without_a_page_are_refused_with_the_numbers_that_would_work(sqlite_db, tmp_path, annotators, message):
    """Before: 10 annotators on 6 items x 1 gave 4 links whose first page said "every page is answered"."""
    items = tmp_path / "items.csv"
    items_table([f"p{i}" for i in range(6)], ["alpha", "beta"]).to_csv(items, index=False)
    links = tmp_path / "links.csv"
    code, _, err, _ = run(["study", "create", "--items", str(items), "--task", "pairwise", "--criteria", "fluency",
                           "--per-item", "1", "--annotators", str(annotators), "--out-link", str(links)], limit=20)
    assert code == 2 and err == f"error: {message}\n"
    assert not links.exists() and list_studies().empty


def test_as_many_annotators_as_pages_is_fine(sqlite_db):
    created = pairwise_study(sqlite_db, [f"p{i}" for i in range(6)], ["alpha", "beta"], annotators=6)
    assert all(open_page(token).total == 1 for _, token in created.tokens)
    with pytest.raises(StudyError, match="7 annotators would leave 1 link without a page"):
        pairwise_study(sqlite_db, [f"p{i}" for i in range(6)], ["alpha", "beta"], annotators=7)


# 11. Likert gold ratings in other digits ----------------------------------------------------------------------------


@pytest.mark.parametrize("cell", ["²", "٣", "３", "3.0"])
def test_a_likert_gold_rating_must_be_written_in_ascii_digits(tmp_path, sqlite_db, cell):
    """Before: ``²`` crashed on ``int('²')`` and the Arabic-Indic ``٣`` was read as 3."""
    items = tmp_path / "items.csv"
    items_table(["p0", "p1"], ["alpha", "beta"], gold={"alpha": cell}).to_csv(items, index=False)
    code, _, err, _ = run(["study", "create", "--items", str(items), "--task", "likert", "--criteria", "fluency",
                           "--per-item", "1", "--annotators", "1", "--out-link", str(tmp_path / "l.csv")])
    assert code == 2 and err.startswith("error: items.csv, rows 3, 4, column 'gold_fluency': gold answer of prompt 'p1'")
    assert f"a rating is a whole number from 1 to 5 in the digits 0-9, not '{cell}'" in err


# 15. The next batch's messages; no pandas warning ------------------------------------------------------------------


def test_a_next_batch_without_its_columns_names_the_file_and_the_columns(sqlite_db, tmp_path):
    """Before: ``error: the next batch needs the columns ...``: neither the file nor where."""
    pairwise_study(sqlite_db, ["p0", "p1"], ["alpha", "beta"])
    batch = tmp_path / "batch.csv"
    batch.write_text("system_a,system_b,prompt\nalpha,beta,p0\n")
    code, _, err, _ = run(["study", "extend", "--study", "1", "--next", str(batch)])
    assert (code, err) == (2, "error: batch.csv, column 'prompt_id': the next batch needs the columns system_a, "
                              "system_b, prompt_id (prompt_id missing; `rank --next N` writes them)\n")


def test_a_blank_cell_of_the_next_batch_names_its_row_and_column(sqlite_db, tmp_path):
    """Before: exit 0 with "not placed: " and an empty name."""
    pairwise_study(sqlite_db, ["p0", "p1"], ["alpha", "beta"])
    batch = tmp_path / "batch.csv"
    batch.write_text("system_a,system_b,prompt_id\nalpha,beta,p0\nalpha,beta,\n")
    code, _, err, _ = run(["study", "extend", "--study", "1", "--next", str(batch)])
    assert (code, err) == (2, "error: batch.csv, row 2, column 'prompt_id': blank cell\n")


def test_a_row_with_more_fields_than_the_header_is_an_error_not_a_pandas_warning(tmp_path):
    """Before: pandas' ParserWarning reached the user and the extra field was dropped without a word."""
    path = tmp_path / "votes.csv"
    path.write_text("prompt,system_a,system_b,annotator,choice\np1,a,b,w1,A,extra\np2,a,b,w1,B\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        code, _, err, _ = run(["fit", "--input", str(path), "--format", "pairwise", "--out", str(tmp_path / "o")])
    assert (code, err) == (2, "error: votes.csv, row 1: 6 fields where the header has 5 (the last: 'extra'); "
                              "quote a text that holds the delimiter ','\n")


def test_a_trailing_delimiter_is_still_read_without_a_warning(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        table = read_csv(b"prompt,system_a,choice\np1,a,A,\np2,a,B,\n", "t.csv")
    assert table.to_dict("list") == {"prompt": ["p1", "p2"], "system_a": ["a", "a"], "choice": ["A", "B"]}
