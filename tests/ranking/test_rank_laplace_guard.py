"""The Laplace fit's marginal mode survives a line-search trial point whose inner solution is not finite
(issue 16's null-calibration benchmark: 3 of 80 null ratings studies failed with "no mode", NUTS fitted them),
and a start at the joint mode's prompt-effect scale sigma_eta (seed 2010 of three scores a cell stopped with
"the Hessian at the mode is not positive definite" until the search started sigma_eta at the prior's mode).
The ratings model without the raters' severities: with them the fit is NUTS (``lib.ranking.fit.nuts_reason``)."""

from __future__ import annotations

import numpy as np
import pytest

from lib.inputs import analysis_input
from lib.io.tables import read_csv
from lib.ranking.data import ranking_data
from lib.ranking.fit import RankSettings, fit_ranking
from lib.ranking.simulate import simulate_ratings

COLUMNS = {"prompt": "prompt_id", "system": "system", "annotator": "annotator_id", "score": "score"}


@pytest.mark.parametrize(("raters", "seed"), [(1, 6), (3, 8), (3, 2010)])
def test_a_null_ratings_study_that_failed_now_fits(raters, seed, tmp_path, monkeypatch):
    monkeypatch.setenv("EVAL_CACHE_DIR", str(tmp_path))
    scores, _ = simulate_ratings(2, 40, 10, raters_per_cell=raters, skill_sd=0.0, seed=seed)
    table = read_csv(scores.to_csv(index=False).encode(), "scores.csv")
    data = analysis_input(table, "ratings", COLUMNS, file="scores.csv", merge_redundant=False)
    fit = fit_ranking(
        ranking_data(data, "ratings"), RankSettings(draws=2000, seed=seed, annotator_effect=False), use_cache=False
    )
    skill = fit.skill_draws()
    assert np.isfinite(skill).all()
    assert 0.0 < float(np.mean(skill[:, 1] > skill[:, 0])) < 1.0
