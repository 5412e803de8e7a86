"""From a table to an analysis input: criterion rows first, incomplete rows, row filters, bundled keys."""

from __future__ import annotations

import pytest

from lib.errors import FormatError, SettingsError
from lib.inputs import analysis_input, bundled_input
from lib.judgments.datasets import DATASETS
from lib.judgments.formats import filter_rows, read_csv

# Ratings of three systems on two prompts under two criteria; the "style" criterion has blank
# scores (data rows 8 and 11), as in a study where one criterion was only partly rated.
RATINGS = (
    "prompt,system,criterion,score,level\n"
    "p1,x,fluency,1,turn\np1,y,fluency,3,turn\np1,z,fluency,5,turn\n"
    "p2,x,fluency,2,dialog\np2,y,fluency,4,dialog\np2,z,fluency,3,dialog\n"
    "p1,x,style,4,turn\np1,y,style,,turn\np1,z,style,2,turn\n"
    "p2,x,style,5,dialog\np2,y,style,,dialog\np2,z,style,1,dialog\n"
)


def table(text: str = RATINGS):
    return read_csv(text.encode(), "r.csv")


def test_blanks_in_another_criterion_do_not_block_the_chosen_one():
    data = analysis_input(table(), "ratings", file="r.csv", criterion="fluency", merge_redundant=False)
    assert data.matrix.shape == (3, 2) and data.dropped_rows == ()


def test_blanks_in_the_chosen_criterion_name_their_rows_unless_dropped():
    with pytest.raises(FormatError, match="missing value for role 'score'") as info:
        analysis_input(table(), "ratings", file="r.csv", criterion="style", merge_redundant=False)
    assert info.value.rows == [8, 11] and info.value.column == "score"
    data = analysis_input(
        table(), "ratings", file="r.csv", criterion="style", merge_redundant=False, drop_incomplete_rows=True
    )
    assert data.dropped_rows == (8, 11)
    # y lost both its scores, so only the x-z comparison is left.
    assert list(data.matrix.comparisons["comparison"]) == ["z vs x"]


def test_a_blank_criterion_is_not_assigned_to_the_chosen_one():
    text = RATINGS.replace("p2,z,fluency,3", "p2,z,,3")
    with pytest.raises(FormatError, match="missing value for role 'criterion'") as info:
        analysis_input(table(text), "ratings", file="r.csv", criterion="fluency")
    assert info.value.rows == [6]


def test_unknown_criterion_is_a_settings_error():
    with pytest.raises(SettingsError, match=r"unknown criterion 'tone'.*fluency, style"):
        analysis_input(table(), "ratings", file="r.csv", criterion="tone")


def test_filter_rows_keeps_the_spreadsheet_row_numbers():
    df = filter_rows(table(), "level", ["dialog"], file="r.csv")
    assert list(df.index + 1) == [4, 5, 6, 10, 11, 12]
    with pytest.raises(FormatError, match="missing value for role 'score'") as info:
        analysis_input(table(), "ratings", file="r.csv", criterion="style", filters={"level": ["dialog"]})
    assert info.value.rows == [11]


def test_filter_rows_errors_name_the_column_and_known_values():
    with pytest.raises(FormatError, match="column 'lvl' is not in the file") as info:
        filter_rows(table(), "lvl", ["turn"], file="r.csv")
    assert info.value.file == "r.csv"
    with pytest.raises(SettingsError, match=r"'sentence' is not a value of column 'level'.*dialog, turn"):
        filter_rows(table(), "level", ["sentence"], file="r.csv")
    with pytest.raises(SettingsError, match="choose at least one value"):
        filter_rows(table(), "level", [], file="r.csv")


def test_dropping_every_row_is_an_error_not_an_empty_study():
    text = "prompt,system,score\np1,x,\np1,y,\n"
    with pytest.raises(FormatError, match="every row has a blank"):
        analysis_input(table(text), "ratings", file="r.csv", drop_incomplete_rows=True)


def test_bundled_input_unknown_key_is_a_settings_error_naming_the_keys():
    with pytest.raises(SettingsError, match="unknown data set 'nope'.*" + ", ".join(DATASETS)):
        bundled_input("nope")


def test_votes_without_the_matrix_keep_the_criterions_votes_and_still_check_the_criterion():
    table = read_csv(
        b"prompt,system_a,system_b,annotator,choice,criterion\n"
        b"p1,x,y,r1,A,fluency\np2,x,y,r1,B,fluency\np1,x,y,r1,B,coherence\n",
        "v.csv",
    )
    data = analysis_input(table, "pairwise", file="v.csv", criterion="fluency", matrix=False)
    assert data.matrix is None and data.judgments.votes["prompt_id"].tolist() == ["p1", "p2"]
    with pytest.raises(SettingsError, match="several criteria"):
        analysis_input(table, "pairwise", file="v.csv", matrix=False)


def test_a_role_the_user_unsets_stays_unset_when_the_votes_are_read():
    """An annotator column the user leaves unmapped (an empty name) is not guessed again by the reader: each row is its
    own anonymous annotator, as in a file without the column (before, the column's r1/r2 came back)."""
    from lib.judgments.formats import ANONYMOUS_ANNOTATOR

    votes = table("prompt,system_a,system_b,annotator,choice\np1,x,y,r1,A\np1,x,y,r1,B\np2,x,z,r2,tie\n")
    with pytest.raises(FormatError, match="duplicate"):  # the column guessed: r1 voted twice on one prompt and pair
        analysis_input(votes, "pairwise", file="r.csv", matrix=False)
    unset = analysis_input(votes, "pairwise", {"annotator": ""}, file="r.csv", matrix=False)
    assert unset.judgments is not None
    rows = [ANONYMOUS_ANNOTATOR.format(row=r) for r in (1, 2, 3)]
    assert list(unset.judgments.votes["annotator_id"]) == rows
