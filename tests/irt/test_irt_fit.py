"""Fitting: posterior recovery on the paper's design, agreement with mirt, diagnostics, cache."""

import json
import os
import subprocess
import sys

import arviz as az
import numpy as np
import pandas as pd
import pytest
import xarray as xr

from lib.cli import main
from lib.errors import DesignError, FormatError
from lib.inference.settings import TARGET_CHUNK, TARGET_ESS
from lib.io.paths import DATA_DIR, ROOT
from lib.irt.contraction import UNINFORMED_BELOW, threshold_prior_variance
from lib.irt.fit import diagnose, fit_grm, load_cached, load_latest
from lib.irt.settings import FitSettings, fit_settings
from lib.irt.simulate import simulate_grm
from lib.irt.summary import ability_table, prompt_table
from lib.judgments.datasets import DATASETS
from lib.judgments.ratings import RatingMatrix

DATA = DATA_DIR / "irt_reference"


@pytest.fixture(autouse=True)
def cache(monkeypatch, tmp_path):
    monkeypatch.setenv("EVAL_CACHE_DIR", str(tmp_path))
    return tmp_path


def matrix(codes: np.ndarray) -> RatingMatrix:
    n_comp, n_prompt = codes.shape
    ids = np.array([f"p{j}" for j in range(n_prompt)])
    return RatingMatrix(
        u=codes.astype(float) - 3,
        comparisons=pd.DataFrame({"comparison": [f"c{i}" for i in range(n_comp)], "system_a": "a", "system_b": "b"}),
        prompt_ids=ids,
        categories=np.arange(-3, 4),
        groups=pd.DataFrame({"prompt_id": ids, "group": ids}),
        n_votes=np.ones_like(codes),
    )


@pytest.mark.validation
def test_posterior_recovers_theta_with_calibrated_90_percent_intervals():
    sim = simulate_grm(20, 200, seed=11)  # the paper's design: 20 comparisons x 200 prompts x 3 votes
    fit = fit_grm(matrix(sim.codes), fit_settings(), use_cache=False)  # the command's and the page's defaults
    post = fit.idata.posterior
    theta = post["theta"].stack(s=("chain", "draw")).to_numpy()  # (I, S)
    alpha = post["alpha"].stack(s=("chain", "draw")).to_numpy()  # (J, S)
    assert np.corrcoef(theta.mean(axis=1), sim.theta)[0, 1] > 0.95
    # 90% central intervals of all 220 theta and alpha values: with parameters drawn from the
    # prior, the coverage is 0.9 on average; +-3 binomial SDs for n = 220 is +-0.061.
    draws = np.concatenate([theta, alpha])
    truth = np.concatenate([sim.theta, sim.alpha])
    lo, hi = np.quantile(draws, [0.05, 0.95], axis=1)
    coverage = ((truth >= lo) & (truth <= hi)).mean()
    assert 0.9 - 0.061 <= coverage <= 0.9 + 0.061
    assert fit.diagnostics.converged and fit.diagnostics.stopped == "target"
    # 200 prompts per comparison: the data pin every theta down.
    assert (ability_table(fit, matrix(sim.codes))["contraction"] > 0.9).all()


def test_a_well_informed_design_flags_no_theta_or_alpha():
    rm = matrix(simulate_grm(60, 30, seed=8).codes)
    fit = fit_grm(rm, FitSettings(chains=2, draws=200, tune=200, seed=2), use_cache=False)
    assert (ability_table(fit, rm)["contraction"] >= UNINFORMED_BELOW).all()
    assert (prompt_table(fit, rm)["alpha_contraction"] >= UNINFORMED_BELOW).all()
    # Extreme thresholds are rarely crossed by 60 comparisons and may stay prior-dominated.
    assert all(p.startswith("b[") for p in fit.diagnostics.prior_dominated)


def test_three_comparisons_leave_alpha_prior_dominated_and_progress_moves_through_stages():
    sim = simulate_grm(3, 20, seed=3)
    seen = []
    fit = fit_grm(
        matrix(sim.codes),
        FitSettings(chains=2, draws=300, tune=200, seed=4),
        use_cache=False,
        progress=lambda f, m: seen.append((f, m)),
    )
    table = prompt_table(fit, matrix(sim.codes))
    # With 3 observations per prompt, alpha's posterior is mostly its prior (the LAMP symptom:
    # alpha 1.43, HDI 0.4-2.7 for every prompt): measured contractions 0 to 0.4; allow a prompt
    # past the cut-off by Monte Carlo error of the variance (relative SE sqrt(2 / ESS), ~0.06).
    assert (table["alpha_contraction"] < UNINFORMED_BELOW).mean() >= 0.9
    assert fit.diagnostics.n_prior_dominated == len(fit.diagnostics.prior_dominated) > 0
    assert any("prior outweighs" in w and "alpha" in w for w in fit.diagnostics.warnings)
    fractions = [f for f, _ in seen]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0
    stages = [m.split(":")[0].split(" · ")[0] for _, m in seen]
    order = [s for i, s in enumerate(stages) if i == 0 or s != stages[i - 1]]
    assert [s for s in order if s in ("compiling", "warm-up", "sampling")][:3] == ["compiling", "warm-up", "sampling"]
    assert len({round(f, 2) for f, m in seen if m.startswith(("warm-up", "sampling"))}) >= 10


def test_threshold_prior_variances_are_those_of_ordered_normal_draws():
    v = threshold_prior_variance("free", 3)  # two sorted N(0, 2): var = 4 (1 - 1/pi) each
    np.testing.assert_allclose(v, 4 * (1 - 1 / np.pi), rtol=0.01)
    anti = threshold_prior_variance("antisymmetric", 3)  # one |N(0, 2)|: var = 4 (1 - 2/pi)
    np.testing.assert_allclose(anti, 4 * (1 - 2 / np.pi), rtol=0.01)


def test_map_leaves_probability_and_contraction_empty():
    rm = matrix(simulate_grm(5, 30, seed=5).codes)
    fit = fit_grm(rm, FitSettings(sampler="map"), use_cache=False)
    table = ability_table(fit, rm)
    assert table[["theta_sd", "p_b_better", "contraction"]].isna().all().all()
    assert prompt_table(fit, rm)[["alpha_contraction", "b_contraction"]].isna().all().all()
    assert any("contraction" in w for w in fit.diagnostics.warnings)


def test_degenerate_designs_raise_before_the_cache():
    codes = np.full((3, 4), 3)  # every judgment a tie (u = 0)
    with pytest.raises(DesignError, match="tie"):
        fit_grm(matrix(codes), FitSettings(sampler="map"))


def test_a_nul_byte_in_a_prompt_id_is_a_format_error_naming_it():
    rm = matrix(simulate_grm(3, 4, seed=1).codes)
    rm.prompt_ids = np.array(["p0", "p\x001", "p2", "p3"])
    with pytest.raises(FormatError, match=r"p\\x001"):
        fit_grm(rm, FitSettings(sampler="map"))


@pytest.mark.validation
def test_the_fit_command_at_its_defaults_reproduces_mirt_on_science(tmp_path, capsys):
    """The issue's command, no sizes given: the default sampler, warm-up and target ESS (issue 29 item 1:
    warmed up from the MAP point, chains stuck with alpha 5.4 / 5.4 / 176 / 4.8 and R-hat 3e7)."""
    ref = json.loads((DATA / "reference_estimates.json").read_text())["Science_GRM_mirt"]
    ds, out = DATASETS["science_mirt"], tmp_path / "out"
    columns = ",".join(f"{role}={name}" for role, name in ds.columns.items())
    code = main(["fit", "--input", str(ds.path), "--format", ds.fmt, "--columns", columns, "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    diag = json.loads((out / "diagnostics.json").read_text())
    defaults = fit_settings()  # what the command and the Abilities page take when nothing is chosen
    assert (diag["sampler"], diag["chains"], diag["target_ess"]) == (defaults.sampler, defaults.chains, TARGET_ESS)
    assert diag["converged"] and diag["stopped"] == "target" and diag["divergences"] == 0
    # warm-up and draws run in whole chunks (the chunk that ends the warm-up keeps its draws past it)
    assert diag["draws"] <= defaults.draws and (defaults.tune + diag["draws"]) % TARGET_CHUNK == 0
    assert {"compile", "warm-up", "sampling"} <= set(diag["timings"]) and "optimise" not in diag["timings"]
    said = capsys.readouterr().out
    assert f"sampled to the target ESS {TARGET_ESS}: {diag['draws']} draws per chain, target reached" in said
    table = pd.read_csv(out / "prompts.csv").set_index("prompt_id")
    b = az.from_netcdf(out / "posterior.nc").posterior["b"].mean(("chain", "draw"))
    for item in ("Comfort", "Work", "Future", "Benefit"):
        a, se = ref[item]["a1"], ref[item]["SE_Louis"]["a1"]
        assert a - 1.96 * se <= table.loc[item, "alpha_mean"] <= a + 1.96 * se, item
        # mirt's intercepts d_k = -a b_k, in decreasing order; ours are thresholds b_k.
        d, d_se = np.asarray(ref[item]["d"]), np.asarray(ref[item]["SE_Louis"]["d"])
        ours = -table.loc[item, "alpha_mean"] * b.sel(prompt=item).to_numpy()
        assert (np.abs(ours - d) <= 3 * d_se).all(), (item, ours, d)


def test_diagnostics_flag_chains_that_disagree():
    rng = np.random.default_rng(0)
    theta = rng.normal(size=(2, 200, 3))
    theta[1] += 3.0  # second chain elsewhere
    post = xr.Dataset(
        {
            "theta": (("chain", "draw", "comparison"), theta),
            "alpha": (("chain", "draw", "prompt"), np.exp(rng.normal(size=(2, 200, 4)))),
            "b": (("chain", "draw", "prompt", "threshold"), rng.normal(size=(2, 200, 4, 2))),
        }
    )
    stats = xr.Dataset({"diverging": (("chain", "draw"), np.zeros((2, 200), bool))})
    d = diagnose(az.InferenceData(posterior=post, sample_stats=stats), FitSettings(chains=2), 1.0)
    assert d.rhat_max > 1.5
    assert any("R-hat" in w for w in d.warnings)
    assert d.divergences == 0


def test_fits_are_cached_on_disk_by_data_and_settings(cache):
    rm = matrix(simulate_grm(5, 30, seed=5).codes)
    settings = FitSettings(sampler="map")
    first = fit_grm(rm, settings, remember=True)
    assert (cache / "fits" / f"{first.cache_key}.nc").exists()
    messages = []
    again = fit_grm(rm, settings, progress=lambda f, m: messages.append(m))
    assert messages == ["loaded from cache"]
    np.testing.assert_allclose(again.idata.posterior["theta"], first.idata.posterior["theta"])
    assert load_cached(rm, FitSettings(sampler="map", seed=1)) is None
    assert load_latest(rm).cache_key == first.cache_key  # reopening the app shows the last fit
    table = ability_table(again, rm)
    assert list(table.columns) == [
        "comparison",
        "system_a",
        "system_b",
        "theta_mean",
        "theta_sd",
        "hdi_low",
        "hdi_high",
        "p_b_better",
        "contraction",
    ]


def test_importing_the_fit_module_leaves_xla_flags_alone():
    # XLA_FLAGS is left alone: JAX's CPU devices are set by JAX_NUM_CPU_DEVICES (lib.engine.devices).
    code = "import os, lib.irt.fit; print(os.environ.get('XLA_FLAGS', '<unset>'))"
    for before in ({}, {"XLA_FLAGS": "--xla_cpu_enable_fast_math=false"}):
        env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"} | before
        out = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True, cwd=ROOT
        ).stdout
        assert out.strip() == before.get("XLA_FLAGS", "<unset>")
