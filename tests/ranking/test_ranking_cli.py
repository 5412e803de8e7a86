"""``python -m lib rank``: exact file and column names, the BT note for ratings, errors before computing.

Laplace fits (seconds): the command's outputs do not depend on the sampler's speed.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest

import lib.cli
from lib.judgments.datasets import DATASETS
from lib.ranking.marginal import NODES, NOTE

LEADERBOARD = [
    "system",
    "skill_mean",
    "skill_sd",
    "skill_low",
    "skill_high",
    "rank_mean",
    "rank_low",
    "rank_high",
    "p_best",
    "n_votes",
    "bt_rating",
    "bt_low",
    "bt_high",
]


@pytest.fixture(autouse=True)
def own_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("EVAL_CACHE_DIR", str(tmp_path / "cache"))


def bundled_args(key: str) -> list[str]:
    ds = DATASETS[key]
    columns = ",".join(f"{role}={name}" for role, name in ds.columns.items())
    return ["rank", "--input", str(ds.path), "--format", ds.fmt, "--columns", columns, "--sampler", "laplace"]


def test_rank_writes_exactly_the_documented_files_and_columns(tmp_path, capsys):
    out = tmp_path / "out"
    assert lib.cli.main([*bundled_args("pandalm_pairwise"), "--next", "5", "--out", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == [
        "diagnostics.json",
        "leaderboard.csv",
        "next_batch.csv",
        "win_matrix.csv",
    ]
    board = pd.read_csv(out / "leaderboard.csv")
    assert list(board.columns[: len(LEADERBOARD)]) == LEADERBOARD
    assert set(board.columns[len(LEADERBOARD) :]) <= {"p_top_k", "component"}
    assert len(board) == 5 and board["system"].is_unique
    assert board["skill_low"].le(board["skill_mean"]).all() and board["skill_mean"].le(board["skill_high"]).all()
    assert board["p_best"].sum() == pytest.approx(1.0, abs=1e-9)
    assert board["bt_rating"].notna().all()
    assert board["rank_low"].between(1, 5).all() and board["rank_low"].le(board["rank_high"]).all()
    assert list(board["system"]) == list(board.sort_values("rank_mean")["system"])  # best first
    wins = pd.read_csv(out / "win_matrix.csv")
    assert list(wins.columns) == ["system_a", "system_b", "p_b_better"]
    assert len(wins) == 5 * 4 // 2 and wins["p_b_better"].between(0, 1).all()
    nxt = pd.read_csv(out / "next_batch.csv")
    assert list(nxt.columns) == ["system_a", "system_b", "prompt_id", "score", "relative_score"] and len(nxt) == 5
    diag = json.loads((out / "diagnostics.json").read_text())
    assert diag["sampler"] == "laplace"
    assert diag["route"] == NOTE.format(nodes=NODES) and diag["route"] not in diag["warnings"]
    assert "wrote" in capsys.readouterr().out


def test_a_default_votes_fit_of_clean_votes_says_its_route_with_the_method_and_warns_nothing(tmp_path, capsys):
    """The votes' quadrature over alpha_j informs: it is said with the sampler ("fitted with" and diagnostics.json's
    ``route``), not among the warnings, which hold only the Laplace sampler's own caveat on independent votes."""
    from lib.inference.settings import SAMPLERS
    from lib.ranking.fit import DEFAULT_SAMPLER
    from lib.ranking.simulate import simulate_arena

    path, out = tmp_path / "votes.csv", tmp_path / "out"
    simulate_arena(4, 20, 200, seed=1)[0].to_csv(path, index=False)
    columns = "prompt=prompt_id,system_a=system_a,system_b=system_b,annotator=annotator_id,choice=winner"
    args = ["rank", "--input", str(path), "--format", "pairwise", "--columns", columns, "--out", str(out)]
    assert lib.cli.main(args) == 0
    diag, said, method = (
        json.loads((out / "diagnostics.json").read_text()),
        capsys.readouterr(),
        NOTE.format(nodes=NODES),
    )
    assert diag["route"] == method and diag["warnings"] == [SAMPLERS[DEFAULT_SAMPLER].note]
    assert f"fitted with {DEFAULT_SAMPLER} (default sampler: {DEFAULT_SAMPLER}) in " in said.out
    assert f" s: {method}\n" in said.out and method not in said.err


def test_rank_on_ratings_leaves_bradley_terry_empty_and_says_so(tmp_path, capsys):
    out = tmp_path / "out"
    assert lib.cli.main([*bundled_args("hanna_means"), "--criterion", "Relevance", "--out", str(out)]) == 0
    board = pd.read_csv(out / "leaderboard.csv")
    assert list(board.columns[: len(LEADERBOARD)]) == LEADERBOARD and len(board) == 11
    assert board[["bt_rating", "bt_low", "bt_high"]].isna().all().all()
    said = capsys.readouterr()
    assert "Bradley–Terry baseline needs pairwise votes" in said.out
    assert "Null calibration of the ratings likelihood" in said.out  # (issue 16), said with every fit
    assert "warning: One score a (prompt, system) cell" in said.err  # HANNA's means: alpha_j = 1
    # HANNA's means name no annotator: the severities are not modelled by default, and the command says why
    assert "note: Annotator severity is not modelled: the scores name no annotator" in said.out
    assert not (out / "annotators.csv").exists()


def test_rank_refuses_a_non_empty_out_before_computing(tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    (out / "mine.txt").write_text("keep")
    assert lib.cli.main([*bundled_args("pandalm_pairwise"), "--input", "/no/such/file.csv", "--out", str(out)]) == 2
    assert "not empty" in capsys.readouterr().err  # the folder is checked before the (missing) input is read
    assert [p.name for p in out.iterdir()] == ["mine.txt"]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--baseline", "no-such-system"], "no-such-system"),
        (["--next", "-1"], "--next"),
        (["--likelihood", "ratings"], "ratings likelihood"),
        (["--annotator-effect"], "--annotator-effect needs scores of the ratings format"),
    ],
)
def test_rank_reports_bad_settings_with_exit_2(tmp_path, capsys, extra, message):
    out = tmp_path / "out"
    try:
        code = lib.cli.main([*bundled_args("pandalm_pairwise"), *extra, "--out", str(out)])
    except SystemExit as stop:  # the parser's own type checks (--next -1)
        code = stop.code
    assert code == 2
    assert message in capsys.readouterr().err
    assert not out.exists() or not any(out.glob("*.csv"))


def arena_file(tmp_path, position_bias: float = 0.0):
    """Simulated arena votes (6 systems) as a pairwise CSV with the shown-first system in ``left``."""
    from lib.ranking.simulate import simulate_arena

    votes, truth = simulate_arena(6, 40, 600, position_bias=position_bias, seed=3)
    table = pd.DataFrame(
        {
            "prompt": votes["prompt_id"],
            "system_a": votes["system_a"],
            "system_b": votes["system_b"],
            "annotator": votes["annotator_id"],
            "choice": votes["winner"].str.upper(),
            "left": votes.get("first", ""),
        }
    )
    path = tmp_path / "arena.csv"
    table.to_csv(path, index=False)
    return path, truth


def test_rank_estimates_the_position_bias_from_the_position_column(tmp_path, capsys):
    path, _ = arena_file(tmp_path, position_bias=1.0)
    out = tmp_path / "out"
    code = lib.cli.main(
        [
            "rank",
            "--input",
            str(path),
            "--format",
            "pairwise",
            "--sampler",
            "laplace",
            "--position-column",
            "left",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("position bias gamma"))
    low, high = (float(v) for v in line.split("95% interval ")[1].split(" to "))
    assert low > 0 and high < 2.0  # the planted gamma = 1 reaches the model: "no bias" is excluded
    # (recovery within the interval is lib.ranking's own test)
    # without --next: no next_batch.csv
    assert sorted(p.name for p in out.iterdir()) == ["diagnostics.json", "leaderboard.csv", "win_matrix.csv"]


def test_rank_names_file_row_and_column_of_a_bad_position_value(tmp_path, capsys):
    path, _ = arena_file(tmp_path, position_bias=1.0)
    table = pd.read_csv(path)
    table.loc[4, "left"] = "nobody"
    table.to_csv(path, index=False)
    code = lib.cli.main(
        [
            "rank",
            "--input",
            str(path),
            "--format",
            "pairwise",
            "--sampler",
            "laplace",
            "--position-column",
            "left",
            "--out",
            str(tmp_path / "out"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2
    assert "arena.csv" in err and "row 5" in err and "'left'" in err and "nobody" in err


def test_rank_refuses_a_position_column_for_rankings(tmp_path, capsys):
    args = [*bundled_args("lamp_rankings"), "--position-column", "rank", "--out", str(tmp_path / "out")]
    assert lib.cli.main(args) == 2
    assert "needs pairwise votes" in capsys.readouterr().err


def test_rank_says_why_bradley_terry_is_empty_when_a_system_never_wins(tmp_path, capsys):
    rows = [
        {
            "prompt": f"q{p}",
            "system_a": a,
            "system_b": b,
            "annotator": f"r{r}",
            "choice": "A" if b == "never" else ("B" if (p + r) % 3 else "A"),
        }
        for p in range(10)
        for r in range(2)
        for a, b in [("x", "y"), ("x", "never"), ("y", "never")]
    ]
    path = tmp_path / "votes.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    out = tmp_path / "out"
    assert (
        lib.cli.main(["rank", "--input", str(path), "--format", "pairwise", "--sampler", "laplace", "--out", str(out)])
        == 0
    )
    board = pd.read_csv(out / "leaderboard.csv")
    assert board[["bt_rating", "bt_low", "bt_high"]].isna().all().all()
    assert board["system"].iloc[-1] == "never"  # the IRT leaderboard still ranks it, last
    assert "No Bradley–Terry baseline" in capsys.readouterr().out


def test_rank_writes_annotators_csv_with_the_annotator_effect(tmp_path, capsys):
    from lib.ranking.simulate import simulate_ratings

    scores, truth = simulate_ratings(4, 10, 5, raters_per_cell=2, seed=4)
    path = tmp_path / "scores.csv"
    scores.rename(columns={"prompt_id": "prompt", "annotator_id": "annotator"}).to_csv(path, index=False)
    out = tmp_path / "out"
    # Laplace falls back to NUTS for the severities (lib.ranking.fit.nuts_reason), at the command's defaults:
    # to the target ESS (2 chains x 200 draws did not converge: exit 3, every estimate left empty)
    args = ["rank", "--input", str(path), "--format", "ratings", "--sampler", "laplace", "--annotator-effect"]
    assert lib.cli.main([*args, "--out", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == [
        "annotators.csv",
        "diagnostics.json",
        "leaderboard.csv",
        "win_matrix.csv",
    ]
    severity = pd.read_csv(out / "annotators.csv")
    assert list(severity.columns) == ["annotator_id", "severity_mean", "severity_low", "severity_high", "n_scores"]
    assert sorted(severity["annotator_id"]) == truth["annotators"] and severity["n_scores"].sum() == len(scores)
    assert severity["severity_mean"].is_monotonic_decreasing  # most severe first
    assert list(pd.read_csv(out / "leaderboard.csv").columns[: len(LEADERBOARD)]) == LEADERBOARD
    captured = capsys.readouterr()  # fitted by NUTS, which reports sigma_zeta, and the user is told why
    assert "annotator severity: sigma_zeta" in captured.out and "fitted with NUTS (numpyro) instead" in captured.err
