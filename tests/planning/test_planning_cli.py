"""``python -m lib plan``: the files it writes, the numbers (the same as lib's plan without the
engine), a pilot as input, and the messages of bad settings (before anything is computed)."""

from __future__ import annotations

import pandas as pd
import pytest

from lib.cli import main
from lib.planning.design import Assumptions
from lib.planning.nuts import NUTS_COLUMNS
from lib.planning.power import CALIBRATION_COLUMNS, COLUMNS, PAIR_COLUMNS, RANKING_COLUMNS, plan

TINY = [
    "--prompts",
    "5,10",
    "--annotators",
    "1,2",
    "--replicates",
    "6",
    "--analyses",
    "sign_test,t_test",
    "--seed",
    "3",
]


@pytest.fixture(autouse=True)
def own_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("EVAL_CACHE_DIR", str(tmp_path / "cache"))


def test_plan_writes_power_and_cheapest_with_the_numbers_of_lib(tmp_path, monkeypatch, capsys):
    out = tmp_path / "out"
    assert (
        main(
            [
                "plan",
                "--systems",
                "3",
                "--effect",
                "0.6",
                *TINY,
                "--target-power",
                "0.5",
                "--seconds-per-judgment",
                "20",
                "--cost-per-hour",
                "18",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out
    assert "[100%] 48 of 48 simulated studies" in printed  # 2 x 2 x 2 design sizes x 6 studies
    power = pd.read_csv(out / "power.csv")
    assert list(power.columns) == COLUMNS and len(power) == 16
    from lib.commands.plan import designs

    # the embedded Dask cluster gives the numbers of a plan run here, one study after another
    monkeypatch.setenv("EVAL_CACHE_DIR", str(tmp_path / "other_cache"))
    here = plan(
        Assumptions(n_systems=3, effect=0.6),
        designs([5, 10], [1, 2], ["random", "top_alpha"], ["sign_test", "t_test"]),
        replicates=6,
        seed=3,
        seconds_per_judgment=20,
        cost_per_hour=18,
    )
    pd.testing.assert_frame_equal(power, here[COLUMNS], check_dtype=False, check_exact=False, rtol=1e-12)
    ranking = pd.read_csv(out / "ranking.csv")
    assert list(ranking.columns) == RANKING_COLUMNS
    pd.testing.assert_frame_equal(ranking, here[RANKING_COLUMNS], check_dtype=False, check_exact=False, rtol=1e-12)
    assert not (out / "nuts_check.csv").exists()  # not asked
    calibration = pd.read_csv(out / "calibration.csv")  # every analysis: the threshold that holds 5%
    assert list(calibration.columns) == CALIBRATION_COLUMNS and len(calibration) == 16
    # cost: 3 comparisons x prompts x annotators judgments at 20 s and 18 per hour
    row = power.query("prompts == 10 and annotators == 2").iloc[0]
    assert row["judgments"] == 60 and row["hours"] == pytest.approx(60 * 20 / 3600)
    assert row["cost"] == pytest.approx(row["hours"] * 18)
    best = pd.read_csv(out / "cheapest.csv")
    assert list(best[["strategy", "analysis"]].itertuples(index=False, name=None)) == [
        ("random", "sign_test"),
        ("random", "t_test"),
        ("top_alpha", "sign_test"),
        ("top_alpha", "t_test"),
    ]
    for r in best[best["reached"]].itertuples():  # at the nominal level: every analysis is valid at some design
        same = power[(power["strategy"] == r.strategy) & (power["analysis"] == r.analysis) & (power["power"] >= 0.5)]
        assert r.cost == same[same["valid"]]["cost"].min() and r.power >= 0.5 and pd.isna(r.critical_z)


def test_plan_reports_grm_maps_threshold_and_checks_it_against_nuts(tmp_path, capsys, monkeypatch):
    """The NUTS fits themselves are tested in test_nuts_check.py; here, what the command asks and writes."""
    import lib.planning.nuts

    asked = []

    def fake_nuts_check(assumptions, design, replicates, *, seed, settings, analyses, engine, progress):
        asked.append(
            (
                design.prompts,
                design.annotators,
                design.strategy,
                replicates,
                seed,
                settings.draws,
                settings.tune,
                analyses,
                engine,
            )
        )  # no --scheduler: the fits run in this process
        progress(1, 1)
        return pd.DataFrame([dict.fromkeys(NUTS_COLUMNS, 0.5)] * 3).assign(analysis="grm_map", agree=True)

    monkeypatch.setattr(lib.planning.nuts, "nuts_check", fake_nuts_check)
    out = tmp_path / "out"
    assert (
        main(
            [
                "plan",
                "--systems",
                "3",
                "--effect",
                "0.8",
                "--prompts",
                "6",
                "--annotators",
                "2",
                "--strategies",
                "random",
                "--replicates",
                "6",
                "--analyses",
                "grm_map,sign_test",
                "--seed",
                "4",
                "--nuts-check",
                "1",
                "--nuts-draws",
                "100",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    assert asked == [(6, 2, "random", 1, 4, 100, 100, ("grm_map",), None)]
    printed = capsys.readouterr().out
    assert "NUTS check: " in printed and "1 of 1 NUTS fits" in printed
    assert list(pd.read_csv(out / "power.csv").columns) == COLUMNS
    calibration = pd.read_csv(out / "calibration.csv")
    assert list(calibration.columns) == CALIBRATION_COLUMNS
    assert list(calibration["analysis"]) == ["grm_map", "sign_test"]
    assert calibration["critical_z"].iloc[0] == pytest.approx(1.959964 * calibration["calibration_factor"].iloc[0])
    nuts = pd.read_csv(out / "nuts_check.csv")
    assert list(nuts.columns) == ["prompts", "annotators", "strategy", *NUTS_COLUMNS]
    assert len(nuts) == 3 and (nuts["analysis"] == "grm_map").all() and (nuts["prompts"] == 6).all()


def test_plan_from_a_pilot_file(tmp_path, capsys):
    """A pilot's comparisons and prompt bank (its MAP fit) replace --systems."""
    from lib.judgments.datasets import DATASETS, load_table
    from lib.judgments.formats import read_ratings

    ratings = read_ratings(load_table("hanna_means"), DATASETS["hanna_means"].columns, file="hanna")
    keep = ratings["system"].isin(sorted(ratings["system"].unique())[:3]) & ratings["criterion"].eq("Relevance")
    ratings.loc[keep, ["prompt_id", "system", "criterion", "score"]].to_csv(tmp_path / "pilot.csv", index=False)
    assert (
        main(
            [
                "plan",
                "--input",
                str(tmp_path / "pilot.csv"),
                "--format",
                "ratings",
                "--no-merge",
                "--prompts",
                "10",
                "--annotators",
                "1",
                "--replicates",
                "4",
                "--analyses",
                "sign_test",
                "--out",
                str(tmp_path / "out"),
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out
    assert "pilot: 3 comparisons x 96 prompts" in printed and "each one cell" in printed
    assert "power is read on" in printed and "power is the smallest of theirs" in printed
    assert "statistics of the pilot agree with data sets simulated from its fit" in printed
    assert (
        main(
            [
                "plan",
                "--input",
                str(tmp_path / "pilot.csv"),
                "--format",
                "ratings",
                "--prompts",
                "97",
                "--out",
                str(tmp_path / "too_many"),
            ]
        )
        == 2
    )
    assert "97 prompts asked but the prompt bank holds 96" in capsys.readouterr().err
    power = pd.read_csv(tmp_path / "out" / "power.csv")
    assert list(power["strategy"]) == ["random", "top_alpha"] and (power["judgments"] == 3 * 10).all()
    from lib.planning.check import CHECK_COLUMNS

    assert list(pd.read_csv(tmp_path / "out" / "simulator_check.csv").columns) == CHECK_COLUMNS
    pairs = pd.read_csv(tmp_path / "out" / "power_pairs.csv")
    assert list(pairs.columns) == PAIR_COLUMNS and (pairs["effect"].abs() >= 0.3).all()
    # power.csv's power is the weakest pair's
    weakest = pairs.groupby(["strategy", "analysis"], sort=False)["power"].min().to_numpy()
    assert list(power["power"]) == list(weakest)


@pytest.mark.parametrize(
    "args, message",
    [
        (["--systems", "3", "--input", "x.csv", "--format", "ratings"], "not both"),
        (["--input", "x.csv"], "--input and --format go together"),
        (["--prompts", "5,x"], "--prompts must be whole numbers separated by commas (got '5,x')"),
        (["--annotators", "0"], "--annotators must list whole numbers of at least 1 (got '0')"),
        (["--strategies", "random,best"], "--strategies: unknown 'best' (choose from random, top_alpha)"),
        (["--target-power", "1.5"], "between 0 and 1"),
        (["--analyses", "anova"], "--analyses: unknown 'anova'"),
        (["--analyses", "t_test", "--nuts-check", "2"], "--nuts-check compares the GRM analyses"),
        (["--nuts-check", "-1"], "--nuts-check"),
        (["--nuts-check", "1", "--nuts-draws", "0"], "--nuts-draws"),
    ],
)
def test_plan_bad_settings_fail_before_computing(args, message, tmp_path, capsys):
    out = tmp_path / "out"
    try:
        code = main(["plan", *args, "--out", str(out)])
    except SystemExit as stop:  # the parser's own checks (argument types)
        code = stop.code
    assert code == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


def test_a_null_design_checks_each_tests_size(tmp_path, capsys):
    """Issue 31: ``plan --effect 0`` was refused, yet a null design is how a user checks a test's size: power is
    then the false-detection rate (two systems, normal data: the t-test's 5% within 3 binomial SEs)."""
    out = tmp_path / "out"
    args = ["plan", "--systems", "2", "--effect", "0", "--response", "normal", "--prompts", "20", "--annotators", "1"]
    args += ["--strategies", "random", "--analyses", "t_test", "--replicates", "300", "--out", str(out)]
    assert main(args) == 0
    assert "effect 0: no difference to detect" in capsys.readouterr().out
    row = pd.read_csv(out / "power.csv").iloc[0]
    assert abs(row["power"] - 0.05) <= 3 * (0.05 * 0.95 / 300) ** 0.5 and row["valid"]
