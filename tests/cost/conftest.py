"""Fixtures of the lib/cost tests: studies whose tests, efforts and costs are known."""

from __future__ import annotations

import pytest
from cost_studies import NUMERIC, WRITING, Z, make_study, task_rows


@pytest.fixture(scope="module")
def study_with_known_tests():
    """Three tasks whose pre-tests have known outcomes (Table 1 procedure)."""
    rows = (
        task_rows("normal", 3.5 + 0.5 * Z, 2.5 + 0.5 * Z)  # normal, equal variances -> t-test
        + task_rows("skewed", [5] * 20 + [1] * 4 + [2] * 3 + [3] * 3, 3 + 0.5 * Z)  # not normal -> MW
        + task_rows("unequal", 3.2 + 0.05 * Z, 3 + 0.8 * Z)  # normal, unequal variances -> MW
    )
    return make_study(rows, covariates={})


@pytest.fixture(scope="module")
def effort_study():
    rows = task_rows("numeric", [3] * 9, [5] * 9, **NUMERIC) + task_rows("writing", [2] * 9, [4] * 9, **WRITING)
    return make_study(rows, covariates={})
