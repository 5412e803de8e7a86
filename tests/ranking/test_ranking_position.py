"""The position effect gamma of a small arena is recovered without bias by MAP + Laplace.

Arena prompts carry a handful of votes each. The joint posterior mode over their discriminations
alpha_j over-stated the scale: in 6-system arenas with 1 to 12 votes per prompt gamma came out 8-17%
too large (true 1.0: 1.12-1.18 at 6 votes per prompt, with 95% intervals of width 0.16 that missed
it; NUTS gave 0.96-0.97). Many votes on few systems make that bias several posterior SDs wide, so
one seeded fit detects it, where coverage over small arenas would need dozens of fits. Large data
(more than ``MARGINAL_MAX_OBS`` judgments) take the same marginal mode with a cheaper precision: the
test runs both.
"""

import numpy as np
import pytest

import lib.inference.laplace
import lib.ranking.fit as ranking_fit
import lib.ranking.marginal
from lib.ranking.fit import RankSettings, fit_ranking
from lib.ranking.simulate import simulate_arena
from tests.ranking.conftest import as_idata, stand_in_draws


@pytest.fixture(autouse=True)
def cache(monkeypatch, tmp_path):
    monkeypatch.setenv("EVAL_CACHE_DIR", str(tmp_path))


@pytest.mark.parametrize("max_obs", [ranking_fit.MARGINAL_MAX_OBS, 1000], ids=["marginal curvature", "schur"])
@pytest.mark.validation
def test_gamma_of_an_arena_with_few_votes_per_prompt_is_recovered(arena, monkeypatch, max_obs):
    monkeypatch.setattr(ranking_fit, "MARGINAL_MAX_OBS", max_obs)
    gamma = 1.0
    votes, truth = simulate_arena(6, 1000, 6000, position_bias=gamma, seed=0)
    fit = fit_ranking(arena(votes), RankSettings(sampler="laplace", draws=1000, position_bias=True, seed=0))
    draws = fit.idata.posterior["gamma"].to_numpy().ravel()
    low, high = np.quantile(draws, [0.025, 0.975])
    assert low <= gamma <= high
    # centred within 2 posterior SDs (SD about 0.03; the joint mode's bias was 0.14, 4-5 SDs)
    assert abs(draws.mean() - gamma) <= 2 * draws.std()
    # the skills' scale is not stretched either (their spread against the simulated one)
    slope = np.polyfit(truth["skill"], fit.skill_draws().mean(0), 1)[0]
    assert abs(slope - 1) <= 0.1


@pytest.mark.filterwarnings("error::RuntimeWarning")  # a stand-in alpha_j of 0 had no log (all draws were zeros)
def test_large_data_take_the_schur_complement_as_precision_and_say_so(monkeypatch, arena):
    asked = []

    def fake(model, names, settings, tracker, options, **kept):  # no compilation: the gate
        asked.append(options.marginal_curvature)
        return as_idata(model, stand_in_draws(model, names, 1, settings.draws, 0))  # in the model's own ranges

    monkeypatch.setattr(lib.inference.laplace, "laplace", fake)
    # the full model's Laplace fit, which votes take only where the quadrature over alpha does not apply
    monkeypatch.setattr(lib.ranking.marginal, "not_applicable", lambda *args, **kwargs: "the full model's test")
    rd = arena(simulate_arena(4, 10, 200, seed=1)[0])
    small = fit_ranking(rd, RankSettings(sampler="laplace", draws=5), use_cache=False)
    monkeypatch.setattr(ranking_fit, "MARGINAL_MAX_OBS", 199)
    large = fit_ranking(rd, RankSettings(sampler="laplace", draws=5), use_cache=False)
    assert asked == [True, False]
    assert not any("precision leaves out" in w for w in small.diagnostics.warnings)
    assert any("more than 199 judgments: the skills' precision leaves out" in w for w in large.diagnostics.warnings)
