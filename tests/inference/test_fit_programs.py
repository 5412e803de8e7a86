"""A numpyro fit of a new model compiles a handful of programs, not one a model operation (issue 19 item 7):
PyMC checks each chain's jittered initial point by the model's log density, and numpyro's kernel starts a
chain (step size, mass matrix, momentum), both evaluated eagerly before: about 60 and about 120
one-operation programs for every model of new sizes, each compiled and written to JAX's persistent cache."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
from jax import monitoring

from lib.inference.samplers import _initial_points
from lib.inference.settings import NutsSettings
from lib.irt.fit import fit_grm
from lib.irt.model import build_grm
from lib.irt.settings import FitSettings
from lib.irt.simulate import simulate_grm
from tests.conftest import rating_matrix_from_codes

COMPILED = "/jax/core/compile/backend_compile_duration"


@contextmanager
def compiled_programs() -> Iterator[list[str]]:
    """The name of each program XLA compiles inside the block, or loads from JAX's persistent cache."""
    compiled: list[str] = []

    def listen(event: str, duration: float, **kwargs) -> None:
        if event == COMPILED:
            compiled.append(kwargs.get("fun_name", ""))

    monitoring.register_event_duration_secs_listener(listen)
    try:
        yield compiled
    finally:
        monitoring.unregister_event_duration_listener(listen)


def test_the_initial_points_of_a_new_model_compile_a_handful_of_programs():
    from pymc.sampling.jax import get_jaxified_logp

    codes = simulate_grm(5, 17, seed=4).codes  # sizes no other test fits: nothing compiled yet
    model = build_grm(codes, 7)
    logp = get_jaxified_logp(model, negative_logp=False)
    with compiled_programs() as compiled:
        init = _initial_points(model, NutsSettings(chains=2, draws=10, tune=10, seed=3), logp)
    assert [np.shape(v)[0] for v in init] == [2] * len(model.value_vars)  # one start per chain
    assert all(np.isfinite(v).all() for v in init)
    assert len(compiled) <= 6, len(compiled)  # before: 59 (the model's operations, one by one)


def test_a_one_chain_fit_of_a_new_model_compiles_a_handful_of_programs():
    rm = rating_matrix_from_codes(simulate_grm(4, 19, seed=6).codes)  # sizes no other test fits
    with compiled_programs() as compiled:
        fit = fit_grm(rm, FitSettings(chains=1, draws=10, tune=10, seed=2), use_cache=False)
    assert fit.idata.posterior["theta"].shape == (1, 10, 4)
    assert len(compiled) <= 25, len(compiled)  # before: 131 (the chain's start, operation by operation)
    # The start's check is the chain's start, which computes the potential there anyway: no program of the
    # potential alone (before: jit(potential), 0.2-0.6 s to compile on the paper's design)
    assert not [name for name in compiled if "potential" in name], compiled


MISSED = "/jax/compilation_cache/cache_misses"


@contextmanager
def cache_misses() -> Iterator[list[str]]:
    """One entry for each program inside the block that JAX's persistent cache did not hold (compiled afresh;
    :data:`COMPILED` counts the programs loaded from it too)."""
    missed: list[str] = []

    def listen(event: str, **kwargs) -> None:
        if event == MISSED:
            missed.append(event)

    monitoring.register_event_listener(listen)
    try:
        yield missed
    finally:
        monitoring.unregister_event_listener(listen)


def test_a_fit_of_new_data_of_the_same_sizes_compiles_nothing():
    """The data are arguments of the compiled programs, not constants in them (issue 35 item 2): a second data
    set of the same sizes loads every program of the first from JAX's persistent cache."""
    first, second = (
        rating_matrix_from_codes(simulate_grm(3, 23, seed=s).codes) for s in (7, 8)
    )  # sizes no other test fits
    assert not np.array_equal(first.codes(), second.codes())
    settings = FitSettings(chains=2, draws=10, tune=10, seed=2)
    with cache_misses() as missed_first, compiled_programs() as compiled:
        fit_grm(first, settings, use_cache=False)
    assert missed_first  # the first compiled (else the check below could not fail)
    # the chains' start and their chunk (and one small one): before, 11 (the potential alone for the starts' check,
    # each start's conversion to JAX arrays for it, the chains' keys made, split and sliced onto the devices)
    assert len(compiled) <= 3, compiled
    with cache_misses() as missed:
        fit = fit_grm(second, settings, use_cache=False)
    assert fit.idata.posterior["theta"].shape == (2, 10, 3)
    assert missed == [], len(missed)  # before: 3 (the chains' start, their chunk of iterations, the start's check)


def test_a_laplace_fit_of_new_data_of_the_same_sizes_compiles_nothing():
    """The Laplace fit's programs (the objective, its gradient, the Hessian-vector products, the marginal's Newton
    steps) take the data as arguments (issue 35 item 1): a second arena of the same sizes loads every program of
    the first from JAX's persistent cache. Before, PyMC's jaxified log density held the votes as constants, and the
    four Laplace fits of the categories test spent about 30 s each compiling. alpha_j = 1 keeps the fit on the full
    model's Laplace path: the votes' quadrature fit (:mod:`lib.ranking.marginal`) compiles no JAX program."""
    from lib.ranking.fit import RankSettings, fit_ranking
    from lib.ranking.simulate import simulate_arena
    from tests.ranking.conftest import arena_input

    # sizes no other test fits; 300 votes on 20 prompts: every prompt and system is voted on in both
    first, second = (arena_input(simulate_arena(5, 20, 300, seed=s)[0]) for s in (11, 12))
    assert first.votes.nunique().to_dict() == second.votes.nunique().to_dict()  # 20 prompts, 5 systems, 3 outcomes
    assert not first.votes.equals(second.votes)
    with cache_misses() as missed_first:
        fit_ranking(first, RankSettings(), use_cache=False, fixed_alpha=True)
    assert missed_first  # the first compiled (else the check below could not fail)
    with cache_misses() as missed:
        fit = fit_ranking(second, RankSettings(), use_cache=False, fixed_alpha=True)
    assert fit.diagnostics.sampler == "laplace" and fit.skill_draws().shape[1] == 5
    assert missed == [], len(missed)  # before: 4 (the objective, the Hessian-vector products, the marginal's two)
