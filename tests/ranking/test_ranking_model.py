"""The ranking model's data and likelihoods (fast: no fitting) and the pairwise position role."""

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose
from scipy.special import expit

from lib.errors import DesignError, FormatError, SettingsError
from lib.inputs import analysis_input, bundled_input
from lib.io.tables import read_csv
from lib.ranking.data import ranking_data
from lib.ranking.model import build_ranking, observations
from lib.ranking.simulate import simulate_arena

HOSTILE = "tests/hostile/"


def evaluate(model, names, point):
    outs = model.replace_rvs_by_values([model[n] for n in names])
    fn = model.compile_fn(outs, inputs=model.value_vars, point_fn=True, on_unused_input="ignore")
    return [np.asarray(v) for v in fn(point)]


def random_point(model, seed=0):
    rng = np.random.default_rng(seed)
    return {k: v + rng.normal(0, 0.5, v.shape) for k, v in model.initial_point().items()}


def test_votes_loglik_is_the_ordinal_model_with_position_bias(arena):
    votes, _ = simulate_arena(4, 6, 300, position_bias=0.5, seed=1)
    obs = observations(arena(votes))
    model = build_ranking(obs, position_bias=True)
    loglik, skill, alpha, b, gamma = evaluate(model, ["loglik", "skill", "alpha", "b", "gamma"], random_point(model))
    assert b.shape == (2,) and b[0] == pytest.approx(-b[1])  # shared antisymmetric thresholds
    eta = skill[obs.system_b] - skill[obs.system_a] + gamma * obs.side
    at_least = expit(alpha[obs.prompt][:, None] * (eta[:, None] - b[None, :]))  # P(y >= 1), P(y >= 2)
    cum = np.column_stack([np.ones(len(eta)), at_least, np.zeros(len(eta))])
    p = cum[np.arange(len(eta)), obs.code] - cum[np.arange(len(eta)), obs.code + 1]
    assert_allclose(loglik, np.log(p).sum(), rtol=1e-10)


def test_ratings_loglik_has_a_prompt_effect_and_shared_thresholds():
    data = analysis_input(read_csv(HOSTILE + "ratings_valid.csv", "r.csv"), "ratings", file="r.csv")
    obs = observations(ranking_data(data))
    model = build_ranking(obs)
    loglik, skill, alpha, b, eta = evaluate(model, ["loglik", "skill", "alpha", "b", "eta"], random_point(model, 1))
    loc = skill[obs.system_b] + eta[obs.prompt]
    at_least = expit(alpha[obs.prompt][:, None] * (loc[:, None] - b[None, :]))
    cum = np.column_stack([np.ones(len(loc)), at_least, np.zeros(len(loc))])
    p = cum[np.arange(len(loc)), obs.code] - cum[np.arange(len(loc)), obs.code + 1]
    assert_allclose(loglik, np.log(p).sum(), rtol=1e-10)


def test_votes_without_ties_have_the_single_threshold_zero(arena):
    votes, _ = simulate_arena(3, 5, 100, tie_rate=0.0, seed=2)
    obs = observations(arena(votes))
    assert obs.categories == ["A better", "B better"]
    model = build_ranking(obs)
    (b,) = evaluate(model, ["b"], random_point(model))
    assert_allclose(b, [0.0])


def test_baseline_skill_is_zero_and_skills_otherwise_sum_to_zero(arena):
    obs = observations(arena(simulate_arena(4, 5, 100, seed=3)[0]))
    for baseline in (None, "sys002"):
        model = build_ranking(obs, baseline=baseline)
        (skill,) = evaluate(model, ["skill"], random_point(model))
        assert skill[2] == 0.0 if baseline else skill.sum() == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(SettingsError, match="baseline 'nope'"):
        build_ranking(obs, baseline="nope")


def test_default_likelihoods_and_refusals():
    assert ranking_data(bundled_input("pandalm_pairwise")).likelihood == "votes"
    hanna = bundled_input("hanna_means", "Relevance")
    rd = ranking_data(hanna)
    assert rd.likelihood == "ratings" and len(rd.systems) == 11
    assert rd.n_votes.sum() == len(rd.ratings) and list(rd.n_votes.index) == rd.systems
    with pytest.raises(SettingsError, match="unknown likelihood 'elo'"):
        ranking_data(hanna, "elo")
    with pytest.raises(SettingsError, match="needs pairwise votes"):
        ranking_data(hanna, "votes")
    with pytest.raises(SettingsError, match="no systems to rank"):
        ranking_data(bundled_input("lsat7"))


def test_all_ties_and_unpaired_cells_are_design_errors():
    ties = analysis_input(read_csv(HOSTILE + "pairwise_all_ties.csv", "t.csv"), "pairwise", file="t.csv")
    with pytest.raises(DesignError, match="every vote is a tie"):
        ranking_data(ties)
    unpaired = analysis_input(read_csv(HOSTILE + "ratings_prompt_per_system.csv", "u.csv"), "ratings", file="u.csv")
    assert ranking_data(unpaired).likelihood == "ratings"  # the ratings likelihood needs no pairs
    with pytest.raises(DesignError, match="no pair of systems"):
        ranking_data(unpaired, "cells")


def test_a_single_system_is_a_design_error():
    hanna = bundled_input("hanna_means", "Relevance")
    one = replace(hanna, ratings=hanna.ratings[hanna.ratings["system"] == hanna.ratings["system"].iloc[0]])
    with pytest.raises(DesignError, match="only one system"):
        ranking_data(one)


# ------------------------------------------------------------------ pairwise position role


def _pairwise(position):
    rows = pd.DataFrame(
        {
            "prompt": ["p1", "p2", "p3", "p4"],
            "system_a": ["x", "x", "y", "x"],
            "system_b": ["y", "y", "x", "y"],
            "annotator": "r1",
            "choice": ["a", "b", "tie", "a"],
            "position": position,
        }
    )
    return read_csv(rows.to_csv(index=False).encode(), "pos.csv")


def test_position_column_becomes_the_first_shown_system():
    data = analysis_input(
        _pairwise(["left", "B", "y", ""]), "pairwise", file="pos.csv", columns={"position": "position"}
    )
    assert data.judgments.votes["first"].tolist() == ["x", "y", "y", ""]


def test_unknown_position_value_names_row_and_column():
    with pytest.raises(FormatError, match=r"pos\.csv, row 3, column 'position': unknown position value 'top'"):
        analysis_input(_pairwise(["a", "b", "top", "a"]), "pairwise", file="pos.csv", columns={"position": "position"})
