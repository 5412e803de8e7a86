"""AppTest of the Leaderboard's "How many votes hold the order" (issue 36 item 3): the column of the leaderboard.

An upload of arena votes (one vote a row, a close top pair); the page's Laplace fit and one pair's refits take
seconds.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from lib.inputs import analysis_input
from lib.io.tables import read_csv
from lib.ranking.simulate import simulate_arena
from ui.robustness import COLUMN

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "leaderboard.py")


@pytest.fixture
def at(monkeypatch, tmp_path):
    monkeypatch.setenv("EVAL_CACHE_DIR", str(tmp_path))
    return AppTest.from_file(PAGE, default_timeout=600)


def board_of(at: AppTest) -> pd.DataFrame:
    return next(d.value for d in at.dataframe if "skill_mean" in d.value.columns)


def test_the_leaderboard_gets_a_column_of_how_many_votes_hold_the_order(at):
    votes, _ = simulate_arena(4, 40, 600, skills=[1.0, 0.95, -0.5, -1.0], seed=3)
    upload = votes[["prompt_id", "system_a", "system_b", "winner"]].to_csv(index=False).encode()
    at.session_state["view_dataset"] = "upload"
    at.session_state["analysis_input"] = analysis_input(
        read_csv(upload, "arena.csv"), "pairwise", file="arena.csv", merge_redundant=False
    )
    at.run()
    assert not at.exception and not at.error
    assert COLUMN not in board_of(at).columns and not at.checkbox(key="lb_robust").disabled
    at.number_input(key="lb_robust_top").set_value(2)
    at.checkbox(key="lb_robust").check().run()
    assert not at.exception and not at.error
    board = board_of(at)
    columns = list(board.columns)
    assert columns.index(COLUMN) == columns.index("p_best") + 1
    pairs = next(d.value for d in at.dataframe if "votes_to_flip" in d.value.columns)
    assert pairs[["system_a", "system_b"]].values.tolist() == [board["system"].tolist()[:2]]
    n = int(pairs["votes_to_flip"].iloc[0])
    assert bool(pairs["confirmed"].iloc[0]) and 0 < n <= 30  # 5% of 600 searched
    assert re.fullmatch(rf"{n} \(\d+\.\d\d%\)", board[COLUMN].iloc[0])  # on the upper system's row
    assert (board[COLUMN].iloc[1:] == "").all()  # the pairs below the top 2 were not asked for
    assert len(pairs["dropped_rows"].iloc[0].split()) == n
    assert any(COLUMN in c.value for c in at.caption)
    at.run()  # a rerun shows the kept result at once
    assert board_of(at)[COLUMN].iloc[0] == board[COLUMN].iloc[0]
