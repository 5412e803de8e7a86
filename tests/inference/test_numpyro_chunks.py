"""numpyro's NUTS in chunks by one program without host callbacks (issue 19 items 4 and 7): a fit of a
fixed number of draws keeps exactly ``draws`` per chain whatever the chunk length, and a second fit of the
same model and sizes loads every program it runs from JAX's persistent compilation cache (before, the
fixed-draws program reported progress through a host callback, which JAX never caches: every fit
recompiled it)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from lib.inference import compile_cache
from lib.inference.samplers import PROGRESS_CHUNKS, chunk_length
from lib.inference.settings import TARGET_CHUNK
from lib.irt.fit import fit_grm
from lib.irt.settings import FitSettings
from lib.irt.simulate import simulate_grm
from tests.conftest import rating_matrix_from_codes

REQUESTS = "/jax/compilation_cache/compile_requests_use_cache"
HITS = "/jax/compilation_cache/cache_hits"


@pytest.fixture(scope="module")
def rm():
    return rating_matrix_from_codes(simulate_grm(4, 12, seed=21).codes)


def test_chunks_are_at_most_target_chunk_long_10_to_20_and_waste_less_than_one_iteration_each():
    for tune in (0, 7, 30, 50, 100, 150, 250, 500, 1000):
        for draws in (1, 13, 45, 50, 100, 250, 300, 1000, 4000):
            total = tune + draws
            length = chunk_length(tune, draws)
            chunks = -(-total // length)
            assert 1 <= length <= TARGET_CHUNK, (tune, draws)
            # progress in 5-10% steps (one per iteration when there are fewer than PROGRESS_CHUNKS)
            assert chunks == total if total <= PROGRESS_CHUNKS else chunks > PROGRESS_CHUNKS / 2, (tune, draws)
            assert chunks * length - total < chunks, (tune, draws)  # thrown away past the last draw
    assert chunk_length(200, 300) == 25 and chunk_length(500, 1000) == 75  # divides: nothing thrown away


@pytest.mark.parametrize(
    ("chains", "tune", "draws"),
    [
        (2, 30, 45),  # chains in parallel (pmap); chunks of 4: the warm-up ends inside a chunk
        (1, 7, 13),  # one chain (jit), chunks of 1
    ],
)
def test_a_fixed_draws_fit_keeps_exactly_its_draws_per_chain(rm, chains, tune, draws):
    fit = fit_grm(rm, FitSettings(chains=chains, tune=tune, draws=draws, seed=5), use_cache=False)
    post, stats = fit.idata.posterior, fit.idata.sample_stats
    assert (post.sizes["chain"], post.sizes["draw"]) == (chains, draws)
    assert (post["draw"].to_numpy() == np.arange(draws)).all()
    assert post["theta"].dims == ("chain", "draw", "comparison")
    for name in ("diverging", "energy"):
        assert stats[name].shape == (chains, draws)
    assert np.isfinite(stats["energy"].to_numpy()).all() and np.isfinite(post["theta"].to_numpy()).all()
    assert fit.diagnostics.draws == draws
    assert {"compile", "warm-up", "sampling", "read-outs"} <= set(fit.diagnostics.timings)


def test_a_second_fixed_draws_fit_of_the_same_model_compiles_nothing(rm, monkeypatch):
    import jax

    monkeypatch.delenv(compile_cache.ENV, raising=False)
    assert compile_cache.enable() is not None  # tests/conftest.py turned it on for the run
    settings = FitSettings(chains=2, tune=30, draws=45, seed=1)
    fit_grm(rm, settings, use_cache=False)  # compiles (or loads) and writes every program
    events: list[str] = []

    def listen(event: str, **kwargs) -> None:
        events.append(event)

    jax.monitoring.register_event_listener(listen)
    try:
        fit_grm(rm, replace(settings, seed=2), use_cache=False)  # another seed: the same programs
    finally:
        jax.monitoring.unregister_event_listener(listen)
    requests, hits = events.count(REQUESTS), events.count(HITS)
    assert requests > 0 and hits == requests, (requests, hits)
