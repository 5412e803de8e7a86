"""Every fit says where its time went: ``diagnostics.json``'s ``timings`` of ``fit`` and ``rank``,
``--verbose`` prints them, and the Abilities and Leaderboard pages show them (issue 19 item 1). The pages
fit the data of the commands above them, whose compiled programs they reuse."""

from __future__ import annotations

import json
import time

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

import lib.cli
from lib.inference.timings import PHASES
from lib.inputs import analysis_input
from lib.io.paths import DATA_DIR, ROOT
from lib.ranking.simulate import simulate_arena

LAMP_ARGS = [
    "--input",
    str(DATA_DIR / "lamp_rankings/rankings_long.csv"),
    "--format",
    "ranking",
    "--columns",
    "prompt=item,system=condition,trial=instruction_id",
]


@pytest.fixture(autouse=True)
def fresh_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("EVAL_CACHE_DIR", str(tmp_path / "cache"))


def run_timed(argv: list[str]) -> float:
    """Run the command in this process; returns its wall time (s)."""
    started = time.perf_counter()
    assert lib.cli.main(argv) == 0
    return time.perf_counter() - started


def timing_problems(out, wall_s: float, expected: set[str], printed: str) -> list[str]:
    """What is wrong with the timings of ``out/diagnostics.json`` (empty: nothing): the expected phases and no
    unknown one, each >= 0, their sum within the wall time of the command; each is printed by ``--verbose``."""
    timings = json.loads((out / "diagnostics.json").read_text())["timings"]
    problems = [] if expected <= set(timings) <= set(PHASES) else [f"phases {sorted(timings)}"]
    problems += [f"{name} {seconds} s" for name, seconds in timings.items() if seconds < 0]
    problems += [] if sum(timings.values()) <= wall_s else [f"sum {sum(timings.values())} s > wall {wall_s} s"]
    problems += [] if "time per phase:" in printed else ["no 'time per phase:' printed"]
    return problems + [f"{name} not printed" for name in timings if f"  {name} " not in printed]


def test_fit_writes_and_prints_its_phases(tmp_path, capsys):
    out = tmp_path / "out"
    wall_s = run_timed(["fit", *LAMP_ARGS, "--sampler", "map", "--verbose", "--out", str(out)])
    expected = {"read", "checks", "optimise", "diagnostics", "read-outs"}
    assert timing_problems(out, wall_s, expected, capsys.readouterr().out) == []


def test_without_verbose_the_phases_are_written_not_printed(tmp_path, capsys):
    out = tmp_path / "out"
    run_timed(["fit", *LAMP_ARGS, "--sampler", "map", "--out", str(out)])
    assert json.loads((out / "diagnostics.json").read_text())["timings"]["read"] >= 0
    assert "time per phase" not in capsys.readouterr().out


def arena_votes() -> pd.DataFrame:
    """Simulated votes of 4 systems as a pairwise file's columns."""
    votes, _ = simulate_arena(4, 30, 300, seed=3)
    columns = {"prompt_id": "prompt", "annotator_id": "annotator", "winner": "choice"}
    return votes.rename(columns=columns).assign(choice=lambda t: t["choice"].str.upper())[
        ["prompt", "system_a", "system_b", "annotator", "choice"]
    ]


def test_rank_writes_and_prints_its_phases_bradley_terry_included(tmp_path, capsys):
    path = tmp_path / "votes.csv"
    arena_votes().to_csv(path, index=False)
    out = tmp_path / "out"
    argv = [
        "rank",
        "--input",
        str(path),
        "--format",
        "pairwise",
        "--sampler",
        "laplace",
        "--verbose",
        "--out",
        str(out),
    ]
    wall_s = run_timed(argv)
    expected = {"read", "checks", "model build", "compile", "optimise", "Hessian", "draws", "diagnostics"}
    expected |= {"Bradley–Terry baseline", "read-outs", "cache write"}
    assert timing_problems(out, wall_s, expected, capsys.readouterr().out) == []


def shown_timings(at: AppTest) -> pd.DataFrame:
    """The phases in the page's expander "Time per phase" (checked: known, >= 0, their total; shown in ms)."""
    assert not at.exception and not at.error
    table = next(e for e in at.expander if e.label == "Time per phase").table[0].value.reset_index()
    assert table["seconds"].str.fullmatch(r"\d+\.\d{3}").all(), table  # read as 0.001 s, not 1.270e-03
    table["seconds"] = table["seconds"].astype(float)
    phases = table[table["phase"] != "total"]
    assert set(phases["phase"]) <= set(PHASES) and (phases["seconds"] >= 0).all()
    # each shown value is rounded to the ms: the total within half a ms per phase of their sum
    total = table.loc[table["phase"] == "total", "seconds"].item()
    assert total == pytest.approx(phases["seconds"].sum(), abs=0.0005 * (len(phases) + 1))
    return phases


def test_the_abilities_page_shows_the_phases_of_its_fit():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180).run()
    at.switch_page("pages/abilities.py").run()
    at.selectbox(key="abil_sampler").set_value("map").run()
    at.button(key="abil_fit").click().run()
    assert {"checks", "optimise", "diagnostics"} <= set(shown_timings(at)["phase"])


def test_the_leaderboard_page_shows_the_phases_of_its_fit():
    at = AppTest.from_file(str(ROOT / "pages" / "leaderboard.py"), default_timeout=180)
    at.session_state["view_dataset"] = "upload"
    at.session_state["analysis_input"] = analysis_input(arena_votes(), "pairwise", file="votes.csv")
    at.run()
    assert {"checks", "draws", "Bradley–Terry baseline", "read-outs"} <= set(shown_timings(at)["phase"])
