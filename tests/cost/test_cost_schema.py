"""lib.cost.schema: validation errors name file, rows and column; guessed roles and covariates."""

from __future__ import annotations

import numpy as np
import pytest
from cost_studies import base_table

from lib.cost.schema import STUDY_ROLES, guess_with_label, parse_covariates, read_study
from lib.errors import InputError, SettingsError
from lib.io.tables import guess_roles


@pytest.mark.parametrize(
    ("change", "pattern"),
    [
        (lambda d: d.assign(usefulness=[3, 4, 7, 2, 3, 4]), r"study.csv, row 3, column 'usefulness': .*1-5"),
        (
            lambda d: d.assign(usefulness=["3", "x", "5", "2", "3", "4"]),
            r"row 2, column 'usefulness': usefulness must be a number, found 'x'",
        ),
        (lambda d: d.assign(instance=[1, 2, 2.5, 1, 2, 3]), r"row 3, column 'instance'.*whole number"),
        (lambda d: d.assign(solve_time_s=[np.nan] * 3 + [5, -1, 7]), r"row 5, column 'solve_time_s'.*>= 0"),
        (lambda d: d.assign(solve_time_s=[9, np.nan, np.nan, 5, 6, 7]), r"row 1, .*only applies to condition 'human'"),
        (
            lambda d: d.assign(condition=["gpt", "gpt", "x", "human", "human", "human"]),
            r"column .condition.: .*exactly two conditions .*found 3",
        ),
        (lambda d: d.assign(instance=[1, 1, 3, 1, 2, 3]), r"rows 1, 2, column 'instance'.*more than once"),
        (lambda d: d.assign(task=["t", "", "t", "t", "t", "t"]), r"row 2, column 'task': missing task"),
        (lambda d: d.drop(columns="usefulness"), r"no column for required role usefulness"),
    ],
)
def test_bad_input_names_file_rows_and_column(change, pattern):
    with pytest.raises(InputError, match=pattern):
        read_study(change(base_table()), file="study.csv", covariates={})


def test_covariate_errors():
    base = base_table().assign(level=["B1", "B1", "B1", "low", "low", "low"])
    with pytest.raises(InputError, match=r"column 'level'.*give their order"):
        read_study(base, file="s.csv", covariates={"level": None})
    changing = base_table().assign(age=[20, 21, 20, 30, 30, 30])
    with pytest.raises(InputError, match=r"rows 1, 2, 3, column 'age'.*must not change"):
        read_study(changing, file="s.csv", covariates={"age": None})
    ordered = read_study(
        base_table().assign(lvl=["hi", "hi", "hi", "lo", "lo", "lo"]),
        file="s.csv",
        covariates=parse_covariates("lvl=lo<hi"),
    )
    assert ordered.data.lvl.tolist() == [1.0] * 3 + [0.0] * 3


def test_settings_errors():
    with pytest.raises(SettingsError, match="'model' is not a condition"):
        read_study(base_table(), file="s.csv", with_label="model")
    with pytest.raises(InputError, match="unknown role 'speed'"):
        read_study(base_table(), {"speed": "usefulness"}, file="s.csv")
    with pytest.raises(InputError, match=r"column 'nope'.*not in the file"):
        read_study(base_table(), {"usefulness": "nope"}, file="s.csv")


def test_guesses():
    cols = ["Condition", "Participant ID", "Task", "h", "Usefulness", "Prompt time (s)", "solve_time", "age"]
    g = guess_roles(cols, STUDY_ROLES)
    assert g["participant"] == "Participant ID" and g["instance"] == "h" and g["solve_time_s"] == "solve_time"
    assert g["prompt_time_s"] == "Prompt time (s)"
    assert guess_with_label(["without_model", "with_model"]) == "with_model"
    assert guess_with_label(["Human", "GPT-3"]) == "GPT-3"


def test_guessed_covariates_are_participant_level():
    df = base_table().assign(age=[20, 20, 20, 30, 30, 30], seconds=[1, 2, 3, 4, 5, 6])
    study = read_study(df, file="s.csv")
    assert study.covariates == ["age"]  # 'seconds' changes within a participant: not a covariate


def test_id_like_columns_are_not_guessed_as_covariates():
    df = base_table().assign(
        age=[20] * 3 + [30] * 3,
        session_id=[101] * 3 + [202] * 3,
        SessionID=["s1"] * 3 + ["s2"] * 3,
        respondentId=[7] * 3 + [8] * 3,
        paid=[1] * 3 + [0] * 3,
    )
    assert read_study(df, file="s.csv").covariates == ["age", "paid"]
