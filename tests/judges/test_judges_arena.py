"""Arena-shaped files as they are (issue 34 item 1): votes without an annotator column, and a judge's verdicts
given twice on one conversation, are read, counted and said, never refused."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from lib.errors import FormatError
from lib.io.tables import read_csv
from lib.judges.read import read_judge_file
from lib.judges.run import judge_leaderboard
from lib.judges.simulate import simulate_arena
from lib.judgments.formats import guess_format, read_judgments


@pytest.fixture(scope="module")
def arena():
    """A small arena: 6 systems, 1,500 human votes (4 conversations voted twice), three judges, as CSV bytes."""
    humans, verdicts, _ = simulate_arena(np.random.default_rng(3), n_systems=6, n_votes=1500, n_twice=4)
    return humans.to_csv(index=False).encode(), verdicts.to_csv(index=False).encode()


def test_votes_without_an_annotator_column_are_one_anonymous_vote_per_row(arena):
    table = read_csv(arena[0], "arena.csv")
    assert list(table.columns) == ["prompt_id", "system_a", "system_b", "winner"]
    assert guess_format(list(table.columns)) == "pairwise"
    judgments = read_judgments(table, "pairwise", file="arena.csv")
    votes = judgments.votes
    assert len(votes) == 1500 and votes["annotator_id"].is_unique  # a conversation voted twice is two votes
    assert votes["winner"].isin(["a", "b", "tie"]).all()
    assert any("annotator effects cannot be estimated" in note for note in judgments.notes)


def test_an_annotator_column_still_names_the_annotators_and_refuses_their_duplicates():
    text = b"prompt,system_a,system_b,annotator,choice\np1,x,y,r,A\np1,y,x,r,B\n"
    with pytest.raises(FormatError, match="duplicated votes"):
        read_judgments(read_csv(text, "t.csv"), "pairwise", file="t.csv")
    judgments = read_judgments(read_csv(text.replace(b",r,B", b",s,B"), "t.csv"), "pairwise", file="t.csv")
    assert judgments.votes["annotator_id"].tolist() == ["r", "s"] and judgments.notes == ()


def test_a_judge_file_needs_a_judge_or_annotator_column():
    text = b"prompt_id,system_a,system_b,winner\np1,x,y,model_a\n"
    with pytest.raises(FormatError, match="'judge' column"):
        read_judge_file(read_csv(text, "j.csv"), file="j.csv")


def test_a_judges_repeated_verdicts_are_counted_and_said(arena):
    judges = read_judge_file(read_csv(arena[1], "judges.csv"), file="judges.csv")
    # every judge gave two verdicts on each of the 4 conversations voted twice, in the same order
    assert len(judges.verdicts) == 3 * 1500
    assert judges.unusable.set_index("judge")["n_repeated"].to_dict() == {
        "judge-first": 4,
        "judge-good": 4,
        "judge-noisy": 4,
    }
    humans = read_judgments(read_csv(arena[0], "arena.csv"), "pairwise", file="arena.csv").votes
    result = judge_leaderboard(humans, judges)
    twice = result.items[result.items["n_human"] == 2]
    assert len(twice) == 4 and (twice["n_judge"] == 6).all()  # both verdicts of each of three judges
    assert any("4 verdicts repeat" in note and "both are counted" in note for note in result.notes)


def test_a_repeated_verdict_counts_in_the_items_mean_score():
    text = "prompt,system_a,system_b,judge,choice\n0,x,y,m,A\n0,x,y,m,B\n1,y,z,m,A\n"
    judges = read_judge_file(read_csv(text.encode(), "j.csv"), file="j.csv")
    assert judges.verdicts["winner"].tolist() == ["a", "b", "a"]
    assert judges.unusable.loc[0, "n_repeated"] == 1 and judges.unusable.loc[0, "repeated_rows"] == "2"
    humans = pd.DataFrame(
        {
            "prompt_id": ["0", "1", "2"],
            "system_a": ["x", "y", "x"],
            "system_b": ["y", "z", "z"],
            "annotator_id": ["h1", "h2", "h3"],
            "winner": ["a", "b", "a"],
            "criterion": "overall",
        }
    )
    from lib.judges.read import match_items

    items, _ = match_items(humans, judges)
    first = items.set_index("prompt_id").loc["0"]
    assert (first["n_judge"], first["judge_score"]) == (2, 0.5)
