"""The study planner's statistics against closed forms and the anchors' qualitative results."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from scipy.special import expit
from statsmodels.stats.power import TTestPower

from lib.errors import SettingsError
from lib.planning import power as power_module
from lib.planning.choice import cheapest
from lib.planning.design import Assumptions, Design, assumptions_from_pilot
from lib.planning.power import COLUMNS, PLAN_COLUMNS, plan
from lib.planning.simulate import simulate_study


@pytest.fixture(autouse=True)
def _own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("EVAL_CACHE_DIR", str(tmp_path / "cache"))


def assert_within_two_se(simulated: float, exact: float, replicates: int) -> None:
    se = np.sqrt(exact * (1 - exact) / replicates)
    assert abs(simulated - exact) <= 2 * se, (simulated, exact, se)


@pytest.mark.validation
def test_sign_test_power_matches_the_exact_binomial_power():
    """One comparison, alpha fixed at 1, no ties: every vote is B's win with p = logistic(theta)."""
    effect, prompts, replicates = 0.4, 40, 400
    a = Assumptions(n_systems=2, effect=effect, log_alpha_sd=0.0, tie_rate=0.0)
    df = plan(a, [Design(prompts, 1, "random", "sign_test")], replicates=replicates, seed=3)
    k = np.arange(prompts + 1)
    p_two_sided = np.minimum(1.0, 2 * np.minimum(stats.binom.cdf(k, prompts, 0.5), stats.binom.sf(k - 1, prompts, 0.5)))
    exact = stats.binom.pmf(k, prompts, expit(effect))[p_two_sided < 0.05].sum()
    assert_within_two_se(df["power"].iloc[0], exact, replicates)
    assert df["power_mc_se"].iloc[0] == pytest.approx(
        np.sqrt(df["power"].iloc[0] * (1 - df["power"].iloc[0]) / replicates)
    )


@pytest.mark.validation
def test_t_test_power_matches_statsmodels_on_normal_data():
    effect, prompts, replicates = 0.4, 30, 400
    a = Assumptions(n_systems=2, effect=effect, response="normal")
    df = plan(a, [Design(prompts, 1, "random", "t_test")], replicates=replicates, seed=5)
    exact = TTestPower().power(effect_size=effect, nobs=prompts, alpha=0.05, alternative="two-sided")
    assert_within_two_se(df["power"].iloc[0], exact, replicates)


@pytest.mark.validation
def test_the_bank_grm_keeps_its_false_detection_rate_at_five_percent():
    """No true difference: the GRM interval excludes 0 in about 5% of studies (so its power is real)."""
    replicates = 300
    df = plan(
        Assumptions(n_systems=2, effect=0.0), [Design(30, 3, "random", "grm_bank")], replicates=replicates, seed=7
    )
    assert_within_two_se(df["power"].iloc[0], 0.05, replicates)


@pytest.mark.validation
def test_the_ordinal_irt_analysis_beats_the_t_test_on_likert_means_for_a_small_effect():
    """Howcroft & Rieser (2021): ordinal models detect small differences that t-tests on means miss
    (prompts differ in discrimination: log alpha ~ N(0, 0.8); HANNA's MAP alphas span 0.7 to 6)."""
    replicates = 400
    designs = [Design(30, 3, "random", name) for name in ("grm_bank", "t_test")]
    a = Assumptions(n_systems=2, effect=0.2, log_alpha_sd=0.8)
    df = plan(a, designs, replicates=replicates, seed=11).set_index("analysis")
    gap = df.loc["grm_bank", "power"] - df.loc["t_test", "power"]
    assert gap > 2 * np.hypot(df.loc["grm_bank", "power_mc_se"], df.loc["t_test", "power_mc_se"]), df


@pytest.mark.validation
def test_irt_informed_prompts_need_fewer_prompts_than_random_ones_on_a_hanna_pilot():
    from lib.inputs import bundled_input

    data = bundled_input("hanna_means", "Relevance", merge_redundant=False)
    a = assumptions_from_pilot(data, effect=0.5)  # power is the weakest of the 13 pairs 0.57 to 2.31 apart
    designs = [Design(p, 1, s, "grm_bank") for p in (16, 32) for s in ("random", "top_alpha")]
    best = cheapest(plan(a, designs, replicates=8, seed=0), 0.8).set_index("strategy")
    assert best.loc["top_alpha", "reached"] and best.loc["random", "reached"], best
    assert best.loc["top_alpha", "prompts"] < best.loc["random", "prompts"]
    assert best.loc["top_alpha", "saving"] > 0


def test_a_plan_has_the_documented_columns_and_costs():
    a = Assumptions(n_systems=4, effect=0.5)
    df = plan(a, [Design(5, 2, "top_alpha", "sign_test")], replicates=4, seconds_per_judgment=36.0, cost_per_hour=20.0)
    assert list(df.columns) == PLAN_COLUMNS and PLAN_COLUMNS[: len(COLUMNS)] == COLUMNS
    row = df.iloc[0]
    assert row["judgments"] == 6 * 5 * 2  # 6 system pairs x 5 prompts x 2 annotators
    assert row["hours"] == pytest.approx(60 * 36 / 3600)
    assert row["cost"] == pytest.approx(row["hours"] * 20.0)
    assert -1 <= row["kendall_tau"] <= 1


def test_a_plan_is_reproducible_and_cached(monkeypatch):
    a = Assumptions(n_systems=3, effect=0.5)
    designs = [Design(6, 1, "random", "t_test"), Design(6, 1, "random", "sign_test")]
    first = plan(a, designs, replicates=5, seed=2)

    def fail(*args, **kwargs):
        raise AssertionError("simulated again instead of reading the cache")

    monkeypatch.setattr(power_module, "_replicate", fail)
    again = plan(a, designs, replicates=5, seed=2)
    assert again.equals(first)
    assert list(again["analysis"]) == ["t_test", "sign_test"]


def test_designs_that_differ_only_in_strategy_share_their_truth():
    a = Assumptions(n_systems=3, effect=0.5)
    one, other = (simulate_study(a, Design(5, 1, s, "t_test"), seed=1, replicate=4) for s in ("random", "top_alpha"))
    np.testing.assert_array_equal(one.skills, other.skills)
    assert one.alpha.min() <= other.alpha.min()  # top_alpha takes the most discriminating prompts


def test_cheapest_lists_strategies_that_miss_the_target():
    a = Assumptions(n_systems=2, effect=0.05)
    df = plan(a, [Design(3, 1, s, "sign_test") for s in ("random", "top_alpha")], replicates=4)
    best = cheapest(df, 0.8)
    assert list(best["strategy"]) == ["random", "top_alpha"]
    assert not best["reached"].any() and best["cost"].isna().all()


@pytest.mark.parametrize(
    ("assumptions", "design", "match"),
    [
        (Assumptions(n_systems=1), Design(5, 1), "number of systems compared must be between 2"),
        (Assumptions(tie_rate=1.0), Design(5, 1), "tie rate"),
        (Assumptions(), Design(5, 1, "best", "t_test"), "unknown prompt strategy 'best'"),
        (Assumptions(), Design(5, 1, "random", "anova"), "unknown analysis 'anova'"),
        (Assumptions(bank_size=10), Design(20, 1), "bank holds 10"),
        (Assumptions(response="normal"), Design(5, 1, "random", "grm_map"), "needs ordered judgments"),
    ],
)
def test_bad_settings_are_refused_before_simulating(assumptions, design, match):
    with pytest.raises(SettingsError, match=match):
        plan(assumptions, [design], replicates=4)


def test_best_first_of_two_systems_is_the_probability_that_the_estimated_sign_is_right():
    """Alpha 1, no ties: each vote goes to the better system with p = logistic(effect), and the sign
    test's estimate puts it first when it wins more than half the votes (a draw is a coin flip):
    best_first = P(k > n/2) + P(k = n/2) / 2."""
    effect, prompts, replicates = 0.2, 20, 400
    a = Assumptions(n_systems=2, effect=effect, log_alpha_sd=0.0, tie_rate=0.0)
    row = plan(a, [Design(prompts, 1, "random", "sign_test")], replicates=replicates, seed=3).iloc[0]
    p = expit(effect)
    exact = stats.binom.sf(prompts // 2, prompts, p) + stats.binom.pmf(prompts // 2, prompts, p) / 2
    assert_within_two_se(row["best_first"], exact, replicates)
    assert 0 < row["best_first_mc_se"] <= np.sqrt(exact * (1 - exact) / replicates) * 1.1


def test_best_first_is_certain_for_a_huge_effect_and_undefined_without_a_true_best():
    designs = [Design(10, 1, "random", name) for name in ("grm_bank", "t_test")]
    huge = plan(Assumptions(n_systems=4, effect=3.0), designs, replicates=6, seed=1)
    assert (huge["best_first"] == 1.0).all() and (huge["best_first_mc_se"] == 0).all()
    none = plan(Assumptions(n_systems=3, effect=0.0), designs, replicates=4, seed=1)
    assert none["best_first"].isna().all()  # all systems equal: no system is the true best


@pytest.mark.validation
def test_the_map_grm_is_invalid_at_its_nominal_level_and_its_threshold_holds_five_percent():
    """No true difference, 5 systems (10 comparisons share each prompt, so the prompts have thresholds of
    their own): grm_map's nominal interval excluded 0 in 13% of null comparisons (100 studies), so it is
    invalid there; at its calibrated threshold it detects in 5%. The tolerance is 3 SEs of the difference
    of two independent 5% rates over the 1,000 comparisons: this one and the null quantile's own. (With two
    systems grm_map shares its thresholds as ``fit`` does, and its nominal interval is nearly right:
    ``test_grm_map_analyses_two_systems_with_the_shared_thresholds_fit_uses``.)"""
    replicates = 100
    row = plan(
        Assumptions(n_systems=5, effect=0.0), [Design(30, 1, "random", "grm_map")], replicates=replicates, seed=7
    ).iloc[0]
    se = np.sqrt(0.05 * 0.95 / (replicates * 10))
    assert abs(row["calibrated_power"] - 0.05) <= 3 * np.hypot(se, se), row
    assert row["false_detection"] > 0.05 + 3 * se and not row["valid"]  # the nominal interval is too narrow ...
    assert row["calibration_factor"] > 1  # ... so the threshold is higher
    assert row["critical_z"] == pytest.approx(1.959964 * row["calibration_factor"])


@pytest.mark.validation
def test_the_map_grm_at_its_threshold_is_as_powerful_as_the_t_test_for_a_small_effect():
    """Howcroft & Rieser (2021) with the MAP GRM, whose item parameters are estimated from the study
    (several comparisons share each prompt): at its calibrated threshold it is not less powerful than the
    t-test. It is not a default: its nominal level does not hold, and a user must apply the threshold."""
    from lib.planning.grid import default_analyses

    assert "grm_map" not in default_analyses(Assumptions())
    replicates = 60
    a = Assumptions(n_systems=5, effect=0.3, log_alpha_sd=0.8)
    df = plan(
        a, [Design(30, 3, "random", name) for name in ("grm_map", "t_test")], replicates=replicates, seed=11
    ).set_index("analysis")
    gap = df.loc["grm_map", "calibrated_power"] - df.loc["t_test", "power"]
    assert gap > -2 * np.hypot(df.loc["grm_map", "calibrated_power_mc_se"], df.loc["t_test", "power_mc_se"]), df


def test_only_the_first_replicates_get_a_null_twin(monkeypatch):
    """A large plan does not analyse every study twice: NULL_TWINS replicates place the critical z."""
    monkeypatch.setattr(power_module, "NULL_TWINS", 3)
    twins = []

    def counting(*args, null=False, **kwargs):
        twins.append(null)
        return simulate_study(*args, null=null, **kwargs)

    monkeypatch.setattr(power_module, "simulate_study", counting)
    row = plan(Assumptions(n_systems=3, effect=0.5), [Design(8, 1, "random", "grm_map")], replicates=5, seed=2).iloc[0]
    assert twins.count(True) == 3 and twins.count(False) == 5
    assert np.isfinite(row["critical_z"]) and np.isfinite(row["calibrated_power"])


def test_a_calibrated_power_reports_the_error_of_its_critical_z_too(monkeypatch):
    """Repeated plans (30 seeds, 40 studies, 20 null twins) spread by the reported Monte-Carlo SE.
    The binomial SE alone said 0.072 where the plans spread by 0.119: the critical z, a 95th
    percentile of 20 twins' |z|, moves the power too. The tolerance is 3 SEs of the log of an SD
    estimated from 30 values, sqrt(1 / (2 x 29))."""
    monkeypatch.setattr(power_module, "NULL_TWINS", 20)
    rows = [
        plan(Assumptions(n_systems=2, effect=0.5), [Design(20, 1, "random", "grm_map")], replicates=40, seed=seed).iloc[
            0
        ]
        for seed in range(30)
    ]
    spread = np.std([r["calibrated_power"] for r in rows], ddof=1)
    reported = np.mean([r["calibrated_power_mc_se"] for r in rows])
    assert abs(np.log(reported / spread)) <= 3 * np.sqrt(1 / (2 * 29)), (reported, spread)


def test_grm_map_analyses_two_systems_with_the_shared_thresholds_fit_uses(tmp_path, monkeypatch):
    """Issue 16 item 11: with two systems ``fit`` shares one set of thresholds (a prompt's own cannot be
    learned from one comparison), but the planner's grm_map fitted per-prompt thresholds, an analysis
    nobody runs: its nominal interval excluded 0 in 49% of null comparisons (critical z 4.77, 40 prompts x
    1 annotator, 150 studies). Now 10.7% and 2.38 at 150 studies."""
    monkeypatch.setenv("EVAL_CACHE_DIR", str(tmp_path))
    row = plan(Assumptions(n_systems=2, effect=0.3), [Design(40, 1, "random", "grm_map")], replicates=60, seed=0).iloc[
        0
    ]
    assert row["critical_z"] < 3.0 and row["false_detection"] < 0.25, row
