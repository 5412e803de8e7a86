"""``python -m lib rank --judge``: the issue's file and column names; a bad judge file stops before any number."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import lib.cli
from lib.io.paths import DATA_DIR

PANDALM = DATA_DIR / "pandalm_pairwise"
ADDED = [
    "human_skill",
    "human_low",
    "human_high",
    "judge_skill",
    "judge_low",
    "judge_high",
    "ppi_skill",
    "ppi_low",
    "ppi_high",
    "rank_set_low",
    "rank_set_high",
]
QUALITY = [
    "judge",
    "n_items",
    "agreement",
    "kappa",
    "tie_rate",
    "position_bias",
    "position_bias_low",
    "position_bias_high",
    "position_bias_from",
    "ppi_weight",
    "effective_human_n_alone",
    "effective_human_n_without",
]


@pytest.fixture
def humans_15(tmp_path, monkeypatch):
    """The human votes of 15% of PandaLM's items (the judges rate all 999)."""
    monkeypatch.setenv("EVAL_CACHE_DIR", str(tmp_path / "cache"))
    votes = pd.read_csv(PANDALM / "pairwise_long.csv", dtype=str)
    items = votes["item_id"].unique()
    keep = np.random.default_rng(0).choice(items, int(0.15 * len(items)), replace=False)
    path = tmp_path / "humans.csv"
    votes[votes["item_id"].isin(keep)].to_csv(path, index=False)
    return path


def rank(humans, judges, out) -> list[str]:
    return ["rank", "--input", str(humans), "--format", "pairwise", "--judge", str(judges), "--out", str(out)]


def test_rank_with_a_judge_writes_the_issues_files_and_columns(humans_15, tmp_path, capsys):
    out = tmp_path / "out"
    assert lib.cli.main([*rank(humans_15, PANDALM / "judge_votes_long.csv", out), "--sampler", "laplace"]) == 0
    assert sorted(p.name for p in out.iterdir()) == [
        "diagnostics.json",
        "judge_quality.csv",
        "leaderboard.csv",
        "win_matrix.csv",
    ]
    board = pd.read_csv(out / "leaderboard.csv")
    assert list(board.columns[-len(ADDED) :]) == ADDED and board[ADDED].notna().all().all()
    assert (board["ppi_low"] < board["ppi_skill"]).all() and (board["ppi_skill"] < board["ppi_high"]).all()
    assert board["rank_set_low"].le(board["rank_set_high"]).all()
    quality = pd.read_csv(out / "judge_quality.csv")
    assert list(quality.columns) == QUALITY and quality["judge"].tolist() == ["gpt-3.5-turbo", "pandalm-7b"]
    diagnostics = json.loads((out / "diagnostics.json").read_text())
    assert diagnostics["effective_human_n"] > diagnostics["human_votes"] == 447
    # one weight per judge (issue 34): the two together are worth at least the better one alone
    assert sum(diagnostics["judge_weights"].values()) == pytest.approx(diagnostics["lambda"])
    assert diagnostics["effective_human_n"] >= quality["effective_human_n_alone"].max() - 1e-6
    assert quality["ppi_weight"].tolist() == [diagnostics["judge_weights"][j] for j in quality["judge"]]
    # PandaLM shows every pair in one order (the system first by name first): no position bias, and it says why
    assert quality["position_bias"].isna().all() and quality["position_bias_from"].str.startswith("not estimable").all()
    assert "sampler" in diagnostics  # the fit's own diagnostics stay
    printed = capsys.readouterr().out
    assert "25 of 999 verdicts are unusable" in printed and "effective human sample size" in printed


def test_a_judge_file_without_usable_verdicts_stops_before_any_number(humans_15, tmp_path, capsys):
    bad = tmp_path / "blank.csv"
    pd.DataFrame(
        {"prompt": ["0"], "system_a": ["bloom-7b"], "system_b": ["llama-7b"], "judge": ["m"], "choice": [""]}
    ).to_csv(bad, index=False)
    out = tmp_path / "out"
    assert lib.cli.main(rank(humans_15, bad, out)) == 2
    err = capsys.readouterr().err
    assert "error: blank.csv" in err and "every verdict is unusable" in err
    assert not any(p.suffix in {".csv", ".json"} for p in out.iterdir())


def test_a_judge_on_other_items_stops_with_a_clear_message(humans_15, tmp_path, capsys):
    other = tmp_path / "other.csv"
    pd.DataFrame(
        {
            "prompt": ["x1", "x2"],
            "system_a": ["bloom-7b", "opt-7b"],
            "system_b": ["llama-7b", "bloom-7b"],
            "judge": "m",
            "choice": ["A", "B"],
        }
    ).to_csv(other, index=False)
    assert lib.cli.main(rank(humans_15, other, tmp_path / "out")) == 2
    assert "error: other.csv: no item is in the human votes" in capsys.readouterr().err
