"""Votes of an arena learn the spread of the prompts' discriminations (sigma_alpha), so the skills keep
their scale (issue 19, item 2: 84 of 100 true skills covered before).

An arena prompt's handful of votes cannot place its alpha_j: under the fixed prior log alpha_j ~ N(0, 0.5)
the posterior mean alpha stayed near the prior's 1.13-1.17 where the simulated one was 1.04 (log alpha SD
0.3), and the skills came out 3-4% too close together. Where every prompt's votes compare one pair
(PandaLM) the spread cannot be told from the prompt's own preference and the fixed prior stays.
"""

import numpy as np
import pytest

import lib.inference.laplace
import lib.ranking.fit as ranking_fit
import lib.ranking.marginal
import lib.ranking.model
from lib.errors import SettingsError
from lib.inputs import bundled_input
from lib.ranking.data import ranking_data
from lib.ranking.fit import RankSettings, fit_ranking
from lib.ranking.model import learns_alpha_spread, observations
from lib.ranking.simulate import simulate_arena

LOG_ALPHA_SD = 0.3


@pytest.fixture(autouse=True)
def cache(monkeypatch, tmp_path):
    monkeypatch.setenv("EVAL_CACHE_DIR", str(tmp_path))


def test_the_spread_is_learnt_from_prompts_that_compare_several_pairs_only(arena):
    assert learns_alpha_spread(observations(arena(simulate_arena(6, 40, 400, seed=0)[0])))
    pandalm = ranking_data(bundled_input("pandalm_pairwise", merge_redundant=False), "votes")
    assert not learns_alpha_spread(observations(pandalm))  # three annotators on one pair a prompt
    assert not learns_alpha_spread(observations(ranking_data(bundled_input("pandalm_pairwise"), "cells")))


@pytest.mark.validation
def test_an_arenas_alpha_spread_and_skill_scale_are_recovered(arena):
    votes, truth = simulate_arena(30, 3000, 60_000, log_alpha_sd=LOG_ALPHA_SD, seed=0)
    fit = fit_ranking(arena(votes), RankSettings(sampler="laplace", draws=1000, seed=0))
    post = fit.idata.posterior
    sigma = post["sigma_alpha"].to_numpy().ravel()
    assert abs(sigma.mean() - LOG_ALPHA_SD) <= 3 * sigma.std()
    # the mean discrimination sets the skills' scale: the fixed prior's was 1.17 against 1.04 here
    mean_alpha = post["alpha"].mean("prompt").to_numpy().ravel()
    assert abs(mean_alpha.mean() - truth["alpha"].mean()) <= 3 * mean_alpha.std()
    skill = fit.skill_draws()[:, [fit.data.systems.index(s) for s in truth["systems"]]]
    z = (skill.mean(0) - truth["skill"]) / skill.std(0)
    assert np.sqrt(np.mean(z**2)) <= 1.30  # 99% of chi-square(30) / 30 when calibrated; 1.31 before


def test_large_arenas_take_the_scales_curvature_from_the_marginal(arena, monkeypatch):
    """Above MARGINAL_MAX_OBS the skills' precision is the Schur complement, which leaves out the prompt
    variables' log-determinant: most of sigma_alpha's curvature, so alone it is not positive definite. (The full
    model's Laplace fit, which votes take only where the quadrature over alpha does not apply.)"""
    monkeypatch.setattr(lib.ranking.marginal, "not_applicable", lambda *args, **kwargs: "the full model's test")
    rd = arena(simulate_arena(8, 400, 4000, log_alpha_sd=LOG_ALPHA_SD, seed=1)[0])
    settings = RankSettings(sampler="laplace", draws=2000, seed=0)
    exact = fit_ranking(rd, settings, use_cache=False).idata.posterior
    monkeypatch.setattr(ranking_fit, "MARGINAL_MAX_OBS", 1000)
    schur = fit_ranking(rd, settings, use_cache=False).idata.posterior
    for name in ("skill", "sigma_alpha"):
        ratio = schur[name].std(("chain", "draw")).to_numpy() / exact[name].std(("chain", "draw")).to_numpy()
        assert np.all((ratio > 0.85) & (ratio < 1.25)), (name, ratio)
    monkeypatch.setattr(lib.ranking.model, "SCALES", ())
    monkeypatch.setattr(lib.inference.laplace, "_KEPT", type(lib.inference.laplace._KEPT)())  # no kept mode
    with pytest.raises(SettingsError, match="not positive definite"):
        fit_ranking(rd, settings, use_cache=False)
