"""The NUTS check: the GRM's full posterior on the plan's own first studies, beside grm_map and grm_bank."""

from __future__ import annotations

import numpy as np
import pytest

from lib.errors import SettingsError
from lib.irt.settings import FitSettings
from lib.planning.analyses import grm_bank, grm_map
from lib.planning.design import Assumptions, Design
from lib.planning.nuts import NUTS_COLUMNS, nuts_check
from lib.planning.simulate import simulate_study

TINY = FitSettings(chains=2, draws=100, tune=100, seed=1)


@pytest.fixture(autouse=True)
def _own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("EVAL_CACHE_DIR", str(tmp_path / "cache"))


def test_the_nuts_check_compares_the_plans_own_studies_with_a_posterior():
    a, design = Assumptions(n_systems=3, effect=1.0), Design(8, 2, "random")
    # one study: each NUTS fit compiles its model (about 10 s on a loaded 2-core machine)
    df = nuts_check(a, design, replicates=1, seed=5, settings=TINY, analyses=("grm_map", "grm_bank"))
    assert list(df.columns) == NUTS_COLUMNS and len(df) == 3 * 2  # comparisons x analyses
    study = simulate_study(a, design, seed=5, replicate=0)  # the plan's first study: same truth and answers
    for name, analysis in (("grm_map", grm_map), ("grm_bank", grm_bank)):
        rows, result = df[df["analysis"] == name], analysis(study)
        np.testing.assert_array_equal(rows["theta"], study.theta)
        np.testing.assert_allclose(rows["estimate"], result.estimate)
        np.testing.assert_allclose(rows["high"] - rows["low"], result.width)
    assert (df["nuts_low"] < df["nuts_mean"]).all() and (df["nuts_mean"] < df["nuts_high"]).all()
    assert df["nuts_excludes_zero"].equals((df["nuts_low"] > 0) | (df["nuts_high"] < 0))
    assert df["agree"].equals(df["excludes_zero"] == df["nuts_excludes_zero"])
    assert (df["rhat_max"] > 0.99).all() and (df["ess_bulk_min"] > 0).all() and (df["divergences"] >= 0).all()
    # the pair two steps apart (true theta 2): the posterior puts it on the right side of 0
    far = df[df["theta"].abs() > 1.5]
    assert (np.sign(far["nuts_mean"]) == np.sign(far["theta"])).all()


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"analyses": ("t_test",)}, "compares the GRM analyses"),
        ({"settings": FitSettings(sampler="map")}, "needs a sampler with a posterior"),
        ({"replicates": 0}, "at least 1 replicate"),
    ],
)
def test_bad_nuts_check_settings_are_refused(kwargs, match):
    with pytest.raises(SettingsError, match=match):
        nuts_check(Assumptions(), Design(5, 1), **kwargs)
