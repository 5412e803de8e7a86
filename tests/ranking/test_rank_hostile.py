"""Hostile input to ``rank`` (issue 17): a stuck NUTS chain must not look certain.

``--chains 1 --draws 20 --tune 0`` gave 20 identical draws, zero-width intervals, P(best) = 1 and
``ess_bulk_min`` 20.0 with only a divergence warning. Every failed convergence check
(:mod:`lib.inference.convergence`) is now in ``diagnostics.json`` (``converged`` false, the warnings) and on
standard error.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest

import lib.cli
from lib.inference.diagnostics import NOT_CONVERGED
from tests.ranking.test_ranking_cli import bundled_args


@pytest.fixture(autouse=True)
def own_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("EVAL_CACHE_DIR", str(tmp_path / "cache"))


def test_a_short_untuned_chain_is_flagged_not_certain(tmp_path, capsys):
    out = tmp_path / "out"
    args = [
        *bundled_args("pandalm_pairwise")[:-1],
        "numpyro",
        "--chains",
        "1",
        "--draws",
        "20",
        "--tune",
        "0",
        "--out",
        str(out),
    ]
    assert lib.cli.main(args) == lib.cli.EXIT_NOT_CONVERGED  # was 0
    diag = json.loads((out / "diagnostics.json").read_text())
    assert diag["converged"] is False and diag["sampler"] == "numpyro"
    failed = [w for w in diag["warnings"] if w.startswith(NOT_CONVERGED)]
    assert any("one chain" in w for w in failed) and any("ESS" in w for w in failed)
    printed = capsys.readouterr()
    assert f"{NOT_CONVERGED}: one chain" in printed.err and "the fit did NOT converge" in printed.err
    # Written for diagnosis with every estimate empty (it wrote P(best) 1.000 and intervals of width 0); the
    # systems, their vote counts and the Bradley–Terry baseline (not fitted by NUTS) stay.
    board = pd.read_csv(out / "leaderboard.csv")
    assert len(board) == 5 and board[["system", "n_votes", "bt_rating"]].notna().all().all()
    estimates = ["skill_mean", "skill_sd", "skill_low", "skill_high", "rank_mean", "rank_low", "rank_high", "p_best"]
    assert board[[*estimates, "p_top_k"]].isna().all().all()
    wins = pd.read_csv(out / "win_matrix.csv")
    assert len(wins) == 10 and wins["p_b_better"].isna().all()
