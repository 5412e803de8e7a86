"""Bradley–Terry baseline: reproduces LMArena's arena-rank on PandaLM, refuses data without a finite MLE."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from lib.errors import DesignError, FormatError
from lib.io.paths import ROOT
from lib.ranking.baseline import bradley_terry

DATA = ROOT / "data"


def _pandalm_votes() -> pd.DataFrame:
    df = pd.read_csv(DATA / "pandalm_pairwise" / "pairwise_long.csv")
    return pd.DataFrame(
        {
            "system_a": df["system_a"],
            "system_b": df["system_b"],
            "winner": df["choice"].map({"A": "a", "B": "b", "tie": "tie"}),
        }
    )


@pytest.mark.validation
def test_reproduces_arena_rank_on_pandalm():
    ref = pd.read_csv(DATA / "bt_reference" / "pandalm_arena_rank_bt.csv").set_index("competitors")
    got = bradley_terry(_pandalm_votes()).set_index("system")
    assert list(got.columns) == ["bt_rating", "bt_low", "bt_high"]
    assert list(got.index) == list(ref.index)  # best first, same order as arena-rank's ratings
    np.testing.assert_allclose(got["bt_rating"], ref["ratings"], atol=0.01)
    np.testing.assert_allclose(got["bt_low"], ref["rating_lower"], atol=0.1)
    np.testing.assert_allclose(got["bt_high"], ref["rating_upper"], atol=0.1)
    assert got["bt_rating"].mean() == pytest.approx(1000.0, abs=1e-6)


def test_rating_gap_matches_win_odds_without_ties():
    # 30 wins of B to 10 of A: MLE odds 3, so the gap is 400 * log10(3) points
    votes = pd.DataFrame({"system_a": "x", "system_b": "y", "winner": ["b"] * 30 + ["a"] * 10})
    got = bradley_terry(votes).set_index("system")["bt_rating"]
    assert got["y"] - got["x"] == pytest.approx(400 * np.log10(3), abs=1e-6)


def test_level_narrows_intervals():
    wide = bradley_terry(_pandalm_votes(), level=0.95)
    narrow = bradley_terry(_pandalm_votes(), level=0.5)
    assert ((narrow["bt_high"] - narrow["bt_low"]) < (wide["bt_high"] - wide["bt_low"])).all()


def test_system_that_never_wins_is_a_design_error():
    votes = pd.DataFrame(
        {"system_a": ["x", "x", "y", "z"], "system_b": ["y", "z", "z", "y"], "winner": ["a", "a", "a", "b"]}
    )  # x beats everyone, never loses
    with pytest.raises(DesignError, match="never win"):
        bradley_terry(votes)


def test_unknown_winner_names_row_and_column():
    votes = pd.DataFrame({"system_a": ["x", "x"], "system_b": ["y", "y"], "winner": ["a", "C"]})
    with pytest.raises(FormatError, match=r"row 2, column 'winner'.*'C'"):
        bradley_terry(votes)
