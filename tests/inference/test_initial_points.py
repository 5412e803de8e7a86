"""The chains' jittered initial points of a new model cost one compiled program, not one a model operation
(issue 19 item 7): PyMC checks each jittered point's log density, and evaluated eagerly that compiled
about 60 one-operation programs for every model of new sizes, each written to JAX's persistent cache."""

from __future__ import annotations

import numpy as np
from jax import monitoring

from lib.inference.samplers import _initial_points
from lib.inference.settings import NutsSettings
from lib.irt.model import build_grm
from lib.irt.simulate import simulate_grm

COMPILED = "/jax/core/compile/backend_compile_duration"


def test_the_initial_points_of_a_new_model_compile_a_handful_of_programs():
    from pymc.sampling.jax import get_jaxified_logp

    codes = simulate_grm(5, 17, seed=4).codes  # sizes no other test fits: nothing compiled yet
    model = build_grm(codes, 7)
    logp = get_jaxified_logp(model, negative_logp=False)
    compiled: list[float] = []

    def listen(event: str, duration: float, **kwargs) -> None:
        if event == COMPILED:
            compiled.append(duration)

    monitoring.register_event_duration_secs_listener(listen)
    try:
        init = _initial_points(model, logp, None, NutsSettings(chains=2, draws=10, tune=10, seed=3))
    finally:
        monitoring.unregister_event_duration_listener(listen)
    assert [np.shape(v)[0] for v in init] == [2] * len(model.value_vars)  # one start per chain
    assert all(np.isfinite(v).all() for v in init)
    assert len(compiled) <= 6, len(compiled)  # before: 59 (the model's operations, one by one)
