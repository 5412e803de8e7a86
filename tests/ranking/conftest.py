"""Fixtures of the ranking tests: simulated arena votes read as a user's file would be."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from lib.inference.samplers import Draws
from lib.inputs import analysis_input
from lib.io.tables import read_csv
from lib.ranking.data import ranking_data

ARENA_COLUMNS = {
    "prompt": "prompt_id",
    "system_a": "system_a",
    "system_b": "system_b",
    "annotator": "annotator_id",
    "choice": "winner",
}


def arena_analysis_input(votes):
    """Simulated votes through the CSV reader and the pairwise format (:func:`lib.inputs.analysis_input`)."""
    columns = dict(ARENA_COLUMNS, **({"position": "first"} if "first" in votes else {}))
    table = read_csv(votes.to_csv(index=False).encode(), "arena.csv")
    return analysis_input(table, "pairwise", columns, file="arena.csv", merge_redundant=False)


def arena_input(votes, likelihood=None):
    """Simulated votes through the CSV reader, the pairwise format and :func:`ranking_data`."""
    return ranking_data(arena_analysis_input(votes), likelihood)


POSITIVE = ("alpha", "sigma_alpha", "sigma_category", "sigma_eta", "sigma_zeta", "tau")
"""The models' kept variables that are positive: alpha_j = exp(...) and the scales (HalfNormal)."""


def stand_in_draws(model, names: list[str], chains: int, draws: int, seed: int) -> dict[str, np.ndarray]:
    """Draws (chain, draw, ...) of the kept variables ``names`` of a PyMC model (the ranking's or the GRM's) in the
    model's own ranges, without compiling it: normal; alpha and the scales (:data:`POSITIVE`) log-normal, each
    prompt's thresholds b ordered."""
    rng = np.random.default_rng(seed)
    dims = {n: list(model.named_vars_to_dims.get(n, ())) for n in names}
    values = {n: rng.normal(size=(chains, draws, *(len(model.coords[d]) for d in ds))) for n, ds in dims.items()}
    values.update({n: np.exp(0.3 * v) for n, v in values.items() if n in POSITIVE})
    values.update({n: np.sort(v, axis=-1) for n, v in values.items() if n == "b"})
    return values


def as_idata(model, values: dict[str, np.ndarray]):
    """``values`` (:func:`stand_in_draws`) as an ``arviz.InferenceData`` with the model's dims and coordinates."""
    import arviz as az

    dims = {n: list(model.named_vars_to_dims.get(n, ())) for n in values}
    coords = {d: model.coords[d] for ds in dims.values() for d in ds}
    return az.from_dict(posterior=values, coords=coords, dims=dims)


def laplace_stand_in(calls: list, *, per_call: bool = False) -> Callable[..., Draws]:
    """A stand-in for the full model's Laplace solver (``lib.inference.laplace.laplace``), for tests of what
    surrounds a fit (no compilation): :func:`stand_in_draws` in one chain, the first draw as the mode. Each call
    appends the variables' names to ``calls``; the draws are seeded by the settings' seed, or with ``per_call`` by
    the number of calls (different for every fit)."""

    def laplace(model, names, settings, tracker, options=None, **kept):
        calls.append(list(names))
        values = stand_in_draws(model, names, 1, settings.draws, len(calls) if per_call else settings.seed)
        return Draws(as_idata(model, values), {n: v[0, 0] for n, v in values.items()})

    return laplace


@pytest.fixture
def arena():
    """:func:`arena_input`."""
    return arena_input


@pytest.fixture
def arena_analysis():
    """:func:`arena_analysis_input`."""
    return arena_analysis_input
