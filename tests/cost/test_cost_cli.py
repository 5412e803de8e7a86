"""``python -m lib cost``: the tables written, options, errors, --out checks and safe CSV."""

from __future__ import annotations

import pandas as pd
import pytest
from cost_studies import EXAMPLE

from lib.cli import main
from lib.cost.analysis import analyse
from lib.cost.costs import Weights, parse_weights
from lib.cost.schema import read_study
from lib.judgments.formats import read_csv


def _cli(argv):
    return main(["cost", *argv])


def test_cli_writes_the_four_tables(tmp_path):
    csv_path = tmp_path / "my study.csv"
    renamed = pd.read_csv(EXAMPLE).rename(columns={"usefulness": "likert_s", "condition": "arm"})
    renamed.to_csv(csv_path, index=False)
    out = tmp_path / "out"
    assert (
        _cli(
            [
                "--input",
                str(csv_path),
                "--columns",
                "usefulness=likert_s,condition=arm",
                "--with-label",
                "with_model",
                "--weights",
                "1,0.5,1,1",
                "--n-max",
                "5",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    loss = pd.read_csv(out / "loss_table.csv")
    assert list(loss.columns) == ["task", "condition", "mean_loss", "n", "test", "p_value", "p_holm"]
    assert list(pd.read_csv(out / "effort_medians.csv").columns) == ["task", "condition", "component", "median_s"]
    curve = pd.read_csv(out / "cost_curve.csv")
    assert list(curve.columns) == ["task", "n", "c_h", "c_hm"] and curve.n.max() == 5
    assert list(pd.read_csv(out / "spearman.csv").columns) == ["var_x", "var_y", "rho", "p_value", "n"]
    study = read_study(read_csv(EXAMPLE, "x"), file="x")
    want = analyse(study, weights=Weights(1, 0.5, 1, 1), n_max=5)
    assert loss.mean_loss.to_numpy() == pytest.approx(want.loss_table.mean_loss.to_numpy())
    assert curve.c_h.to_numpy() == pytest.approx(want.cost_curve.c_h.to_numpy())


def test_cli_bad_input_exits_2_with_the_message(tmp_path, capsys):
    assert _cli(["--input", str(tmp_path / "missing.csv"), "--out", str(tmp_path)]) == 2
    assert "no such file" in capsys.readouterr().err
    assert _cli(["--input", str(EXAMPLE), "--weights", "1,2", "--out", str(tmp_path)]) == 2
    assert "--weights" in capsys.readouterr().err


def test_default_weight_is_one_constant_in_code_and_help():
    from lib.cli import build_parser
    from lib.commands.cost import DEFAULT_WEIGHT as HELP_WEIGHT
    from lib.cost.costs import DEFAULT_WEIGHT

    assert DEFAULT_WEIGHT == HELP_WEIGHT == 0.01  # 100 s of effort cost as much as a useless answer
    assert Weights() == Weights(*[DEFAULT_WEIGHT] * 4) == parse_weights(None)
    sub = next(a for a in build_parser()._actions if a.dest == "command").choices["cost"]
    text = " ".join(sub.format_help().split())
    assert "default 0.01,0.01,0.01,0.01" in text and "1,1,1,1" not in text


def test_cli_validation_zero_out_checks_and_safe_csv(tmp_path, capsys):
    """Issue 9 items 2 and 7 for ``cost``: formula-like task names are neutralised in every CSV, a
    bad --out fails before the input is read, a used one needs --overwrite."""
    df = pd.read_csv(EXAMPLE).drop(columns="validate_time_s")
    df["task"] = "=" + df["task"]
    src = tmp_path / "study.csv"
    df.to_csv(src, index=False)
    out = tmp_path / "out"
    assert _cli(["--input", str(src), "--out", str(out)]) == 0
    assert pd.read_csv(out / "cost_terms.csv").setup.isna().all()
    assert "V_H not measured" in capsys.readouterr().err
    assert _cli(["--input", str(src), "--out", str(out)]) == 2
    assert "not empty" in capsys.readouterr().err
    assert _cli(["--input", str(src), "--validation-zero", "--out", str(out), "--overwrite"]) == 0
    terms = pd.read_csv(out / "cost_terms.csv")
    assert terms.setup.notna().all() and (terms.V_H == 0).all()
    for name in ("loss_table.csv", "cost_terms.csv", "cost_curve.csv", "effort_medians.csv"):
        assert pd.read_csv(out / name).task.str.startswith("'=").all(), name
    a_file = tmp_path / "taken.txt"
    a_file.write_text("x")
    assert _cli(["--input", str(tmp_path / "missing.csv"), "--out", str(a_file)]) == 2
    assert "taken.txt: --out names a file" in capsys.readouterr().err
