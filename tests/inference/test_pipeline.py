"""One fit pipeline (issue 32 item 1): :func:`lib.inference.pipeline.run_fit` runs every step of a fit around a
model's :class:`~lib.inference.pipeline.FitPlan`, whatever the model; the MAP point is the engine's for any model
given as a :class:`~lib.inference.map.MapSpec`; Laplace returns its mode."""

from __future__ import annotations

from dataclasses import dataclass

import arviz as az
import numpy as np
import pytest

from lib.errors import SettingsError
from lib.inference.diagnostics import Diagnostics, diagnose
from lib.inference.pipeline import FitPlan, run_fit
from lib.inference.progress import Tracker
from lib.inference.samplers import Draws, Problem, runner
from lib.inference.settings import SAMPLERS, NutsSettings, Sampler
from lib.inference.store import FitStore, Stored

CALLS: list[int] = []
"""One entry per run of :func:`constant_sampler` (reset by the ``toy`` fixture)."""


def constant_sampler(problem, settings, tracker) -> az.InferenceData:
    """A sampler of no model: the same normal draws every time, counted in :data:`CALLS`."""
    CALLS.append(1)
    draws = np.random.default_rng(settings.seed).normal(size=(settings.chains, settings.draws))
    return az.from_dict(posterior={"mu": draws})


@dataclass
class Toy:
    """A toy model's result."""

    idata: az.InferenceData
    diagnostics: Diagnostics
    key: str
    from_cache: bool = False


@pytest.fixture
def toy(monkeypatch, tmp_path):
    """The sampler ``constant`` registered for one test, a cache of its own, and a plan maker."""
    monkeypatch.setenv("EVAL_CACHE_DIR", str(tmp_path / "cache"))
    sampler = Sampler("constant", "a test sampler", True, f"{__name__}:constant_sampler")
    monkeypatch.setitem(SAMPLERS, "constant", sampler)
    CALLS.clear()
    store = FitStore("toy", model_version=1)
    settings = NutsSettings(chains=2, draws=50)

    def plan(remembered: list | None = None, cacheable: bool = True) -> FitPlan[Toy]:
        request = store.request([np.arange(3)], settings)
        return FitPlan(
            store=store,
            request=request,
            sampler="constant",
            problem=Problem(build=lambda: (None, ["mu"])),
            settings=settings,
            read=lambda stored: Toy(stored.idata, stored.diagnostics, store.key(request), from_cache=True),
            diagnose=lambda draws: diagnose(draws.idata, "constant", 0.0, ["mu"]),
            result=lambda draws, diag, key: Toy(draws.idata, diag, key),
            remember=None if remembered is None else lambda: remembered.append(1),
            cacheable=cacheable,
        )

    return store, plan


def test_a_fit_runs_every_step_and_the_next_is_read_from_the_cache(toy):
    store, plan = toy
    said: list[str] = []
    first = run_fit(plan, progress=lambda fraction, message: said.append(message))
    assert CALLS == [1] and "computing diagnostics" in said and said[-1].startswith("done in")
    assert {"checks", "diagnostics", "cache write"} <= set(first.diagnostics.timings)
    assert first.diagnostics.wall_s >= sum(t for p, t in first.diagnostics.timings.items() if p != "cache write")
    assert (store.folder / f"{first.key}.nc").exists()
    said.clear()
    again = run_fit(plan, progress=lambda fraction, message: said.append(message))
    assert CALLS == [1] and said == ["loaded from cache"] and again.from_cache and again.key == first.key
    np.testing.assert_array_equal(again.idata["posterior"]["mu"], first.idata["posterior"]["mu"])


def test_what_a_fit_remembers_is_written_after_the_fit_and_on_a_hit(toy):
    _, plan = toy
    remembered: list[int] = []
    run_fit(lambda: plan(remembered))
    run_fit(lambda: plan(remembered))
    assert CALLS == [1] and remembered == [1, 1]


def test_a_plan_that_cannot_be_cached_is_neither_read_nor_written(toy):
    store, plan = toy
    run_fit(lambda: plan(cacheable=False))
    run_fit(lambda: plan(cacheable=False))
    assert CALLS == [1, 1] and not list(store.folder.glob("*.nc"))


def test_checks_that_fail_stop_the_fit_before_anything_runs_or_is_written(toy):
    store, _ = toy

    def refused() -> FitPlan[Toy]:
        raise SettingsError("chains must be at least 1")

    with pytest.raises(SettingsError, match="chains"):
        run_fit(refused)
    assert CALLS == [] and not list(store.folder.glob("*"))


def normal_model(y: np.ndarray):
    """mu ~ N(0, 1), y_i ~ N(mu, 1): the posterior mode of mu is sum(y) / (n + 1)."""
    import pymc as pm

    with pm.Model() as model:
        data = pm.Data("y", y)
        mu = pm.Normal("mu", 0.0, 1.0)
        pm.Normal("obs", mu, 1.0, observed=data)
    return model


def test_laplace_returns_the_mode_it_draws_around():
    y = np.array([0.3, 1.9, 1.1, 2.4])
    problem = Problem(build=lambda: (normal_model(y), ["mu"]))
    drawn = runner("laplace")(problem, NutsSettings(draws=200), Tracker(1, 0.0))
    assert isinstance(drawn, Draws) and drawn.idata["posterior"]["mu"].shape == (1, 200)
    np.testing.assert_allclose(drawn.mode["mu"], y.sum() / (len(y) + 1), atol=1e-6)


def test_the_map_sampler_fits_any_model_given_as_a_map_spec():
    from lib.inference.map import MapSpec, map_solver_ready

    def spec(y: np.ndarray) -> MapSpec:
        def template():
            return normal_model(np.zeros(len(y)))  # any data of the shape: the data are the solver's inputs

        return MapSpec(key=("normal", len(y)), template=template, data={"y": y}, outputs=("mu",), coords={})

    run = runner("map")
    for y in (np.array([0.3, 1.9, 1.1]), np.array([-2.0, -1.0, 0.5])):  # one solver, two data sets
        idata = run(Problem(build=lambda: (None, []), map=spec(y)), NutsSettings(), Tracker(1, 0.0))
        assert map_solver_ready(("normal", 3))
        np.testing.assert_allclose(idata["posterior"]["mu"].to_numpy(), [[y.sum() / 4]], atol=1e-5)


def test_the_map_sampler_refuses_a_model_without_a_map_spec():
    with pytest.raises(SettingsError, match="no MAP point"):
        runner("map")(Problem(build=lambda: (None, [])), NutsSettings(), Tracker(1, 0.0))


def test_a_cache_entry_of_another_toy_request_is_a_miss(toy):
    store, plan = toy
    run_fit(plan)
    other = store.request([np.arange(4)], NutsSettings(chains=2, draws=50))
    assert store.load(other, lambda stored: stored) is None
    assert isinstance(store.load(plan().request, lambda stored: stored), Stored)
