"""Votes clustered by prompt (issue 16, item 12; issue 30, item 1): with a prompt x system effect the
intervals that treat votes as independent are too narrow. At the leaderboard's defaults
(:class:`lib.ranking.fit.RankSettings`, as ``rank`` and the page run them) the intervals are prompt-clustered,
they cover both with dependent and with independent votes, and the dependence warning fires where the votes
are dependent and rarely where they are not; with too few prompts the design effect is withheld, with a statement.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binom, chi2

from lib.errors import SettingsError
from lib.ranking.baseline import bradley_terry
from lib.ranking.clusters import (
    CLUSTERED_NOTE,
    CREDIBLE_Z,
    DESIGN_EFFECT_WARN,
    MIN_PROMPTS,
    cluster_by_prompt,
    dependent,
)
from lib.ranking.fit import RankSettings, fit_ranking
from lib.ranking.model import observations
from lib.ranking.simulate import simulate_arena
from tests.ranking.conftest import arena_input

SD, VOTES_PER_PROMPT, N_SYSTEMS, N_PROMPTS, REPLICATES = 0.3, 50, 10, 200, 15
POINTS = 400 / np.log(10)
"""Rating points per logit (the arena scale of :func:`bradley_terry`)."""
DESIGN = {"n_systems": 6, "n_prompts": 24, "per_prompt": 50}
"""The simulated studies fitted at the defaults: small enough for seconds a fit, prompts enough to cluster."""
SETS = 10
"""Studies per condition (the issue's bar: the warning fires on at most 2 of 10 with independent votes)."""
DEPENDENT = "votes on the same prompt are dependent"


def population_skill(skill: np.ndarray, sd: float) -> np.ndarray:
    """What a model without the prompt x system effect estimates when each prompt shifts each skill by
    N(0, sd): the population-averaged skills, attenuated by ``(1 + c^2 2 sd^2)^-1/2``, ``c = 16 sqrt(3) /
    (15 pi)`` (Zeger, Liang & Albert 1988, Biometrics 44(4), eq. 2.4: a logistic-normal integral)."""
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
    return ((table["bt_low"] <= true) & (true <= table["bt_high"])).sum()


def test_bradley_terry_prompt_clustered_intervals_cover():
    n = REPLICATES * N_SYSTEMS
    low, high = binom.interval(0.997, n, 0.95)  # 3-sigma band of the Monte-Carlo coverage
    assert low <= sum(replicate(SD, seed) for seed in range(REPLICATES)) <= high


def study(sd: float, seed: int, n_prompts: int = DESIGN["n_prompts"], settings: RankSettings | None = None):
    """A simulated study fitted at ``settings`` (default: the leaderboard's defaults): (fit, truth, data)."""
    votes, truth = simulate_arena(
        DESIGN["n_systems"], n_prompts, n_prompts * DESIGN["per_prompt"], prompt_system_sd=sd, seed=seed
    )
    rd = arena_input(votes)
    return fit_ranking(rd, settings or RankSettings(), use_cache=False), truth, rd


@pytest.fixture(scope="module")
def studies():
    """Per condition (a prompt x system effect of SD 0.3, or independent votes) and study: the true
    skills inside the 95% intervals, the squared z of each, and the fit's warnings."""
    out = {}
    for name, sd in (("dependent", SD), ("independent", 0.0)):
        out[name] = []
        for seed in range(SETS):
            fit, truth, rd = study(sd, 100 + seed)
            skill = fit.skill_draws()[:, [rd.systems.index(s) for s in truth["systems"]]]
            low, high = np.quantile(skill, [0.025, 0.975], axis=0)
            inside = (low <= truth["skill"]) & (truth["skill"] <= high)
            z2 = ((skill.mean(0) - truth["skill"]) / skill.std(0)) ** 2
            out[name].append((inside, z2, fit.diagnostics.warnings, dict(fit.idata["posterior"].attrs)))
    return out


def calibration(runs) -> tuple[int, int, float]:
    """(true skills covered, intervals, mean squared z) over the studies."""
    inside = np.concatenate([r[0] for r in runs])
    return int(inside.sum()), len(inside), float(np.concatenate([r[1] for r in runs]).mean())


def test_default_intervals_cover_when_votes_on_a_prompt_lean_the_same_way(studies):
    # the model's own intervals (the old default) covered 85% of 320 true skills in the design,
    # RMS z 1.36; bench/bench_prompt_clusters.py prints both
    covered, n, z2 = calibration(studies["dependent"])
    assert all(r[3]["prompt_clustered"] == 1 for r in studies["dependent"])  # the default clusters
    assert covered >= binom.ppf(0.003, n, 0.93)  # the target, 3-sigma below
    # E[z^2] = 1 when calibrated about the true skills: the attenuation a model without the effect has
    # (population_skill, 3%) adds a little
    assert z2 <= chi2.ppf(0.997, n) / n


def test_default_intervals_cover_nominally_with_independent_votes(studies):
    covered, n, z2 = calibration(studies["independent"])
    assert binom.ppf(0.003, n, 0.95) <= covered <= binom.ppf(0.997, n, 0.95)
    assert chi2.ppf(0.003, n) / n <= z2 <= chi2.ppf(0.997, n) / n


def test_dependence_warning_fires_where_votes_share_a_prompt_effect_and_rarely_where_they_do_not(studies):
    fired = {name: sum(any(DEPENDENT in w for w in r[2]) for r in runs) for name, runs in studies.items()}
    # with independent votes: a one-sided 5% test, so P(3 or more of 10) = 1.2% (the old rule fired on 19 of 20)
    assert fired["independent"] <= 2
    assert fired["dependent"] >= 6  # 33 of 40 in the bench's design; more votes a prompt, more power
    said = next(w for r in studies["dependent"] for w in r[2] if DEPENDENT in w)
    assert "±" in said and said.endswith(CLUSTERED_NOTE)  # the figure with its SE; the intervals already clustered


def test_the_design_effect_is_unbiased_with_independent_votes(studies):
    # mean over the studies within 3 standard errors of 1 (the clipped estimate it replaces averaged 1.4)
    de = np.array([r[3]["design_effect"] for r in studies["independent"]])
    se = np.array([r[3]["design_effect_se"] for r in studies["independent"]])
    assert abs(de.mean() - 1) <= 3 * np.sqrt((se**2).mean() / len(de))
    dep = np.array([r[3]["design_effect"] for r in studies["dependent"]])
    assert np.median(dep) > np.median(de) + 0.1


def test_dependent_needs_the_excess_beyond_its_noise_and_beyond_the_floor():
    assert dependent(1.3, 0.1) and not dependent(1.3, 0.2)  # 1.3 - CREDIBLE_Z * 0.2 < 1
    assert not dependent(1 + CREDIBLE_Z * 0.2, 0.2) and dependent(1.01 + CREDIBLE_Z * 0.2, 0.2)
    assert not dependent(DESIGN_EFFECT_WARN, 0.0) and dependent(DESIGN_EFFECT_WARN + 0.01, 0.0)
    assert not dependent(float("nan"), 0.1)


def test_few_prompts_withhold_the_design_effect_and_say_why():
    # issue 29, item 3: a 20-page pilot read "37572.18 times what independent votes give"
    fit, _, rd = study(SD, 7, n_prompts=MIN_PROMPTS // 2)
    said = " ".join(fit.diagnostics.warnings)
    assert f"cannot be told from {MIN_PROMPTS // 2} prompts" in said and f"at least {MIN_PROMPTS}" in said
    assert DEPENDENT not in said and np.isnan(fit.idata["posterior"].attrs["design_effect"])
    assert fit.idata["posterior"].attrs["prompt_clustered"] == 0  # the default does not cluster from so few
    # asked for ("on"), the same draws are clustered and the fit says the sandwich rests on few prompts
    idata, notes = fit.idata.copy(), []
    cluster_by_prompt(idata, observations(rd), "on", notes)
    assert idata["posterior"].attrs["prompt_clustered"] == 1 and "fewer than" in notes[0]
    assert not np.allclose(idata["posterior"]["skill"].std(("chain", "draw")), fit.idata["posterior"]["skill"].std())
    # "off" leaves the model's draws
    idata, notes = fit.idata.copy(), []
    cluster_by_prompt(idata, observations(rd), "off", notes)
    np.testing.assert_array_equal(idata["posterior"]["skill"], fit.idata["posterior"]["skill"])


def test_one_vote_a_prompt_has_nothing_to_cluster():
    votes, _ = simulate_arena(4, 200, 200, seed=3)
    votes["prompt_id"] = [f"q{v}" for v in range(len(votes))]  # every vote its own prompt
    fit = fit_ranking(arena_input(votes), RankSettings(), use_cache=False)
    assert fit.idata["posterior"].attrs["prompt_clustered"] == 0
    assert not [w for w in fit.diagnostics.warnings if "on the same prompt" in w]


def test_clustered_intervals_are_for_paired_judgments():
    with pytest.raises(SettingsError, match="paired judgments"):
        RankSettings(likelihood="ratings", cluster_prompts="on").validate()
    RankSettings(likelihood="ratings").validate()  # the default (auto) leaves ratings alone
    with pytest.raises(SettingsError, match="unknown prompt clustering 'yes'"):
        RankSettings(cluster_prompts="yes").validate()
