"""Adding a sampler is one registry entry (issue 10): a throw-away sampler works end to end."""

from __future__ import annotations

import json

import arviz as az
import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from lib.cli import main
from lib.errors import SettingsError
from lib.irt.fit import fit_grm
from lib.irt.settings import LOG_ALPHA_PRIOR_SD, SAMPLERS, THETA_PRIOR_SD, FitSettings, Sampler
from lib.irt.simulate import prior_thresholds, simulate_grm
from lib.paths import DATA_DIR, ROOT

APP = str(ROOT / "app.py")
LAMP = DATA_DIR / "lamp_rankings/rankings_long.csv"


def prior_draws(rm, settings, tracker) -> az.InferenceData:
    """A sampler that ignores the data: draws from the GRM's priors."""
    tracker.stage(0.5, "drawing from the prior")
    rng = np.random.default_rng(settings.seed)
    (n_comp, n_prompt), k = rm.shape, len(rm.categories)
    size = (settings.chains, settings.draws)
    b = prior_thresholds(rng, np.prod(size) * n_prompt, k, settings.cutpoints)
    return az.from_dict(
        posterior={"theta": rng.normal(0.0, THETA_PRIOR_SD, (*size, n_comp)),
                   "alpha": np.exp(rng.normal(0.0, LOG_ALPHA_PRIOR_SD, (*size, n_prompt))),
                   "b": b.reshape(*size, n_prompt, k - 1)},
        coords={"comparison": rm.comparisons["comparison"].astype(str).to_numpy(),
                "prompt": rm.prompt_ids.astype(str), "threshold": np.arange(1, k)},
        dims={"theta": ["comparison"], "alpha": ["prompt"], "b": ["prompt", "threshold"]},
    )


@pytest.fixture
def prior_sampler(monkeypatch, tmp_path):
    """Register the throw-away sampler ``prior`` for one test; the registry is restored after."""
    monkeypatch.setenv("EVAL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setitem(SAMPLERS, "prior", Sampler("prior", "draws from the prior (a test)", True,
                                                   f"{__name__}:prior_draws"))
    return "prior"


def test_a_registered_sampler_runs_through_fit_grm(prior_sampler, codes_to_matrix):
    rm = codes_to_matrix(simulate_grm(6, 20, seed=1).codes)
    fit = fit_grm(rm, FitSettings(sampler=prior_sampler, chains=2, draws=100), use_cache=False)
    d = fit.diagnostics
    assert (d.sampler, d.chains, d.draws) == ("prior", 2, 100)
    # Prior draws are not informed by the data: every parameter's contraction is about 0 (its
    # Monte Carlo SD is sqrt(2 / 200) = 0.1), far below 0.5.
    assert d.n_prior_dominated == 6 + 20 + 20 * 6


def test_a_registered_sampler_runs_through_the_command_line(prior_sampler, tmp_path):
    out = tmp_path / "out"
    code = main(["fit", "--input", str(LAMP), "--format", "ranking", "--columns",
                 "prompt=item,system=condition,trial=instruction_id", "--sampler", prior_sampler,
                 "--chains", "2", "--draws", "50", "--out", str(out)])
    assert code == 0
    diagnostics = json.loads((out / "diagnostics.json").read_text())
    assert diagnostics["sampler"] == "prior" and diagnostics["draws"] == 50


def test_a_registered_sampler_is_offered_on_the_abilities_page(prior_sampler):
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.switch_page("pages/abilities.py").run()
    box = at.selectbox(key="abil_sampler")
    assert list(box.options) == list(SAMPLERS) and "prior" in box.options
    assert "draws from the prior" in box.help


def test_an_unregistered_sampler_is_a_settings_error():
    with pytest.raises(SettingsError, match="unknown sampler 'prior'; choose one of numpyro, pymc, nutpie, map"):
        FitSettings(sampler="prior").validate()
