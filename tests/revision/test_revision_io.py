"""The drafts and edits readers (lib.revision.io): errors name file, rows and column; columns are mapped."""

from __future__ import annotations

import io

import pytest

from lib.errors import FormatError
from lib.io.tables import guess_roles
from lib.revision.io import EDIT_OPTIONAL, EDIT_REQUIRED, column_roles, read_drafts, read_edits, read_table


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
    with pytest.raises(FormatError, match=r"e.jsonl, row 2: line is not valid JSON"):
        read_edits(io.BytesIO(b'{"text_id": 1}\n{oops\n'), "e.jsonl")
    with pytest.raises(FormatError, match="required roles system, original_snippet, revised_snippet"):
        read_edits(io.BytesIO(b'{"text_id": 1}\n'), "e.jsonl")


def test_edits_with_their_own_column_names_are_mapped_or_guessed():
    csv = b"doc,model_name,before,after,kind\n1,A,cat,dog,Cliche\n"
    table = read_table(io.BytesIO(csv), "mine.csv")
    guesses = guess_roles(list(table.columns), column_roles([*EDIT_REQUIRED, *EDIT_OPTIONAL]))
    assert guesses == {
        "text_id": "doc",
        "system": "model_name",
        "original_snippet": "before",
        "revised_snippet": "after",
    }
    edits = read_edits(io.BytesIO(csv), "mine.csv", columns={"revision_intention": "kind"})
    row = edits.iloc[0]
    assert (row["text_id"], row["system"], row["original_snippet"], row["revised_snippet"]) == ("1", "A", "cat", "dog")
    assert (row["revision_intention"], row["action_name"], row["editor"]) == ("Cliche", "", "uploaded")
    # a role mapped to a column wins over a column of the role's own name
    swapped = read_edits(
        io.BytesIO(b"text_id,doc,system,original_snippet,revised_snippet\nx,1,A,a,b\n"),
        "e.csv",
        columns={"text_id": "doc"},
    )
    assert swapped["text_id"].tolist() == ["1"]
