"""lib.io.tables: the one reader behind judgments, cost studies and revision drafts and edits."""

from __future__ import annotations

import csv
import io

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lib.cost.schema import STUDY_ROLES, read_study
from lib.errors import FormatError, InputError
from lib.io.tables import ColumnRoles, guess_roles, numbers, read_csv, row_numbers, text
from lib.judgments.formats import FORMATS, read_ratings
from lib.revision.io import column_roles, read_drafts, read_edits


def test_guess_roles_ignores_case_blanks_and_punctuation_and_uses_a_column_once():
    columns = ["Text ID", "TextID", "Model-Name", "draft"]
    synonyms = {"system": ("model_name",), "text_id": ("id",)}
    assert guess_roles(columns, ColumnRoles(("text_id", "system", "draft"), synonyms)) == {
        "text_id": "Text ID",
        "system": "Model-Name",
        "draft": "draft",
    }
    # The first role that names a column takes it.
    roles = ColumnRoles(("prompt", "person"), {"prompt": ("id",), "person": ("id",)})
    assert guess_roles(["id"], roles) == {"prompt": "id"}


def test_guess_roles_keeps_integer_columns_from_text_roles():
    table = pd.DataFrame({"question": ["1", "2", ""], "story": ["once", "upon", "a"]})
    synonyms = {"prompt_text": ("question",), "response": ("story",)}
    roles = ColumnRoles(("prompt_text", "response"), synonyms, text_roles=("prompt_text",))
    assert guess_roles(list(table), roles, table) == {"response": "story"}
    assert guess_roles(list(table), ColumnRoles(("prompt_text",), synonyms)) == {"prompt_text": "question"}


def test_a_column_with_no_value_is_not_guessed_but_can_be_mapped():
    """A ratings file with an empty annotator column (e.g. the reader's own output, saved) reads as
    scores without annotators; mapping the column by hand still reports its blanks."""
    table = pd.DataFrame(
        {
            "prompt_id": ["p1", "p1", "p2", "p2"],
            "system": ["a", "b", "a", "b"],
            "annotator_id": "",
            "score": ["1", "2", "3", "5"],
        }
    )
    assert "annotator" not in guess_roles(list(table), FORMATS["ratings"].column_roles, table)
    assert len(read_ratings(table, file="r.csv")) == 4
    with pytest.raises(FormatError, match="missing value for role 'annotator'"):
        read_ratings(table, {"annotator": "annotator_id"}, file="r.csv")


def test_every_reader_guesses_the_same_way():
    """Judgments, studies and revision files compare names alike: camel case and punctuation."""
    columns = ["Prompt-ID", "SystemA", "System B", "Rater", "Winner"]
    assert guess_roles(columns, FORMATS["pairwise"].column_roles) == {
        "prompt": "Prompt-ID",
        "system_a": "SystemA",
        "system_b": "System B",
        "annotator": "Rater",
        "choice": "Winner",
    }
    assert (
        guess_roles(["Condition", "ParticipantID", "Task", "Instance", "Usefulness"], STUDY_ROLES)["participant"]
        == "ParticipantID"
    )
    assert guess_roles(["TextID", "ModelName", "Draft"], column_roles(["text_id", "system", "draft"])) == {
        "text_id": "TextID",
        "system": "ModelName",
        "draft": "Draft",
    }


def test_numbers_blank_is_nan_and_bad_cells_are_named_by_their_rows():
    cells = np.array(["1.5", "", "x", "inf", "2"], dtype=object)
    rows = np.array([3, 4, 6, 7, 8])
    with pytest.raises(FormatError, match="score must be a number, found 'x', 'inf'") as info:
        numbers(cells, rows, what="score", column="Score", file="f.csv")
    assert (info.value.file, info.value.rows, info.value.column) == ("f.csv", [6, 7], "Score")
    parsed = numbers(cells[[0, 1, 4]], rows[[0, 1, 4]], what="score", column="Score", file="f.csv")
    np.testing.assert_array_equal(parsed, [1.5, np.nan, 2.0])


def test_text_and_row_numbers_follow_the_spreadsheet():
    df = read_csv(b"a,b\n x ,1\n\n,2\ny,3\n", "f.csv")
    assert list(text(df["a"])) == ["x", "", "y"]
    assert list(row_numbers(df)) == [1, 3, 4]  # the blank line 2 keeps its number
    assert list(row_numbers(df[df.b != "2"])) == [1, 4]
    assert list(row_numbers(df.reset_index(drop=True).set_index("a"))) == [1, 2, 3]  # not read_csv's index


def test_lines_ended_by_a_carriage_return_alone_are_read():
    """Old Mac files end lines with CR: the header was refused ("new-line character seen in unquoted field")."""
    df = read_csv(b"a,b\r1,2\r3,4\r", "f.csv")
    assert df.to_dict("list") == {"a": ["1", "3"], "b": ["2", "4"]}


def test_revision_drafts_name_the_spreadsheet_row_after_a_blank_line():
    with pytest.raises(FormatError, match="empty draft") as info:
        read_drafts(io.BytesIO(b"text_id,system,draft\n1,A,one\n\n2,A,  \n"), "d.csv")
    assert info.value.rows == [3]


def test_revision_edits_name_the_line_of_a_json_lines_file():
    lines = (
        b'{"text_id": "1", "system": "A", "original_snippet": "a", "revised_snippet": "b"}\n\n'
        b'{"text_id": "1", "system": "A", "original_snippet": ["a"], "revised_snippet": "b"}\n'
    )
    with pytest.raises(FormatError, match="'original_snippet' is missing or not text") as info:
        read_edits(io.BytesIO(lines), "e.jsonl")
    assert info.value.rows == [3]


def test_study_reader_takes_semicolons_utf16_and_names_rows():
    csv = "condition;participant;task;instance;usefulness\nwith;p1;t;1;4\nwithout;p2;t;1;3\n\nwith;p3;t;1;nine\n"
    with pytest.raises(InputError, match="usefulness must be a number, found 'nine'") as info:
        read_study(read_csv(csv.encode("utf-16"), "s.csv"), file="s.csv")
    assert (info.value.rows, info.value.column) == ([4], "usefulness")
    study = read_study(read_csv(csv.replace("nine", "5").encode("utf-16"), "s.csv"), file="s.csv")
    assert list(study.data["row"]) == [1, 2, 4] and study.with_label == "with"


CELL = st.text(alphabet=st.sampled_from(list("aB7 ,;\"'\n\r\t\u00e9\u20ac#")), max_size=6)
"""A CSV cell with the characters a parser can trip on: delimiters, quotes, line breaks, blanks."""


def _both_parsers(text: str, sep: str):
    """(pyarrow's table or None, pandas' table or its refusal) of ``text`` (:func:`lib.io.tables._parse_regular`)."""
    import csv

    from lib.io.tables import _parse, _parse_regular

    fields = next(csv.reader(io.StringIO(text, newline=""), delimiter=sep), [])
    try:
        slow = _parse(text, sep, len(fields), "f.csv")
    except FormatError as err:
        slow = err
    return _parse_regular(text, sep, fields), slow


@settings(deadline=None)  # a loaded machine
@given(
    st.integers(1, 4).flatmap(lambda k: st.lists(st.lists(CELL, min_size=k, max_size=k), min_size=2, max_size=6)),
    st.sampled_from([",", ";", "\t", "|"]),
    st.sampled_from(["\n", "\r\n"]),
    st.sampled_from([csv.QUOTE_MINIMAL, csv.QUOTE_ALL]),
)
def test_the_fast_parser_reads_every_written_table_as_pandas_does(rows, sep, newline, quoting):
    """A table any CSV writer makes (the header's names given, each once) reads the same by pyarrow as by
    pandas' parser: cell for cell, with the row index that names the file's rows."""
    rows[0] = [f"c{i}" + name.replace("\r", "").replace("\n", "") for i, name in enumerate(rows[0])]
    if newline == "\n":  # a writer ending lines with "\n" leaves a lone "\r" unquoted: another line break
        rows = [[cell.replace("\r", "") for cell in row] for row in rows]
    buffer = io.StringIO()
    csv.writer(buffer, delimiter=sep, lineterminator=newline, quoting=quoting).writerows(rows)
    fast, slow = _both_parsers(buffer.getvalue(), sep)
    assert fast is not None, buffer.getvalue()
    pd.testing.assert_frame_equal(fast, slow)


@settings(deadline=None)
@given(st.lists(st.lists(CELL, min_size=1, max_size=4), min_size=1, max_size=6), st.sampled_from([",", ";"]))
def test_the_fast_parser_takes_no_text_that_pandas_reads_otherwise(rows, sep):
    """Any text, joined without quoting (stray quotes, short and long rows, blank lines): the fast parser
    either declines it or reads exactly what pandas' parser reads."""
    text = "\n".join(sep.join(row) for row in rows)
    fast, slow = _both_parsers(text, sep)
    if fast is not None:
        assert isinstance(slow, pd.DataFrame), (text, slow)
        pd.testing.assert_frame_equal(fast, slow)
