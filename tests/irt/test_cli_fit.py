"""``python -m lib fit`` as researchers script it: files, columns and errors."""

import json
import os
import subprocess
import sys

import pandas as pd
import pytest

from lib.cli import EXIT_INPUT, EXIT_NOT_CONVERGED, main
from lib.io.paths import ROOT


@pytest.fixture
def votes_csv(tmp_path):
    rows = []
    for p in range(12):
        for s1, s2, win in [("alpha", "beta", "B"), ("alpha", "gamma", "B"), ("beta", "gamma", "tie")]:
            for r in range(3):
                choice = win if (p + r) % 4 else "A"
                rows.append({"item": f"q{p}", "left": s1, "right": s2, "rater": f"r{r}", "vote": choice})
    path = tmp_path / "votes.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_fit_writes_the_documented_files_and_columns(votes_csv, tmp_path, monkeypatch):
    monkeypatch.setenv("EVAL_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "out"
    code = main(
        [
            "fit",
            "--input",
            str(votes_csv),
            "--format",
            "pairwise",
            "--columns",
            "prompt=item,system_a=left,system_b=right,annotator=rater,choice=vote",
            "--sampler",
            "map",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    ab = pd.read_csv(out / "abilities.csv")
    assert list(ab.columns) == [
        "comparison",
        "system_a",
        "system_b",
        "theta_mean",
        "theta_sd",
        "hdi_low",
        "hdi_high",
        "p_b_better",
        "contraction",
    ]
    # A MAP point has no probability: empty cells, not 0 or 1 from numerical noise.
    assert ab["p_b_better"].isna().all() and ab["contraction"].isna().all()
    assert set(ab["comparison"]) == {"beta vs alpha", "gamma vs alpha", "gamma vs beta"}
    # B won most votes in the first two pairs.
    assert (ab.set_index("comparison").loc[["beta vs alpha", "gamma vs alpha"], "theta_mean"] > 0).all()
    pr = pd.read_csv(out / "prompts.csv")
    assert list(pr.columns) == [
        "prompt_id",
        "alpha_mean",
        "alpha_sd",
        "alpha_hdi_low",
        "alpha_hdi_high",
        "n_comparisons",
        "item_total_corr",
        "group",
        "alpha_contraction",
        "b_contraction",
    ]
    groups = pd.read_csv(out / "groups.csv")
    assert list(groups.columns) == ["prompt_id", "group"] and len(groups) == 12

    def no_nan(constant):
        raise AssertionError(f"not JSON: {constant}")

    diag = json.loads((out / "diagnostics.json").read_text(), parse_constant=no_nan)
    assert diag["rhat_max"] is None
    assert {"sampler", "chains", "draws", "rhat_max", "ess_bulk_min", "divergences", "wall_s"} <= set(diag)
    assert diag["sampler"] == "map"
    assert (out / "posterior.nc").stat().st_size > 0


def test_fit_error_exits_2_with_file_and_column(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("prompt,system_a,system_b,annotator,choice\np1,x,y,r1,C\n")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "lib",
            "fit",
            "--input",
            str(bad),
            "--format",
            "pairwise",
            "--sampler",
            "map",
            "--out",
            str(tmp_path / "o"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 2
    assert "bad.csv" in proc.stderr and "'choice'" in proc.stderr and "Traceback" not in proc.stderr


def run_cli(tmp_path, csv_text: str, *extra: str) -> subprocess.CompletedProcess:
    path = tmp_path / "votes.csv"
    path.write_text(csv_text)
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "lib",
            "fit",
            "--input",
            str(path),
            "--format",
            "pairwise",
            "--sampler",
            "map",
            "--out",
            str(tmp_path / "o"),
            *extra,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "EVAL_CACHE_DIR": str(tmp_path / "cache")},
    )


def test_a_degenerate_design_exits_2_with_the_reason(tmp_path):
    rows = "".join(f"p{p},x,y,r1,tie\n" for p in range(4))
    proc = run_cli(tmp_path, "prompt,system_a,system_b,annotator,choice\n" + rows)
    assert proc.returncode == 2
    assert "tie" in proc.stderr and "Traceback" not in proc.stderr
    assert not any((tmp_path / "o").iterdir())


def test_a_nul_byte_in_a_prompt_id_exits_2_before_any_file(tmp_path, votes_csv):
    df = pd.read_csv(votes_csv)
    df.loc[df["item"] == "q3", "item"] = "q\x003"
    proc = run_cli(
        tmp_path,
        df.rename(
            columns={"item": "prompt", "left": "system_a", "right": "system_b", "rater": "annotator", "vote": "choice"}
        ).to_csv(index=False),
    )
    assert proc.returncode == 2, proc.stderr
    assert "NUL" in proc.stderr and "q\\x003" in proc.stderr and "Traceback" not in proc.stderr
    assert not any((tmp_path / "o").iterdir())


def test_a_folder_that_is_not_empty_is_refused_before_reading(tmp_path):
    (tmp_path / "o").mkdir()
    (tmp_path / "o" / "abilities.csv").write_text("mine")
    proc = run_cli(tmp_path, "not,a,valid,file\n")
    assert proc.returncode == 2 and "not empty" in proc.stderr
    assert (tmp_path / "o" / "abilities.csv").read_text() == "mine"


@pytest.mark.parametrize("command", ["fit", "rank"])
def test_help_documents_the_exit_status_of_a_fit_that_did_not_converge(command, capsys):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    shown = " ".join(capsys.readouterr().out.split())  # argparse wraps the epilog
    assert f"Exit status: 0 done; {EXIT_INPUT} refused input" in shown
    assert f"{EXIT_NOT_CONVERGED} the fit ran but did not converge" in shown
