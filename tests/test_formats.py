"""Format readers: conversions on small hand-computed cases and every input error."""

from __future__ import annotations

import io

import pandas as pd
import pytest

from lib.errors import FormatError, SettingsError
from lib.io.tables import guess_roles
from lib.judgments.formats import (
    FORMATS,
    VOTE_COLUMNS,
    guess_format,
    read_csv,
    read_judgments,
    read_ratings,
    read_responses,
    resolve_columns,
)


def table(text: str) -> pd.DataFrame:
    return read_csv(text.encode("utf-8"), "t.csv")


def votes_of(text: str, fmt: str, columns: dict[str, str] | None = None) -> list[tuple[str, ...]]:
    votes = read_judgments(table(text), fmt, columns, file="t.csv").votes
    assert list(votes.columns) == VOTE_COLUMNS
    assert all(pd.api.types.is_string_dtype(votes[c]) for c in VOTE_COLUMNS)
    return [tuple(row) for row in votes.itertuples(index=False)]


def raises(match: str, fn, *args, **kwargs) -> FormatError:
    with pytest.raises(FormatError, match=match) as info:
        fn(*args, **kwargs)
    return info.value


# ------------------------------------------------------------------------------------ pairwise


def test_pairwise_letter_codes_any_case_and_tie_synonyms():
    votes = votes_of(
        "prompt_id,system_a,system_b,annotator,choice\n"
        "p1,x,y,r1,A\np1,x,y,r2,b\np1,x,y,r3,Tie\np2,x,y,r1,draw\np2,x,y,r2,equal\np2,y,x,r3,=\n",
        "pairwise",
    )
    assert votes == [
        ("p1", "x", "y", "r1", "a", "overall"),
        ("p1", "x", "y", "r2", "b", "overall"),
        ("p1", "x", "y", "r3", "tie", "overall"),
        ("p2", "x", "y", "r1", "tie", "overall"),
        ("p2", "x", "y", "r2", "tie", "overall"),
        ("p2", "y", "x", "r3", "tie", "overall"),
    ]


def test_pairwise_digit_codes_and_system_names():
    digits = votes_of("item,model_a,model_b,rater,winner\n1,x,y,r,1\n2,x,y,r,2\n3,x,y,r,0\n", "pairwise")
    assert [v[4] for v in digits] == ["a", "b", "tie"]
    names = votes_of("item,model_a,model_b,rater,winner\n1,x,y,r,y\n2,y,x,r,y\n3,x,y,r,X\n", "pairwise")
    assert [v[4] for v in names] == ["b", "a", "a"]


def test_pairwise_arena_codes_and_exact_names_before_case_folding():
    votes = votes_of(
        "item,model_a,model_b,judge,winner\n1,x,y,r,model_a\n2,x,y,r,MODEL_B\n3,x,y,r,tie (bothbad)\n"
        "4,m,M,r,M\n5,m,M,r,m\n",
        "pairwise",
    )
    assert [v[4] for v in votes] == ["a", "b", "tie", "b", "a"]


def test_pairwise_criterion_and_texts():
    j = read_judgments(
        table(
            "prompt,system_a,system_b,annotator,choice,criterion,prompt_text,response_a,response_b\n"
            "p1,x,y,r,A,fluency,Say hi,hi,hello\n"
            "p1,x,y,r,B,coherence,Say hi,hi,hello\n"
        ),
        "pairwise",
        file="t.csv",
    )
    assert list(j.votes.criterion) == ["fluency", "coherence"]
    assert j.prompt_texts.to_dict("records") == [{"prompt_id": "p1", "prompt_text": "Say hi"}]
    assert sorted(map(tuple, j.responses.to_numpy())) == [("p1", "x", "hi"), ("p1", "y", "hello")]
    assert j.source == "t.csv"


def test_pairwise_unknown_choice_lists_allowed_values():
    err = raises(
        "unknown choice value 'C'",
        votes_of,
        "prompt,system_a,system_b,annotator,choice\np1,x,y,r,A\np2,x,y,r,C\n",
        "pairwise",
    )
    assert err.file == "t.csv" and err.rows == [2] and err.column == "choice"
    for allowed in ("A, B, tie", "1, 2, 0", "system_a / system_b"):
        assert allowed in str(err)


def test_pairwise_system_compared_with_itself():
    err = raises(
        "compared with itself",
        votes_of,
        "prompt,system_a,system_b,annotator,choice\np1,x,y,r,A\np2,x,x,r,A\n",
        "pairwise",
    )
    assert (err.file, err.rows, err.column) == ("t.csv", [2], "system_b")
    assert str(err).startswith("t.csv, row 2, column 'system_b':")


def test_pairwise_single_system_overall():
    err = raises("only one system", votes_of, "prompt,system_a,system_b,annotator,choice\np1,x,x,r,A\n", "pairwise")
    assert err.file == "t.csv" and err.column == "system_b"


def test_pairwise_duplicated_votes_count_swapped_pairs():
    err = raises(
        "duplicated votes",
        votes_of,
        "prompt,system_a,system_b,annotator,choice\np1,x,y,r,A\np1,x,y,s,A\np1,y,x,r,B\n",
        "pairwise",
    )
    assert err.rows == [1, 3] and err.file == "t.csv" and err.column == "annotator"


def test_missing_value_in_required_column():
    err = raises(
        "missing value for role 'annotator'",
        votes_of,
        "prompt,system_a,system_b,annotator,choice\np1,x,y,,A\np1,x,y,r,B\n",
        "pairwise",
    )
    assert (err.file, err.rows, err.column) == ("t.csv", [1], "annotator")


# ------------------------------------------------------------------------------------ best-worst


def test_bestworst_three_systems_gives_every_pair():
    votes = votes_of(
        "participant,case,system,judgment\nu,c1,x,middle\nu,c1,y,least\nu,c1,z,most\n",
        "bestworst",
    )
    # most z beats x and y; x (middle) beats least y; pairs in row order.
    assert votes == [
        ("c1", "x", "y", "u", "a", "overall"),
        ("c1", "x", "z", "u", "b", "overall"),
        ("c1", "y", "z", "u", "b", "overall"),
    ]


def test_bestworst_four_systems_leaves_middle_pair_unknown():
    votes = votes_of(
        "annotator,prompt,system,judgment\nu,p,w,BEST\nu,p,x,\nu,p,y,Middle\nu,p,z,worst\n",
        "bestworst",
    )
    assert votes == [
        ("p", "w", "x", "u", "a", "overall"),
        ("p", "w", "y", "u", "a", "overall"),
        ("p", "w", "z", "u", "a", "overall"),
        ("p", "x", "z", "u", "a", "overall"),
        ("p", "y", "z", "u", "a", "overall"),
    ]


def test_bestworst_trials_split_by_criterion_and_trial_column():
    text = (
        "participant,page,case,criterion,system,judgment\n"
        "u,1,c,fluency,x,MOST\nu,1,c,fluency,y,LEAST\n"
        "u,1,c,consistency,x,least\nu,1,c,consistency,y,most\n"
        "u,2,c,fluency,x,least\nu,2,c,fluency,y,most\n"
    )
    votes = votes_of(text, "bestworst")
    assert votes == [
        ("c", "x", "y", "u", "a", "fluency"),
        ("c", "x", "y", "u", "b", "consistency"),
        ("c", "x", "y", "u", "b", "fluency"),
    ]
    # Without a trial column the two fluency judgments of case c collide.
    err = raises("system 'x', 'y' listed more than once", votes_of, text, "bestworst", {"trial": ""})
    assert err.rows == [1, 2, 5, 6] and err.column == "system" and "map a 'trial' column" in str(err)


def test_bestworst_needs_one_most_and_one_least():
    err = raises(
        "exactly one MOST and one LEAST, found 2 MOST and 0 LEAST",
        votes_of,
        "annotator,prompt,system,judgment\nu,p,x,most\nu,p,y,most\nu,p,z,middle\nv,p,x,most\nv,p,y,least\n",
        "bestworst",
    )
    assert (err.file, err.rows, err.column) == ("t.csv", [1, 2, 3], "judgment")


def test_bestworst_unknown_judgment_value():
    err = raises(
        "unknown judgment value 'good'",
        votes_of,
        "annotator,prompt,system,judgment\nu,p,x,good\nu,p,y,least\n",
        "bestworst",
    )
    assert (err.rows, err.column) == ([1], "judgment")


def test_trial_with_one_system():
    err = raises(
        "shows only one system", votes_of, "annotator,prompt,system,rank\nu,p,x,1\nu,p,y,2\nv,q,x,1\n", "ranking"
    )
    assert (err.rows, err.column) == ([3], "system")


# ------------------------------------------------------------------------------------ ranking


def test_ranking_with_ties():
    votes = votes_of("writer,item,condition,rank\nw,i,x,2\nw,i,y,1\nw,i,z,2\n", "ranking")
    assert votes == [
        ("i", "x", "y", "w", "b", "overall"),
        ("i", "x", "z", "w", "tie", "overall"),
        ("i", "y", "z", "w", "a", "overall"),
    ]


def test_ranking_non_numeric_rank():
    err = raises(
        "rank must be a number, found 'first'",
        votes_of,
        "annotator,prompt,system,rank\nu,p,x,1\nu,p,y,first\n",
        "ranking",
    )
    assert (err.file, err.rows, err.column) == ("t.csv", [2], "rank")


def test_ranking_single_system_overall():
    err = raises("only one system \\('x'\\)", votes_of, "annotator,prompt,system,rank\nu,p,x,1\nv,p,x,1\n", "ranking")
    assert err.column == "system"


def test_judgment_format_rejects_other_formats():
    raises("not a judgment format", read_judgments, table("person,item,score\np,i,1\n"), "responses", file="t.csv")


# ------------------------------------------------------------------------------------ responses, ratings


def test_responses_integer_scores():
    out = read_responses(table("person,item,score\np1,i1,0\np1,i2,2\np2,i1,1.0\n"), file="t.csv")
    assert out.to_dict("list") == {"person": ["p1", "p1", "p2"], "item": ["i1", "i2", "i1"], "score": [0, 2, 1]}
    assert out.score.dtype == "int64" and pd.api.types.is_string_dtype(out.item)


@pytest.mark.parametrize(
    ("text", "match", "rows"),
    [
        ("person,item,score\np1,i1,0\np1,i2,1.5\n", "ordered integer", [2]),
        ("person,item,score\np1,i1,0\np1,i2,high\n", "must be a number", [2]),
        ("person,item,score\np1,i1,0\np1,i1,1\n", "more than one score", [1, 2]),
    ],
)
def test_responses_errors(text, match, rows):
    err = raises(match, read_responses, table(text), file="t.csv")
    assert err.rows == rows and err.column in {"score", "item"}


def test_ratings_keep_one_row_per_annotator_score():
    out = read_ratings(
        table("prompt,system,rater,score\np1,y,r2,3\np1,x,r2,5\np1,x,r1,4\np1,y,r1,2\np2,x,r1,1\np2,y,r1,1\n"),
        file="t.csv",
    )
    assert out.to_dict("list") == {
        "prompt_id": ["p1", "p1", "p1", "p1", "p2", "p2"],
        "system": ["x", "x", "y", "y", "x", "y"],
        "criterion": ["overall"] * 6,
        "annotator_id": ["r1", "r2", "r1", "r2", "r1", "r1"],
        "score": [4.0, 5.0, 2.0, 3.0, 1.0, 1.0],
    }


def test_ratings_without_annotator_column_keep_repeated_cells_as_different_raters():
    out = read_ratings(table("prompt,system,score\np1,x,4\np1,y,2\np1,x,5\n"), file="t.csv")
    assert out[["system", "annotator_id", "score"]].to_dict("list") == {
        "system": ["x", "x", "y"],
        "annotator_id": ["", "", ""],
        "score": [4.0, 5.0, 2.0],
    }


def test_ratings_same_annotator_twice_and_non_numeric():
    err = raises(
        "same annotator scored",
        read_ratings,
        table("prompt,system,rater,score\np,x,r,4\np,x,r,5\np,y,r,1\n"),
        file="t.csv",
    )
    assert (err.rows, err.column) == ([1, 2], "rater")
    err = raises("score must be a number", read_ratings, table("prompt,system,score\np,x,4\np,y,n/a\n"), file="t.csv")
    assert (err.rows, err.column) == ([2], "score")


# ------------------------------------------------------------------------------------ reading files


def test_blank_lines_and_filtered_frames_keep_file_row_numbers():
    df = table(
        "prompt,system_a,system_b,annotator,choice,criterion\np1,x,y,r,A,c1\n\np1,x,y,r,A,c2\n,,,,,\np2,x,y,r,Q,c2\n"
    )
    assert len(df) == 3
    err = raises("unknown choice value 'Q'", read_judgments, df, "pairwise", file="t.csv")
    assert err.rows == [5]
    err = raises("unknown choice value 'Q'", read_judgments, df[df.criterion == "c2"], "pairwise", file="t.csv")
    assert err.rows == [5]


def test_read_csv_missing_path(tmp_path):
    raises("no such file", read_csv, tmp_path / "nope.csv", "nope.csv")


def test_read_csv_sources_and_bom(tmp_path):
    data = "\ufeffa,b\n007,x\n".encode("utf-8")
    path = tmp_path / "f.csv"
    path.write_bytes(data)
    for source in (data, path, str(path), io.BytesIO(data)):
        df = read_csv(source, "f.csv")
        assert list(df.columns) == ["a", "b"] and df.loc[0, "a"] == "007"


@pytest.mark.parametrize(
    ("data", "match", "rows"),
    [
        (b"", "the file is empty", None),
        (b"  \n\n", "the file is empty", None),
        (b"a,b\n", "no data rows", None),
        (b"a,b\n1,2\nx,\xe9t\xe9\n", "not UTF-8 text: byte 0xe9 at byte offset 10 \\(line 3", [2]),
        (b"a,b\n1,2\n1,2,3\n", "cannot parse as CSV", [2]),
    ],
)
def test_read_csv_errors(data, match, rows):
    err = raises(match, read_csv, data, "up.csv")
    assert err.file == "up.csv" and err.rows == rows


# ------------------------------------------------------------------------------------ columns


def test_roles_cover_every_format():
    assert list(FORMATS) == ["pairwise", "bestworst", "ranking", "responses", "ratings"]
    assert all(name == spec.name for name, spec in FORMATS.items())
    # an arena's votes (prompt_id, system_a, system_b, winner) name no annotator: one anonymous vote per row
    assert FORMATS["pairwise"].required == ("prompt", "system_a", "system_b", "choice")
    assert "annotator" in FORMATS["pairwise"].optional


@pytest.mark.parametrize(
    ("columns", "fmt", "expected"),
    [
        (
            ["Item ID", "Model A", "Model B", "Worker", "Preference"],
            "pairwise",
            {
                "prompt": "Item ID",
                "system_a": "Model A",
                "system_b": "Model B",
                "annotator": "Worker",
                "choice": "Preference",
            },
        ),
        (
            ["instruction_id", "rater", "model", "best_worst"],
            "bestworst",
            {"prompt": "instruction_id", "annotator": "rater", "system": "model", "judgment": "best_worst"},
        ),
        (
            ["respondent", "question", "rating"],
            "responses",
            {"person": "respondent", "item": "question", "score": "rating"},
        ),
    ],
)
def test_guess_roles_from_each_formats_synonyms(columns, fmt, expected):
    assert guess_roles(columns, FORMATS[fmt].column_roles) == expected


def test_resolve_columns_user_mapping_wins_over_guesses():
    df = table("prompt,system_a,system_b,rater,label,winner\np,x,y,r,A,B\n")
    assert guess_roles(df.columns, FORMATS["pairwise"].column_roles)["choice"] == "winner"
    mapping = resolve_columns(df, "pairwise", {"choice": "label"}, file="t.csv")
    assert mapping == {
        "prompt": "prompt",
        "system_a": "system_a",
        "system_b": "system_b",
        "annotator": "rater",
        "choice": "label",
    }
    # An empty name unsets an optional role that would otherwise be guessed.
    df = table("prompt,system_a,system_b,rater,winner,criterion\np,x,y,r,A,c\n")
    assert "criterion" not in resolve_columns(df, "pairwise", {"criterion": ""}, file="t.csv")


def test_resolve_columns_errors_name_the_file_and_column():
    df = table("prompt,system_a,system_b,rater,winner\np,x,y,r,A\n")
    err = raises(
        "column 'nope' \\(mapped to role 'choice'\\) is not in the file",
        resolve_columns,
        df,
        "pairwise",
        {"choice": "nope"},
        file="t.csv",
    )
    assert err.file == "t.csv" and err.column == "nope"
    err = raises(
        "no column for required role choice",
        resolve_columns,
        table("prompt,system_a,system_b,annotator\np,x,y,r\n"),
        "pairwise",
        None,
        file="t.csv",
    )
    assert err.file == "t.csv" and "prompt, system_a, system_b, annotator" in str(err)
    raises("unknown role 'winner'", resolve_columns, df, "pairwise", {"winner": "label"}, file="t.csv")
    with pytest.raises(SettingsError, match="unknown format 'triples'; choose one of pairwise, bestworst"):
        resolve_columns(df, "triples", None, file="t.csv")


# ------------------------------------------------------------------ reader gaps (issue 9 item 9)

VOTES = "prompt,system_a,system_b,annotator,choice\np1,x,y,r1,A\np2,x,y,r1,maybe\n"


def test_read_csv_trailing_comma_on_data_rows_does_not_shift_columns():
    df = read_csv(b"prompt,system_a,system_b,annotator,choice\np1,x,y,r1,A,\np2,x,y,r2,B,\n", "t.csv")
    assert list(df.columns) == ["prompt", "system_a", "system_b", "annotator", "choice"]
    assert df["prompt"].tolist() == ["p1", "p2"] and df["choice"].tolist() == ["A", "B"]


@pytest.mark.parametrize("sep", [";", "\t", "|"])
def test_read_csv_detects_the_delimiter_and_keeps_row_numbers(sep):
    df = read_csv(VOTES.replace(",", sep).encode(), "t.csv")
    assert df.equals(read_csv(VOTES.encode(), "t.csv"))
    err = raises("unknown choice value 'maybe'", read_judgments, df, "pairwise", file="t.csv")
    assert err.rows == [2] and err.column == "choice"


def test_read_csv_comma_file_with_semicolons_in_quoted_text_stays_comma():
    df = read_csv(b'prompt,text\np1,"a; b; c"\np2,"d; e"\n', "t.csv")
    assert list(df.columns) == ["prompt", "text"] and df["text"].tolist() == ["a; b; c", "d; e"]


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16", "utf-16-le", "utf-16-be"])
def test_read_csv_decodes_utf8_bom_and_utf16_with_bom(encoding):
    text = "prompt;system;score\np1;Zoë;3\np2;Émile;4\n"
    data = text.encode(encoding)
    if encoding in ("utf-16-le", "utf-16-be"):  # these codecs write no byte-order mark
        data = "\ufeff".encode(encoding) + data
    df = read_csv(data, "t.csv")
    assert list(df.columns) == ["prompt", "system", "score"] and df["system"].tolist() == ["Zoë", "Émile"]


def test_read_csv_bad_utf16_names_the_file_and_asks_for_utf8():
    err = raises("UTF-8", read_csv, b"\xff\xfe not utf-8", "latin.csv")
    assert err.file == "latin.csv"


# ------------------------------------------------------------------------- guessing (issue 8)


@pytest.mark.parametrize(
    ("columns", "fmt"),
    [
        (["item_id", "system_a", "system_b", "annotator", "choice"], "pairwise"),
        (["participant", "page", "case", "system", "judgment"], "bestworst"),
        (["passage_id", "annotator", "item", "condition", "rank"], "ranking"),
        (["person", "item", "score"], "responses"),
        (["system", "prompt_idx", "criterion", "mean_human_score"], "ratings"),
        (["passage_id", "text", "annotator"], None),
    ],
)
def test_guess_format_from_the_column_names(columns, fmt):
    assert guess_format(columns) == fmt


def test_guess_roles_never_takes_an_integer_column_for_text():
    df = table("question,system,rank,annotator,passage\n1,x,1,r,2\n1,y,2,r,3\n")
    guess = guess_roles(list(df.columns), FORMATS["ranking"].column_roles, df)
    assert "prompt_text" not in guess and "response" not in guess
    df = table("question,system,rank,annotator,passage\nWhy?,x,1,r,Once upon\nWhy?,y,2,r,A time\n")
    guess = guess_roles(list(df.columns), FORMATS["ranking"].column_roles, df)
    assert guess["response"] == "passage"
