"""How many votes hold the order (issue 36 item 3): ``rank --robustness`` and its influence approximation.

One simulated arena file, read as a user's: a close top pair (skills 1.0 and 0.95) over a clear gap (the third
at -0.8), its rows interleaved with rows of another language that ``--filter`` leaves out. ``rank --robustness``
runs once (module fixture); its rows, dropped from the file, are refitted by ``rank`` as a user would.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import lib.cli
from lib.ranking.robustness import FLIPS, HOLDS, MAX_SHARE, ROBUSTNESS_COLUMNS
from lib.ranking.simulate import simulate_arena

SKILLS = [1.0, 0.95, -0.8, -1.0, -1.2, -1.4]
N_VOTES, N_OTHER = 1500, 500


def _votes(skills, n, seed, language):
    votes, _ = simulate_arena(len(skills), 100, n, skills=skills, seed=seed)
    return votes.drop(columns=["annotator_id", "criterion"]).assign(language=language)


@pytest.fixture(scope="module")
def arena_file(tmp_path_factory):
    """The file (English votes interleaved with French ones whose best system is the worst in English)."""
    folder = tmp_path_factory.mktemp("robust")
    both = pd.concat([_votes(SKILLS, N_VOTES, 3, "en"), _votes(SKILLS[::-1], N_OTHER, 4, "fr")])
    path = folder / "arena.csv"
    both.iloc[np.random.default_rng(0).permutation(len(both))].to_csv(path, index=False)
    return path


def _rank(path, out, *extra):
    args = ["rank", "--input", str(path), "--format", "pairwise", "--filter", "language=en", *extra]
    assert lib.cli.main([*args, "--out", str(out)]) == 0
    return pd.read_csv(out / "leaderboard.csv")


@pytest.fixture(scope="module")
def robust(arena_file, tmp_path_factory):
    """``rank --robustness --robustness-top 3`` on the file: (leaderboard, robustness.csv, cache folder)."""
    cache = tmp_path_factory.mktemp("cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("EVAL_CACHE_DIR", str(cache))
        out = tmp_path_factory.mktemp("out")
        board = _rank(arena_file, out, "--robustness", "--robustness-top", "3")
        table = pd.read_csv(out / "robustness.csv", dtype={"dropped_rows": str}, keep_default_na=False)
    return board, table, cache


def test_robustness_csv_has_the_issue_columns_top_pair_first(robust):
    board, table, _ = robust
    assert list(table.columns[:6]) == [
        "system_a",
        "system_b",
        "votes_to_flip",
        "share_of_votes",
        "confirmed",
        "dropped_rows",
    ]
    assert list(table.columns) == ROBUSTNESS_COLUMNS
    top = board["system"].tolist()[:3]
    assert table[["system_a", "system_b"]].values.tolist() == [top[:2], top[1:3]]
    assert (table["gap"] > 0).all()  # a above b in the leaderboard: posterior mean skills


def test_the_close_top_pair_flips_when_its_rows_are_dropped_and_rank_refits_the_file(robust, arena_file, tmp_path):
    board, table, cache = robust
    top = table.iloc[0]
    assert top["outcome"] == FLIPS and str(top["confirmed"]) == "True"
    rows = [int(r) for r in top["dropped_rows"].split()]
    assert len(rows) == int(top["votes_to_flip"]) == len(set(rows)) and rows == sorted(rows)
    assert 0 < len(rows) <= MAX_SHARE * N_VOTES
    assert float(top["share_of_votes"]) == pytest.approx(len(rows) / N_VOTES)  # of the votes the filter keeps
    assert top["gap_refit"] < 0 < top["gap"]
    # the bar from outside: drop those data rows (1-based, header not counted) and rank the file again
    file = pd.read_csv(arena_file)
    assert (file.loc[[r - 1 for r in rows], "language"] == "en").all()  # the filter does not renumber rows
    fewer = tmp_path / "fewer.csv"
    file.drop(index=[r - 1 for r in rows]).to_csv(fewer, index=False)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("EVAL_CACHE_DIR", str(cache))
        refitted = _rank(fewer, tmp_path / "out").set_index("system")["skill_mean"]
    order = refitted.index.tolist()
    assert order.index(top["system_b"]) < order.index(top["system_a"])
    # gap_refit is that refit's, not the influences' prediction (same data, settings and seed: the same fit)
    assert refitted[top["system_a"]] - refitted[top["system_b"]] == pytest.approx(top["gap_refit"], abs=1e-6)
    assert board["system"].tolist().index(top["system_a"]) < board["system"].tolist().index(top["system_b"])


def test_a_clear_gap_says_no_flip_within_the_share_searched(robust):
    _, table, _ = robust
    clear = table.iloc[1]
    assert clear["outcome"] == HOLDS and str(clear["confirmed"]) == "False"
    assert clear["votes_to_flip"] == "" and clear["share_of_votes"] == "" and clear["dropped_rows"] == ""
    assert f"no flip within {MAX_SHARE:.1%}" in clear["note"]
    assert int(clear["refits"]) == 1 and float(clear["gap_refit"]) > 0  # the refit without the most influential
    assert f"the {int(MAX_SHARE * N_VOTES):,} most influential votes" in clear["note"]


def test_file_rows_of_the_votes_survive_a_filter_a_criterion_and_left_out_rows():
    from lib.inputs import analysis_input
    from lib.io.tables import read_csv
    from lib.ranking.data import ranking_data

    text = (
        "prompt,system_a,system_b,winner,language,criterion\n"
        "p1,x,y,a,en,quality\n"  # row 1
        "p1,x,z,b,fr,quality\n"  # row 2: filtered out
        "p2,y,z,tie,en,quality\n"  # row 3
        "p2,x,y,,en,quality\n"  # row 4: blank choice, left out
        "p3,x,z,a,en,style\n"  # row 5: another criterion
        "\n"  # a blank line keeps its number, as in the reader's error messages (row 6)
        "p3,y,z,b,en,quality\n"  # row 7
    )
    data = analysis_input(
        read_csv(text.encode(), "votes.csv"),
        "pairwise",
        file="votes.csv",
        filters={"language": ["en"]},
        drop_incomplete_rows=True,
        criterion="quality",
        matrix=False,
    )
    assert data.dropped_rows == (4,)
    rd = ranking_data(data)
    assert rd.rows.tolist() == [1, 3, 7]
    assert rd.votes["prompt_id"].tolist() == ["p1", "p2", "p3"]


@pytest.mark.validation
def test_influence_matches_exact_single_vote_deletion():
    """Bradley–Terry votes (alpha_j = 1: no prompt variables), every vote: the exact posterior mode without it by
    Newton steps, against the first-order change of the top gap (AMIP)."""
    import jax
    import jax.numpy as jnp
    from pymc.sampling.jax import get_jaxified_graph, get_jaxified_logp

    from lib.inference.influence import drop_influence, observation_terms
    from lib.ranking.data import ranking_data
    from lib.ranking.fit import RankSettings, fit_ranking, laplace_state
    from lib.ranking.model import LOGLIK_TERMS
    from tests.inference.test_fit_programs import compiled_programs
    from tests.ranking.conftest import arena_analysis_input

    votes, _ = simulate_arena(4, 30, 300, skills=[0.6, 0.3, 0.0, -0.9], seed=5)
    rd = ranking_data(arena_analysis_input(votes))
    fit = fit_ranking(rd, RankSettings(), fixed_alpha=True, use_cache=False)
    state = laplace_state(fit, fixed_alpha=True)
    contrast = np.array([[1.0, -1.0, 0.0, 0.0]])  # sys000 - sys001
    with compiled_programs() as compiled:
        (gap,), (approx,) = drop_influence(state, LOGLIK_TERMS, "skill", contrast)
    assert len(compiled) <= 10, len(compiled)  # before: 102 one-operation programs (evaluated eagerly)

    model, lay = state.model, state.layout
    neg_logp = get_jaxified_logp(model, negative_logp=False)
    skill, terms = model.replace_rvs_by_values([model["skill"], observation_terms(model, LOGLIK_TERMS)])
    graph = get_jaxified_graph(inputs=model.value_vars, outputs=[skill, terms])

    def without(v):  # the negative log posterior without vote v, minimised by Newton steps from the mode
        def f(x):
            return neg_logp(lay.split(x)) + graph(*lay.split(x))[1][v]

        def step(_, x):
            return x - jnp.linalg.solve(jax.hessian(f)(x), jax.grad(f)(x))

        s = graph(*lay.split(jax.lax.fori_loop(0, 6, step, jnp.asarray(state.x))))[0]
        return s[0] - s[1]

    exact = np.asarray(jax.jit(jax.vmap(without))(jnp.arange(len(votes)))) - gap
    assert np.corrcoef(approx, exact)[0, 1] > 0.999  # measured: 0.999998
    # the error is second order: a vote's own curvature beside the posterior's (its leverage, about 1 / N
    # for N votes of a few systems), so a few percent of the largest change (measured: 1.2%)
    assert np.abs(approx - exact).max() < 0.05 * np.abs(exact).max()


@pytest.mark.validation
def test_influence_with_prompt_discriminations_matches_exact_refits_without_one_vote(tmp_path, monkeypatch):
    """The leaderboard's own model (a discrimination per prompt, integrated out): the votes the influences rank
    first and last, each refitted away as ``rank`` would (exact), against their first-order change."""
    from lib.ranking.data import ranking_data
    from lib.ranking.fit import RankSettings, fit_ranking
    from lib.ranking.robustness import _gap, _influence, refit_without
    from tests.ranking.conftest import arena_analysis_input

    monkeypatch.setenv("EVAL_CACHE_DIR", str(tmp_path))
    votes, _ = simulate_arena(4, 30, 300, skills=[0.6, 0.3, 0.0, -0.9], seed=5)
    data = arena_analysis_input(votes)
    rd = ranking_data(data)
    fit = fit_ranking(rd, RankSettings(), use_cache=False)
    (approx,) = _influence(fit, [("sys000", "sys001")])
    gap = _gap(fit, "sys000", "sys001")
    for v in (np.argmin(approx), np.argmax(approx)):
        exact = _gap(refit_without(data, rd, fit.settings, rd.rows[[v]]), "sys000", "sys001") - gap
        # second order in the vote: its leverage, about 1 / N for N votes of a few systems (measured: 1% and 6.4%)
        assert approx[v] == pytest.approx(exact, rel=0.15)


@pytest.mark.parametrize(
    ("key", "likelihood", "sampler", "says"),
    [
        ("rome_bestworst", None, "laplace", "one a row of the file, not the bestworst format"),
        ("lamp_rankings", None, "laplace", "one a row of the file, not the ranking format"),
        ("hanna_means", None, "laplace", "one a row of the file, not the ratings format"),
        ("pandalm_pairwise", "cells", "laplace", "needs the votes likelihood"),
        ("pandalm_pairwise", None, "numpyro", "the numpyro sampler was chosen"),
    ],
)
def test_robustness_is_refused_before_any_fit_where_it_cannot_be_found(key, likelihood, sampler, says):
    from lib.errors import SettingsError
    from lib.inputs import bundled_input
    from lib.judgments.datasets import DATASETS
    from lib.ranking.fit import RankSettings
    from lib.ranking.robustness import check_robustness

    data = bundled_input(key, DATASETS[key].criteria[0] if DATASETS[key].criteria else None)
    with pytest.raises(SettingsError, match=says):
        check_robustness(data, RankSettings(likelihood=likelihood, sampler=sampler))
    if key == "pandalm_pairwise":  # its votes are rows of the bundled file
        assert check_robustness(data, RankSettings()) is None
