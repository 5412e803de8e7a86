"""lib.ranking.data's checks of what an analysis input lets the Leaderboard estimate: its systems, a
position bias (votes that say which system was shown first), annotators' severity (named raters)."""

from __future__ import annotations

from lib.inputs import analysis_input
from lib.io.tables import read_csv
from lib.ranking.data import names_annotators, shows_position, systems_of

VOTES = "prompt,system_a,system_b,annotator,choice,left\np1,x,y,r1,A,x\np2,y,z,r2,B,\np3,x,z,r1,tie,\n"
SCORES = "prompt,system,annotator,score\np1,x,r1,3\np1,y,r1,4\np2,x,{b},2\np2,y,{b},5\n"


def read(text: str, fmt: str, columns: dict | None = None):
    return analysis_input(read_csv(text.encode(), "t.csv"), fmt, columns, file="t.csv", merge_redundant=False)


def test_systems_of_are_the_sorted_systems_of_the_comparisons():
    assert systems_of(read(VOTES, "pairwise")) == ["x", "y", "z"]


def test_position_is_shown_when_one_vote_says_which_system_came_first():
    assert shows_position(read(VOTES, "pairwise", {"position": "left"}))
    assert not shows_position(read(VOTES, "pairwise"))  # the column not mapped
    assert not shows_position(read(VOTES.replace(",x\n", ",\n"), "pairwise", {"position": "left"}))  # all blank
    assert not shows_position(read(SCORES.format(b="r2"), "ratings"))  # no votes


def test_annotators_are_named_with_two_distinct_non_blank_ids():
    assert names_annotators(read(SCORES.format(b="r2"), "ratings"))
    assert not names_annotators(read(SCORES.format(b="r1"), "ratings"))  # one annotator
    assert not names_annotators(
        read(SCORES.replace(",annotator", "").replace(",r1", "").replace(",{b}", ""), "ratings")
    )  # no annotator column
    assert not names_annotators(read(VOTES, "pairwise"))  # votes, not ratings
