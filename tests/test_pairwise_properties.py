"""The pairwise reader's rules, row by row, against the whole-column code that applies them (issue 35: the
cells stay pandas' str from the file to the votes), on any file hypothesis makes: choices in any case and
blanks, system names as choices, duplicated votes, the position shown first, and the votes turned round."""

from __future__ import annotations

import csv
import io

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lib.errors import FormatError
from lib.judgments.formats import _CHOICE_CODES, VOTE_COLUMNS, read_csv, read_pairwise
from lib.judgments.ratings import orient_votes

# names that collide with codes ("a", "Tie") or fold to each other only by casefold ("Straße", "STRASSE")
SYSTEMS = ["gpt", "GPT", "Straße", "STRASSE", "a", "Tie", "ǅx", "ǆX", "model 2"]
CODES = list(_CHOICE_CODES)
PROMPTS = ["p1", "p2", "007"]
POSITIONS = ["a", "b", "left", "Right", "FIRST", "second", "1", "2", "", "up"]


def _spelled(word: str, how: int, pad: int) -> str:
    cased = [word, word.upper(), word.lower(), word.title()][how]
    return " " * pad + cased + " " * (pad % 2)


@st.composite
def pairwise_rows(
    draw, *, annotator: bool = False, position: bool = False, systems: list[str] = SYSTEMS
) -> list[dict[str, str]]:
    rows = []
    for _ in range(draw(st.integers(1, 8))):
        a, b = draw(st.lists(st.sampled_from(systems), min_size=2, max_size=2, unique=True))
        word = draw(st.sampled_from([*CODES, a, b, "zz", SYSTEMS[0]]))
        row = {
            "prompt": draw(st.sampled_from(PROMPTS)),
            "system_a": a,
            "system_b": b,
            "winner": _spelled(word, draw(st.integers(0, 3)), draw(st.integers(0, 2))),
        }
        if annotator:
            row["annotator"] = draw(st.sampled_from(["r1", "r2"]))
        if position:
            row["position"] = _spelled(draw(st.sampled_from([*POSITIONS, a, b])), draw(st.integers(0, 3)), 0)
        rows.append(row)
    return rows


def _csv(rows: list[dict[str, str]]) -> pd.DataFrame:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return read_csv(out.getvalue().encode("utf-8"), "t.csv")


def _winner(row: dict[str, str]) -> str | None:
    """The documented rule for one row: a code (any case), else an exact system name, else one ignoring case."""
    said = row["winner"].strip()
    if said.lower() in _CHOICE_CODES:
        return _CHOICE_CODES[said.lower()]
    for fold in (str, str.casefold):
        for code, name in (("a", row["system_a"]), ("b", row["system_b"])):
            if fold(said) == fold(name):
                return code
    return None


FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(pairwise_rows(), st.booleans())
def test_each_choice_is_read_as_the_rule_for_its_row_says(rows, as_objects):
    df = _csv(rows) if not as_objects else pd.DataFrame(rows, dtype=object)
    expected = [_winner(row) for row in rows]
    unknown = [i + 1 for i, w in enumerate(expected) if w is None]
    if unknown:
        with pytest.raises(FormatError) as info:
            read_pairwise(df, file="t.csv")
        assert info.value.rows == unknown and info.value.column == "winner"
        first = next(row["winner"].strip() for row, w in zip(rows, expected, strict=True) if w is None)
        assert repr(first) in str(info.value)
        return
    votes = read_pairwise(df, file="t.csv").votes
    assert votes["winner"].tolist() == expected
    assert votes["annotator_id"].tolist() == [f"anonymous (row {i + 1})" for i in range(len(rows))]


@FAST
@given(pairwise_rows(annotator=True, systems=SYSTEMS[:3]))
def test_duplicated_votes_are_the_rows_sharing_prompt_unordered_pair_and_annotator(rows):
    rows = [{**row, "winner": "tie"} for row in rows]
    key = [(r["prompt"], frozenset((r["system_a"], r["system_b"])), r["annotator"]) for r in rows]
    repeated = [i + 1 for i, k in enumerate(key) if key.count(k) > 1]
    if repeated:
        with pytest.raises(FormatError, match="duplicated votes") as info:
            read_pairwise(_csv(rows), file="t.csv")
        assert info.value.rows == repeated and info.value.column == "annotator"
    else:
        assert len(read_pairwise(_csv(rows), file="t.csv").votes) == len(rows)


def _first(row: dict[str, str]) -> str | None:
    said = row["position"].strip()
    if said.lower() in ("a", "left", "first", "1") or said == row["system_a"]:
        return row["system_a"]
    if said.lower() in ("b", "right", "second", "2") or said == row["system_b"]:
        return row["system_b"]
    return "" if said == "" else None


@FAST
@given(pairwise_rows(position=True))
def test_the_system_shown_first_is_read_as_the_rule_for_its_row_says(rows):
    rows = [{**row, "winner": "a"} for row in rows]
    expected = [_first(row) for row in rows]
    if None in expected:
        with pytest.raises(FormatError, match="unknown position value") as info:
            read_pairwise(_csv(rows), file="t.csv")
        assert info.value.rows == [i + 1 for i, f in enumerate(expected) if f is None]
        return
    assert read_pairwise(_csv(rows), file="t.csv").votes["first"].tolist() == expected


@FAST
@given(pairwise_rows(), st.booleans())
def test_votes_turned_round_have_the_first_system_alphabetically_and_the_winner_flipped(rows, as_objects):
    rows = [{**row, "winner": ["a", "b", "tie"][i % 3]} for i, row in enumerate(rows)]
    votes = read_pairwise(_csv(rows), file="t.csv").votes
    votes = votes.astype(object) if as_objects else votes
    out = orient_votes(votes)
    flip = {"a": "b", "b": "a", "tie": "tie"}
    for row, (_, got) in zip(rows, out.iterrows(), strict=True):
        turned = row["system_a"] > row["system_b"]
        low, high = sorted((row["system_a"], row["system_b"]))
        assert (got["system_a"], got["system_b"]) == (low, high)
        assert got["winner"] == (flip[row["winner"]] if turned else row["winner"])
        assert got["score"] == {"a": -1, "tie": 0, "b": 1}[got["winner"]]
        assert got["comparison"] == f"{high} vs {low}"
    assert list(out.dtypes[: votes.shape[1]]) == list(votes.dtypes)  # kept in their dtype


def test_the_votes_table_is_pandas_str_by_position_from_any_frame():
    """The canonical votes: every column pandas' str (pyarrow-held, NaN as missing), indexed 0 to n - 1, also from
    a frame not read by read_csv (object cells, NaN, a filtered index)."""
    text = (
        "prompt,system_a,system_b,winner,position,category,response_a,response_b\n"
        "p1,x,y,A,left,c1,hi,ho\n"
        "p2,y,x,tie,,c2,,yo\n"
        "p3,x,y,b,2,c1,a,b\n"
    )
    by_csv = _csv(list(csv.DictReader(io.StringIO(text))))
    by_hand = pd.read_csv(io.StringIO(text), dtype=object).iloc[[0, 2]]  # NaN where blank, index 0, 2
    by_hand.loc[2, "position"] = float("nan")
    for df, n in ((by_csv, 3), (by_hand, 2)):
        judgments = read_pairwise(df, file="t.csv")
        votes = judgments.votes
        assert list(votes.columns) == [*VOTE_COLUMNS, "first", "category", "response_a", "response_b"]
        assert all(dtype == pd.StringDtype("pyarrow", na_value=float("nan")) for dtype in votes.dtypes)
        assert votes.index.equals(pd.RangeIndex(n)) and not votes.isna().any().any()
        assert all(dtype == pd.StringDtype("pyarrow", na_value=float("nan")) for dtype in judgments.responses.dtypes)
    assert read_pairwise(by_hand, file="t.csv").rows.tolist() == [1, 3]  # the file's rows, after the filter
    assert read_pairwise(by_hand, file="t.csv").votes["first"].tolist() == ["x", ""]
