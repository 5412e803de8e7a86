"""Votes clustered by prompt (issue 16, item 12): with a prompt x system effect the intervals that treat
votes as independent are too narrow; the prompt-clustered ones cover, and the data say so.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binom

from lib.errors import SettingsError
from lib.ranking.baseline import bradley_terry
from lib.ranking.clusters import CLUSTER_ADVICE, CLUSTERED_NOTE, DESIGN_EFFECT_WARN, cluster_by_prompt, flagged
from lib.ranking.fit import LAPLACE, RankSettings, fit_ranking
from lib.ranking.model import observations
from lib.ranking.simulate import simulate_arena
from tests.ranking.conftest import arena_input

SD, VOTES_PER_PROMPT, N_SYSTEMS, N_PROMPTS, REPLICATES = 0.3, 50, 10, 200, 15
POINTS = 400 / np.log(10)
"""Rating points per logit (the arena scale of :func:`bradley_terry`)."""


@pytest.fixture(autouse=True)
def cache(monkeypatch, tmp_path):
    monkeypatch.setenv("EVAL_CACHE_DIR", str(tmp_path))


def population_skill(skill: np.ndarray, sd: float) -> np.ndarray:
    """What Bradley-Terry estimates when each prompt shifts each skill by N(0, sd): the
    population-averaged skills, attenuated by ``(1 + c^2 2 sd^2)^-1/2``, ``c = 16 sqrt(3) / (15 pi)``
    (Zeger, Liang & Albert 1988, Biometrics 44(4), eq. 2.4: a logistic-normal integral)."""
    return skill / np.sqrt(1 + (16 * np.sqrt(3) / (15 * np.pi)) ** 2 * 2 * sd**2)


def replicate(sd: float, seed: int):
    votes, truth = simulate_arena(
        N_SYSTEMS,
        N_PROMPTS,
        N_PROMPTS * VOTES_PER_PROMPT,
        tie_rate=0.0,
        log_alpha_sd=0.0,
        prompt_system_sd=sd,
        seed=seed,
    )
    table = bradley_terry(votes, cluster="prompt_id").set_index("system").loc[truth["systems"]]
    true = 1000 + POINTS * population_skill(truth["skill"], sd)
    inside = (table["bt_low"] <= true) & (true <= table["bt_high"])
    return inside.sum(), flagged(table["bt_design_effect"].mean(), N_PROMPTS)


@pytest.mark.validation
def test_bradley_terry_prompt_clustered_intervals_cover_and_the_clustering_is_said():
    runs = [replicate(SD, seed) for seed in range(REPLICATES)]
    n = REPLICATES * N_SYSTEMS
    low, high = binom.interval(0.997, n, 0.95)  # 3-sigma band of the Monte-Carlo coverage
    assert low <= sum(inside for inside, _ in runs) <= high
    assert np.mean([fired for _, fired in runs]) >= 0.8
    # independent votes: the design effect stays below the threshold (3% of 30 studies fired in simulation)
    assert np.mean([replicate(0.0, seed)[1] for seed in range(REPLICATES)]) <= 0.1


def test_flag_threshold_grows_with_the_noise_of_few_prompts():
    assert not flagged(DESIGN_EFFECT_WARN, 1000) and flagged(DESIGN_EFFECT_WARN + 0.01, 1000)
    assert not flagged(1.2, 25) and flagged(1.21, 25)  # 1 + 1 / sqrt(25)


@pytest.mark.validation
def test_irt_votes_prompt_clustered_skills_widen_as_bradley_terry_s():
    votes, _ = simulate_arena(
        6, 60, 60 * VOTES_PER_PROMPT, tie_rate=0.0, log_alpha_sd=0.0, prompt_system_sd=0.5, seed=5
    )
    rd = arena_input(votes)
    plain = fit_ranking(rd, RankSettings(sampler=LAPLACE, draws=2000))
    said = [w for w in plain.diagnostics.warnings if "votes on the same prompt are dependent" in w]
    assert said and said[0].endswith(CLUSTER_ADVICE)
    # what RankSettings(cluster_prompts=True) does after the same fit (one fit keeps the test short)
    idata, notes = plain.idata.copy(), []
    cluster_by_prompt(idata, observations(rd), True, notes)
    clustered = idata.posterior["skill"].stack(s=("chain", "draw")).transpose("s", "system").to_numpy()
    assert notes[-1].endswith(CLUSTERED_NOTE)
    ratio = (clustered.var(0) / plain.skill_draws().var(0)).mean()
    bt = bradley_terry(votes, cluster="prompt_id")["bt_design_effect"].mean()
    assert ratio > DESIGN_EFFECT_WARN and abs(ratio - bt) <= 0.15 * bt  # one estimand, two models
    np.testing.assert_allclose(clustered.mean(0), plain.skill_draws().mean(0), atol=1e-9)


def test_clustered_intervals_are_for_paired_judgments():
    with pytest.raises(SettingsError, match="paired judgments"):
        RankSettings(likelihood="ratings", cluster_prompts=True).validate()
