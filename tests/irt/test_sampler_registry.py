"""Adding a sampler is one registry entry (issues 10, 18): a throw-away sampler works end to end, in the GRM's
fit and in the leaderboard's."""

from __future__ import annotations

import json

import arviz as az
import pytest
from streamlit.testing.v1 import AppTest

from lib.cli import EXIT_NOT_CONVERGED, main
from lib.errors import SettingsError
from lib.inference.settings import SAMPLERS, Sampler
from lib.io.paths import DATA_DIR, ROOT
from lib.irt.fit import fit_grm
from lib.irt.settings import FitSettings
from lib.irt.simulate import simulate_grm
from lib.ranking.fit import RankSettings, fit_ranking
from lib.ranking.simulate import simulate_arena

APP = str(ROOT / "app.py")
LAMP = DATA_DIR / "lamp_rankings/rankings_long.csv"
LAMP_ARGS = [
    "--input",
    str(LAMP),
    "--format",
    "ranking",
    "--columns",
    "prompt=item,system=condition,trial=instruction_id",
]
SIZES = ["--chains", "2", "--draws", "50", "--tune", "50"]


def metropolis(problem, settings, tracker) -> az.InferenceData:
    """A sampler no fit knows of: PyMC's Metropolis on any model (the GRM's, the ranking's)."""
    import pymc as pm

    from lib.inference.samplers import pm_sample

    model, names = problem.model(tracker)
    with model:
        step = pm.Metropolis()
    return pm_sample(model, names, "pymc", settings, step=step, cores=1)


def independent(problem, settings, tracker) -> az.InferenceData:
    """A sampler no fit knows of that compiles nothing: independent draws of the kept variables in the model's own
    ranges (:func:`tests.ranking.conftest.stand_in_draws`). Where a test is about where a registered sampler reaches
    (a command, a fit's read-outs), what it draws does not matter; Metropolis compiled the model's log density for
    each, 5-30 s a test on a loaded 2-core machine (kept for the GRM's fit: a runner that passes its own step)."""
    from tests.ranking.conftest import as_idata, stand_in_draws

    model, names = problem.model(tracker)
    return as_idata(model, stand_in_draws(model, names, settings.chains, settings.draws, settings.seed))


def register(monkeypatch, tmp_path, run: str) -> str:
    """Register the throw-away sampler ``throwaway`` (runner ``run`` of this module) for every fit, for one test; the
    registry is restored after."""
    monkeypatch.setenv("EVAL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setitem(SAMPLERS, "throwaway", Sampler("throwaway", "a test sampler", True, f"{__name__}:{run}"))
    return "throwaway"


@pytest.fixture
def throwaway(monkeypatch, tmp_path):
    """``throwaway``: :func:`independent` draws."""
    return register(monkeypatch, tmp_path, "independent")


def test_a_registered_sampler_runs_through_fit_grm(monkeypatch, tmp_path, codes_to_matrix):
    sampler = register(monkeypatch, tmp_path, "metropolis")  # a real sampler, its own step method through pm_sample
    rm = codes_to_matrix(simulate_grm(6, 20, seed=1).codes)
    fit = fit_grm(rm, FitSettings(sampler=sampler, chains=2, draws=100, tune=50), use_cache=False)
    d = fit.diagnostics
    assert (d.sampler, d.chains, d.draws) == (sampler, 2, 100)


def test_a_registered_sampler_runs_through_the_command_line(throwaway, tmp_path):
    out = tmp_path / "out"
    code = main(["fit", *LAMP_ARGS, "--sampler", throwaway, *SIZES, "--out", str(out)])
    diagnostics = json.loads((out / "diagnostics.json").read_text())
    assert code == (0 if diagnostics["converged"] else EXIT_NOT_CONVERGED)  # the exit follows the check, either way
    assert diagnostics["sampler"] == throwaway and diagnostics["draws"] == 50


def test_a_registered_sampler_runs_through_fit_ranking(throwaway):
    from tests.ranking.conftest import arena_input

    rd = arena_input(simulate_arena(4, 10, 100, seed=1)[0])
    fit = fit_ranking(rd, RankSettings(sampler=throwaway, chains=2, draws=50, tune=50), use_cache=False)
    d = fit.diagnostics
    assert (d.sampler, d.chains, d.draws) == (throwaway, 2, 50)
    assert fit.skill_draws().shape == (100, 4)


def test_a_registered_sampler_runs_through_rank(throwaway, tmp_path):
    out = tmp_path / "out"
    code = main(["rank", *LAMP_ARGS, "--sampler", throwaway, *SIZES, "--out", str(out)])
    diagnostics = json.loads((out / "diagnostics.json").read_text())
    assert code == (0 if diagnostics["converged"] else EXIT_NOT_CONVERGED)
    assert diagnostics["sampler"] == throwaway and diagnostics["draws"] == 50


def test_a_registered_sampler_is_offered_on_the_abilities_page(throwaway):
    from lib.irt.settings import SAMPLERS as GRM_SAMPLERS

    at = AppTest.from_file(APP, default_timeout=120).run()
    at.switch_page("pages/abilities.py").run()
    box = at.selectbox(key="abil_sampler")
    assert list(box.options) == list(GRM_SAMPLERS) and throwaway in box.options
    assert "a test sampler" in box.help


def test_a_registered_sampler_is_offered_on_the_leaderboard_page(throwaway):
    """Chosen (as a user's earlier choice in the session), it is the page's sampler and waits for the button, as
    every sampler but the default MAP + Laplace does: the page fits nothing (HANNA's Laplace fit compiled its
    model for 10-25 s)."""
    from lib.ranking.fit import SAMPLERS as RANKING_SAMPLERS

    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["lb_sampler"] = throwaway
    at.run().switch_page("pages/leaderboard.py").run()
    box = at.selectbox(key="lb_sampler")
    assert list(box.options) == list(RANKING_SAMPLERS) and throwaway in box.options
    assert box.value == throwaway and not at.exception and any("Press **Rank**" in i.value for i in at.info)


def test_a_sampler_is_offered_to_the_fits_it_is_made_for():
    from lib.inference.settings import samplers_for

    assert list(samplers_for("grm")) == ["numpyro", "pymc", "nutpie", "map"]
    assert list(samplers_for("ranking")) == ["numpyro", "pymc", "nutpie", "laplace"]
    with pytest.raises(SettingsError, match="unknown sampler 'laplace'"):
        FitSettings(sampler="laplace").validate()


def test_an_unregistered_sampler_is_a_settings_error():
    with pytest.raises(SettingsError, match="unknown sampler 'metropolis'; choose one of numpyro, pymc, nutpie, map"):
        FitSettings(sampler="metropolis").validate()
