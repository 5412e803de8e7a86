"""Categories that borrow strength (issue 36 item 2): one fit with a per-category deviation of every system.

On votes simulated with per-category skills (:func:`lib.ranking.simulate.simulate_category_arena`: a large
category, small ones, and one where two systems swap places), the pooled fit of ``rank --by category`` is checked
against separate fits per category, each with the defaults of ``rank``: at least as good a correlation with the
true per-category skills, narrower intervals, nominal coverage, and the reversal still found.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binom, pearsonr

import lib.cli
from lib.errors import FormatError, SettingsError
from lib.inputs import analysis_input
from lib.io.tables import read_csv
from lib.ranking.categories import BY_CATEGORY_COLUMNS
from lib.ranking.fit import RankSettings, rank_settings
from lib.ranking.run import rank_systems
from lib.ranking.simulate import simulate_category_arena

SIMULATED = {"n_votes": (1200, 300, 80, 50), "spread": 0.25, "seed": 0}
"""6 systems, a large category and three small ones (:func:`simulate_category_arena`)."""
UPLOAD = {"prompt_id": "prompt", "annotator_id": "annotator", "winner": "choice"}


def _input(votes: pd.DataFrame, name: str = "votes.csv"):
    return analysis_input(votes.rename(columns=UPLOAD).drop(columns="criterion"), "pairwise", file=name, matrix=False)


@pytest.fixture(scope="module")
def pooled_and_separate():
    """The pooled fit (``rank --by category``'s defaults) and one fit per category (``rank``'s defaults)."""
    votes, truth = simulate_category_arena(**SIMULATED)
    pooled = rank_systems(_input(votes), rank_settings(by_category=True))
    separate = {
        c: rank_systems(_input(votes[votes["category"] == c]), rank_settings()).leaderboard for c in truth["categories"]
    }
    return votes, truth, pooled, separate


def _stack(truth, boards: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Every (category, system) with its estimate and its true skill (centred in its category, as the fits are)."""
    rows = []
    for c, board in boards.items():
        true = truth["category_skill"][c]
        t = board.set_index("system").reindex(truth["systems"])
        rows.append(t.assign(category=c, true=true - true.mean()).reset_index())
    return pd.concat(rows, ignore_index=True)


def test_pooled_fit_is_as_close_to_the_truth_narrower_and_covers_nominally(pooled_and_separate):
    _, truth, pooled, separate = pooled_and_separate
    table = pooled.by_category
    assert list(table.columns) == BY_CATEGORY_COLUMNS
    assert set(table["category"]) == set(truth["categories"]) and len(table) == 6 * 4
    both = _stack(truth, {c: g for c, g in table.groupby("category")})
    alone = _stack(truth, separate)
    r_pooled, r_alone = pearsonr(both["true"], both["skill_mean"])[0], pearsonr(alone["true"], alone["skill_mean"])[0]
    assert r_pooled >= r_alone - 0.01  # at least as good (the large category is as good either way)
    assert _width(both) < _width(alone)  # the small categories borrow strength
    covered = ((both["skill_low"] <= both["true"]) & (both["true"] <= both["skill_high"])).sum()
    # 24 skills, 95% intervals: fewer than binom(24, 0.95)'s 1% quantile covered is not nominal
    assert covered >= binom.ppf(0.01, len(both), 0.95)


def _width(t: pd.DataFrame) -> float:
    """The mean width of the 95% intervals of the categories other than the largest (``general``)."""
    small = t[t["category"] != "general"]
    return float((small["skill_high"] - small["skill_low"]).mean())


def test_a_real_reversal_in_a_category_is_still_found(pooled_and_separate):
    _, truth, pooled, _ = pooled_and_separate
    first, second, category = truth["reversal"]  # first above second overall, second above first in category
    assert truth["skill"][truth["systems"].index(first)] > truth["skill"][truth["systems"].index(second)]
    assert pooled.fit.diagnostics.converged is not False
    draws = pooled.fit.idata["posterior"]["category_skill"].sel(category=category)
    above = (draws.sel(system=second) > draws.sel(system=first)).mean().item()
    assert above > 0.95


def test_rank_by_category_writes_the_leaderboard_by_category(pooled_and_separate, tmp_path, capsys):
    votes, _, pooled, _ = pooled_and_separate  # the same fit: read from the cache
    path = tmp_path / "votes.csv"
    votes.rename(columns=UPLOAD).drop(columns="criterion").to_csv(path, index=False)
    out = tmp_path / "out"
    code = lib.cli.main(["rank", "--input", str(path), "--format", "pairwise", "--by", "category", "--out", str(out)])
    assert code == 0
    table = pd.read_csv(out / "leaderboard_by_category.csv")
    assert list(table.columns) == BY_CATEGORY_COLUMNS
    pd.testing.assert_frame_equal(table, pooled.by_category, check_dtype=False, atol=1e-9)
    assert (table.groupby("category")["p_best"].sum() - 1).abs().max() < 1e-9  # P(best) within each category
    assert (table["skill_low"] <= table["skill_mean"]).all() and (table["rank_low"] <= table["rank_high"]).all()
    n = table.groupby("category")["n_votes"].sum() / 2  # each vote counts for both of its systems
    assert n.to_dict() == votes["category"].value_counts().to_dict()
    printed = capsys.readouterr().out
    assert "sigma_category" in printed and "leaderboard_by_category.csv" in printed


def test_by_category_needs_a_category_column_and_the_votes_likelihood(tmp_path, capsys):
    path = tmp_path / "votes.csv"
    pd.DataFrame({"prompt": ["p1", "p2"], "system_a": "x", "system_b": "y", "choice": ["A", "B"]}).to_csv(path)
    code = lib.cli.main(
        ["rank", "--input", str(path), "--format", "pairwise", "--by", "category", "--out", str(tmp_path / "o")]
    )
    assert code == 2
    assert "needs a category column" in capsys.readouterr().err
    with pytest.raises(SettingsError, match="needs the votes likelihood"):
        RankSettings(likelihood="ratings", by_category=True).validate()


def test_the_pairwise_reader_keeps_the_category_and_names_a_blank_one():
    good = read_csv(b"prompt,system_a,system_b,choice,category\np1,x,y,A,code\np2,x,y,B,maths\n", "v.csv")
    assert list(_read(good)["category"]) == ["code", "maths"]
    blank = read_csv(b"prompt,system_a,system_b,choice,category\np1,x,y,A,code\np2,x,y,B,\n", "v.csv")
    with pytest.raises(FormatError, match=r"row 2, column 'category'") as err:
        _read(blank)
    assert err.value.rows == [2]


def _read(df: pd.DataFrame) -> pd.DataFrame:
    data = analysis_input(df, "pairwise", file="v.csv", matrix=False)
    assert data.judgments is not None
    return data.judgments.votes


def test_category_heatmap_has_a_cell_per_system_and_category(pooled_and_separate):
    from lib.plots.ranking import category_heatmap

    _, truth, pooled, _ = pooled_and_separate
    fig = category_heatmap(pooled.by_category, list(pooled.leaderboard["system"]))
    z = np.asarray(fig.data[0].z)
    assert z.shape == (len(truth["systems"]), len(truth["categories"]))
    assert list(fig.data[0].y) == list(pooled.leaderboard["system"])  # best overall first
