"""The potential numpyro's NUTS runs on (lib.inference.jax_data): minus the model's log density, the data an
argument, checked against PyMC's own compiled log density of a model built on each data set."""

from __future__ import annotations

import numpy as np

from lib.inference.jax_data import jaxified_potential_of_data
from lib.irt.model import build_grm
from lib.irt.simulate import simulate_grm


def test_the_potential_is_minus_the_log_density_of_the_data_passed():
    first, second = (build_grm(simulate_grm(3, 11, seed=s).codes, 7) for s in (1, 2))
    potential, data = jaxified_potential_of_data(first)
    _, second_data = jaxified_potential_of_data(second)
    assert not all(np.array_equal(a, b) for a, b in zip(data, second_data, strict=True))
    point = first.initial_point()
    point = {k: v + 0.3 for k, v in point.items()}  # away from the priors' centres
    values = [point[v.name] for v in first.value_vars]
    for model, given in ((first, data), (second, second_data)):
        logp = model.compile_logp()(point)
        # float64 end to end: the two compiled graphs differ only in rounding
        np.testing.assert_allclose(float(potential(values, given)), -logp, rtol=1e-10)


def test_a_model_built_on_numpy_arrays_takes_its_data_as_arguments():
    """The ranking model holds its votes as constants (no ``pm.Data``): they are lifted into the data, so the
    potential of one arena evaluates another of the same sizes as that arena's own model does."""
    from lib.ranking.model import build_ranking, observations
    from lib.ranking.simulate import simulate_arena
    from tests.ranking.conftest import arena_input

    first, second = (build_ranking(observations(arena_input(simulate_arena(4, 10, 120, seed=s)[0]))) for s in (3, 4))
    potential, data = jaxified_potential_of_data(first)
    _, second_data = jaxified_potential_of_data(second)
    assert len(data) >= 3  # the votes' systems, prompts and outcomes: before, none (all constants)
    assert [np.shape(a) for a in data] == [np.shape(b) for b in second_data]
    assert not all(np.array_equal(a, b) for a, b in zip(data, second_data, strict=True))
    point = {k: v + 0.3 for k, v in first.initial_point().items()}
    values = [point[v.name] for v in first.value_vars]
    for model, given in ((first, data), (second, second_data)):
        np.testing.assert_allclose(float(potential(values, given)), -model.compile_logp()(point), rtol=1e-10)
