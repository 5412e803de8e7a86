"""lib.cost.analysis: every table of the analysis, and one file name per table for the command and the page."""

from __future__ import annotations

import pandas as pd
import pytest

from lib.cli import main
from lib.cost.analysis import FILES, analyse
from lib.cost.costs import Weights
from lib.errors import SettingsError
from lib.io.export import csv_text


def test_files_name_every_table_once_and_are_what_the_command_writes(effort_study, tmp_path):
    res = analyse(effort_study, weights=Weights(1, 0.5, 1, 1), n_max=5)
    files = res.files()
    assert list(files) == list(FILES.values()) and len(set(files)) == 8
    assert all(isinstance(t, pd.DataFrame) for t in files.values())
    assert files["loss_by_difficulty.csv"] is res.difficulty and files["cost_curve.csv"] is res.cost_curve
    rows = [{**r, "participant": str(r["participant"])} for r in effort_study.data.to_dict("records")]
    pd.DataFrame(rows)[
        [
            "condition",
            "participant",
            "task",
            "instance",
            "usefulness",
            "prompt_time_s",
            "unwrap_time_s",
            "validate_time_s",
            "solve_time_s",
        ]
    ].to_csv(tmp_path / "s.csv", index=False)
    assert (
        main(
            [
                "cost",
                "--input",
                str(tmp_path / "s.csv"),
                "--covariates",
                "",
                "--weights",
                "1,0.5,1,1",
                "--n-max",
                "5",
                "--out",
                str(tmp_path / "out"),
            ]
        )
        == 0
    )
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted(FILES.values())
    assert (tmp_path / "out" / "cost_curve.csv").read_text() == csv_text(res.cost_curve)


def test_analysis_settings_are_typed_errors(effort_study):
    with pytest.raises(SettingsError, match="n must be at least 1"):
        analyse(effort_study, n_max=0)
    with pytest.raises(SettingsError, match="source must be one of"):
        analyse(effort_study, loss_source="median")
