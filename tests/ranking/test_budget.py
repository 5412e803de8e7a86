"""The leaderboard's time estimate (issue 29, item 5): within a factor of 2 of the phases recorded on runs of
``python -m lib rank`` (``bench/bench_rank_cost.py``), said to assume an idle machine, and revised at the
pace the phases ran as they finish."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import lib.cli
from lib.inference.timings import PhaseTimer
from lib.ranking.budget import PACE_PRIOR_S, estimate_cost, revising

RECORDED = Path(__file__).with_name("rank_phase_times.json")
"""Runs of ``bench/bench_rank_cost.py --record``: each case's sizes and the seconds of each phase."""
BUSY = Path(__file__).with_name("rank_phase_times_busy.json")
"""Runs of it on a busy machine (load average 11-19, 2026-11-28, before the draws and the reading were made faster
that day; their routes' phases up to the search unchanged since): what the time to go is revised from."""


def recorded(path: Path = RECORDED) -> list[dict]:
    return json.loads(path.read_text())


def fit_seconds(timings: dict[str, float]) -> float:
    """The measured seconds the estimate is of: every phase but reading the file (done before it is made)."""
    return sum(seconds for name, seconds in timings.items() if name != "read")


@pytest.mark.parametrize("run", recorded(), ids=lambda run: run["case"])
def test_the_estimate_is_within_a_factor_of_two_of_a_recorded_run_on_an_idle_machine(run):
    """Recorded on a loaded machine, each phase is taken at the pace of an idle one: scaled by the run's CPU /
    wall seconds (the share of a core it got; about 1 on an idle machine, ``bench/bench_rank_cost.py``)."""
    cost = estimate_cost(**run["sizes"])
    measured = fit_seconds(run["idle_equivalent"])
    assert 0.5 <= cost.seconds / measured <= 2.0, (cost.phases, run["idle_equivalent"])


def test_the_time_to_go_is_revised_at_the_pace_the_phases_ran():
    cost = estimate_cost(5, 999, 2997, sampler="laplace", draws=1000, likelihood="votes")
    phases = list(cost.phases)
    assert cost.remaining({}) == cost.seconds
    upto = phases.index("compile")
    at_pace_one = {name: cost.phases[name] for name in phases[: upto + 1]}
    assert cost.remaining(at_pace_one) == pytest.approx(sum(cost.phases[name] for name in phases[upto + 1 :]))
    slow = {name: 3 * seconds for name, seconds in at_pace_one.items()}  # a machine three times slower
    before = sum(at_pace_one.values())
    pace = (3 * before + PACE_PRIOR_S) / (before + PACE_PRIOR_S)
    assert cost.remaining(slow) == pytest.approx(pace * sum(cost.phases[name] for name in phases[upto + 1 :]))
    half = at_pace_one | {"optimise": cost.phases["optimise"] / 2}  # a phase still running (its first part done)
    later = sum(cost.phases[name] for name in phases[upto + 1 :])
    assert cost.remaining(half) == pytest.approx(later - half["optimise"])
    assert cost.remaining(dict(cost.phases)) == 0.0


def paced(run: dict) -> bool:
    """Whether the run was on a loaded machine and its phases up to the search are estimated at PACE_PRIOR_S or more
    (shorter ones leave the pace near 1 by design, :meth:`lib.ranking.budget.CostEstimate.remaining`)."""
    cost = estimate_cost(**run["sizes"])
    up_to_search = list(cost.phases)[: list(cost.phases).index("optimise") + 1]
    return run["load"][0] > 4 and sum(cost.phases[name] for name in up_to_search) >= PACE_PRIOR_S


@pytest.mark.parametrize("run", [r for r in recorded(BUSY) if paced(r)], ids=lambda run: run["case"])
def test_on_a_busy_machine_the_revised_time_to_go_after_the_search_is_within_a_factor_of_two(run):
    """The recorded runs on a loaded machine took several times the idle estimate; once the phases up to the
    search have run, the time still to go, revised at their pace, is within a factor of 2 of what the rest took
    (where those phases are long enough to set it, :func:`paced`: not HANNA's ratings by quadrature, 0.4 s)."""
    cost = estimate_cost(**run["sizes"])
    timings = run["measured"]
    order = [name for name in cost.phases if name in timings]
    done = order[: order.index("optimise") + 1]
    rest = sum(timings[name] for name in order[len(done) :])
    assert fit_seconds(timings) > 2 * cost.seconds  # the idle estimate alone is off by more than 2
    assert 0.5 <= cost.remaining({name: timings[name] for name in done}) / rest <= 2.0


def test_the_progress_of_a_fit_says_the_time_to_go_as_its_phases_finish():
    # an arena of 100,000 votes: its search (about 1 s) moves the time to go by more than the 0.1 s it is said in
    cost = estimate_cost(50, 19863, 100_000, sampler="laplace", draws=1000, likelihood="votes")
    timer, said = PhaseTimer(), []
    report = revising(lambda fraction, message: said.append(message), cost, timer)
    report(0.01, "building the model")
    for name in ("checks", "cache read", "model build", "compile"):
        timer.add(name, 2 * cost.phases[name])  # a machine twice slower, as the sampler's thread records it
    report(0.1, "finding the mode (L-BFGS)")
    timer.add("optimise", 2 * cost.phases["optimise"])
    report(0.7, "Hessian at the mode")
    report(1.0, "done in 30.0 s")
    to_go = [float(re.search(r"about ([\d.]+) s to go$", message).group(1)) for message in said[:3]]
    assert to_go[0] == pytest.approx(cost.seconds, abs=0.05)  # nothing has run: the idle estimate
    assert to_go[1] > cost.remaining(dict.fromkeys(("checks", "cache read", "model build", "compile"), 0.0))
    assert to_go[2] == pytest.approx(cost.remaining(timer.snapshot()), abs=0.05) and to_go[2] < to_go[1]
    assert said[3] == "done in 30.0 s"


def test_rank_says_its_estimate_assumes_an_idle_machine(tmp_path, capsys):
    votes = "prompt,system_a,system_b,annotator,choice\n" + "".join(f"q{p},x,y,r,A\nq{p},y,z,r,B\n" for p in range(5))
    (tmp_path / "votes.csv").write_text(votes)
    args = ["rank", "--input", str(tmp_path / "votes.csv"), "--format", "pairwise", "--out", str(tmp_path / "out")]
    code = lib.cli.main([*args, "--max-minutes", "0.001"])  # refused after the estimate: no fit
    stdout = capsys.readouterr().out
    assert code == 2
    assert "estimated: about" in stdout
    assert "of memory on an idle machine (the time to go is revised as phases finish)" in stdout
