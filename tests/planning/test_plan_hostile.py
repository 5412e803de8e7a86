"""Issue 17, the planner: assumptions out of range and plans too large are refused up front (exit 2, a
message naming the limit and what lifts it, promptly); a plan whose cluster is lost keeps the finished
design sizes, says so, and a rerun resumes from them with the numbers of an undisturbed run."""

from __future__ import annotations

import time

import pandas as pd
import pytest

import lib.cli
import lib.engine.cluster
from lib.cli import main
from lib.errors import PlanStopped, SettingsError
from lib.planning import power as power_module
from lib.planning.design import Assumptions, Design
from lib.planning.power import COLUMNS, PAIR_COLUMNS, iter_plan, plan_with_pairs


@pytest.fixture(autouse=True)
def _own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("EVAL_CACHE_DIR", str(tmp_path / "cache"))


def run(args: list[str], tmp_path) -> int:
    try:
        return main(["plan", *args, "--out", str(tmp_path / "out")])
    except SystemExit as stop:  # the parser's own type checks
        return stop.code


@pytest.mark.parametrize(
    "args, message",
    [
        (["--systems", "0"], "systems"),
        (["--systems", "1"], "systems"),
        (["--effect", "1e308"], "the effect (logits) must be between 0 and 10"),
        (["--effect", "1e6"], "the effect (logits) must be between 0 and 10"),
        (["--cost-per-hour", "1e308"], "cost per hour must be between 0 and 1e+06"),
        (["--seconds-per-judgment", "1e308"], "seconds per judgment must be between 0 and 86400"),
        (["--tie-rate", "1"], "the tie rate must be between 0 and 0.99"),
        (["--alpha-sd", "50"], "the SD of log alpha must be between 0 and 3"),
        (["--item-sd", "1e308"], "the SD of the prompt x comparison effect (logits) must be between 0 and 10"),
        (["--bank-size", "0"], "bank"),
        (["--pairs", "a:b"], "--pairs names pairs of a pilot's systems"),
        (["--pairs", "a"], "is not two system names joined by ':'"),
        (["--systems", "10000", "--prompts", "25"], "more than the limit of 5,000,000"),
        (["--annotators", "1000000000", "--prompts", "25"], "more than the limit of 5,000,000"),
        (["--replicates", "1000000000", "--prompts", "25"], "raise the limit (--max-minutes)"),
    ],
)
def test_the_planner_refuses_another_question_and_unbounded_work_up_front(args, message, tmp_path, capsys):
    """Before: --systems 0 planned 2 systems, --effect 1e308 reported power 0.875, cost 1e308 gave inf,
    --systems 10000 ran 5 minutes without a word, --annotators 1e9 died allocating 74.5 GiB."""
    start = time.perf_counter()
    assert run(args, tmp_path) == 2
    assert time.perf_counter() - start < 20
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_a_plan_refused_for_its_time_names_the_estimate():
    designs = [Design(200, 5, "random", "grm_map")]
    with pytest.raises(SettingsError, match=r"about [\d,]+ minutes on one core, more than the limit of 1 minutes"):
        list(iter_plan(Assumptions(n_systems=20, effect=0.3), designs, replicates=5000, max_minutes=1))


class LostCluster:
    """An engine whose workers die after ``keep`` studies: it yields those, then raises as
    :meth:`lib.engine.cluster.Engine.map` does when no worker is left."""

    def __init__(self, keep: int):
        self.keep = keep

    def map(self, fn, items, progress=None, batch=None):
        for index, item in enumerate(items):
            if index == self.keep:
                raise SettingsError("the Dask cluster has no worker left")
            yield index, fn(item)


ASSUMPTIONS = Assumptions(n_systems=3, effect=0.5)
DESIGNS = [Design(p, 1, "random", a) for p in (4, 6, 8) for a in ("t_test", "sign_test")]


def test_a_lost_cluster_keeps_the_finished_designs_and_a_rerun_resumes(monkeypatch, tmp_path):
    """Before: the scheduler killed mid-plan gave FutureCancelledError with 100 of 360 studies done and
    nothing kept."""
    undisturbed = plan_with_pairs(ASSUMPTIONS, DESIGNS, replicates=5, seed=1)
    monkeypatch.setenv("EVAL_CACHE_DIR", str(tmp_path / "fresh"))
    with pytest.raises(PlanStopped, match="1 of 3 design sizes had finished and are kept") as stopped:
        list(iter_plan(ASSUMPTIONS, DESIGNS, replicates=5, seed=1, engine=LostCluster(keep=7)))
    assert len(stopped.value.finished) == 1
    studies = []
    counting = power_module._replicate
    monkeypatch.setattr(power_module, "_replicate", lambda item: studies.append(item) or counting(item))
    resumed = plan_with_pairs(ASSUMPTIONS, DESIGNS, replicates=5, seed=1)
    assert len(studies) == 2 * 5  # only the two design sizes that had not finished
    pd.testing.assert_frame_equal(resumed[0], undisturbed[0])
    pd.testing.assert_frame_equal(resumed[1], undisturbed[1])


def test_the_command_writes_the_finished_designs_when_the_cluster_is_lost(monkeypatch, tmp_path, capsys):
    class Engine(LostCluster):
        def __init__(self, scheduler=None):
            super().__init__(keep=7)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    monkeypatch.setattr(lib.engine.cluster, "Engine", Engine)
    args = [
        "--systems",
        "3",
        "--effect",
        "0.5",
        "--prompts",
        "4,6,8",
        "--annotators",
        "1",
        "--strategies",
        "random",
        "--analyses",
        "t_test,sign_test",
        "--replicates",
        "5",
        "--seed",
        "1",
    ]
    assert run(args, tmp_path) == 2
    err = capsys.readouterr().err
    assert "no worker left" in err and "wrote the 2 finished designs" in err and "resume" in err
    assert list(pd.read_csv(tmp_path / "out" / "power.csv").columns) == COLUMNS
    assert list(pd.read_csv(tmp_path / "out" / "power_pairs.csv").columns) == PAIR_COLUMNS
