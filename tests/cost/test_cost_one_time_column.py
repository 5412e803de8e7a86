"""A study shaped like the published one (issue 16, item 17): one time column holds the prompt time on
the with-model rows and the solving time on the without-model rows; a session number beside the
participant; an "Extraction time (s)" column."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from lib.cost.analysis import analyse
from lib.cost.schema import STUDY_ROLES, read_study
from lib.errors import FormatError
from lib.io.tables import guess_roles, read_csv

PROMPT_S = {1: 90, 2: 30, 3: 20}  # with the model, by instance: first prompt carries D_H
SOLVE_S = {1: 200, 2: 260, 3: 320}  # without the model


def published_shape() -> pd.DataFrame:
    rows = ["Condition,Participant,Session,Task,Instance,Usefulness,Prompt time (s),Extraction time (s),Age"]
    for p in range(6):
        cond = "GPT-3" if p < 3 else "no model"
        for h in (1, 2, 3):
            time = PROMPT_S[h] + p if cond == "GPT-3" else SOLVE_S[h] + p
            extract = f"{5 + h}" if cond == "GPT-3" else ""
            rows.append(f"{cond},P{p},{p % 2 + 1},numbers,{h},{(p + h) % 5 + 1},{time},{extract},{20 + 3 * p}")
    return read_csv("\n".join(rows).encode(), "published.csv")


def test_the_study_loads_as_it_is_reading_the_time_column_per_condition():
    study = read_study(published_shape(), file="published.csv")
    data = study.data
    with_model = data["with_model"].to_numpy()
    assert study.with_label == "GPT-3"
    assert np.isnan(data.loc[with_model, "solve_time_s"]).all()
    assert np.isnan(data.loc[~with_model, "prompt_time_s"]).all()
    assert data.loc[~with_model, "solve_time_s"].tolist() == [SOLVE_S[h] + p for p in (3, 4, 5) for h in (1, 2, 3)]
    assert data.loc[with_model, "prompt_time_s"].tolist() == [PROMPT_S[h] + p for p in (0, 1, 2) for h in (1, 2, 3)]
    assert data.loc[with_model, "unwrap_time_s"].tolist() == [6, 7, 8] * 3
    assert any("read per condition" in w and "'Prompt time (s)'" in w for w in study.warnings)
    assert study.covariates == ["Age"]  # the session number is not a participant covariate
    medians = analyse(study, validation_zero=True).effort_medians.set_index("component")["median_s"]
    assert medians["G_H"] == pytest.approx(np.median([SOLVE_S[h] + p for p in (3, 4, 5) for h in (1, 2, 3)]))
    assert medians["U_H"] == 7


def test_mapping_the_column_to_both_roles_is_the_same_and_unmapping_refuses_with_a_hint():
    table = published_shape()
    both = read_study(
        table, {"prompt_time_s": "Prompt time (s)", "solve_time_s": "Prompt time (s)"}, file="published.csv"
    )
    auto = read_study(table, file="published.csv")
    pd.testing.assert_frame_equal(both.data, auto.data)
    assert not any("read per condition" in w for w in both.warnings)
    # With another column for the solving time, a prompt time on a without-model row is an error again.
    with pytest.raises(
        FormatError,
        match=r"rows 10, 11, .*column 'Prompt time \(s\)': prompt_time_s only applies "
        r".*map solve_time_s to it too",
    ):
        read_study(table.assign(solve=""), {"solve_time_s": "solve"}, file="published.csv")


def test_extraction_time_is_guessed_as_unwrap_time_whatever_its_unit():
    for name in ("Extraction time (s)", "extraction_time_seconds", "time_extraction", "Unwrap time (sec)"):
        assert guess_roles(["Condition", name], STUDY_ROLES)["unwrap_time_s"] == name
    assert guess_roles(["Validation time (s)"], STUDY_ROLES)["validate_time_s"] == "Validation time (s)"
