"""Hostile cases of ``python -m lib rank`` (issue 17): the command, its exit code and message, a time bound.

* two groups of systems that never met are ranked within each group (no cross-group P(best) or win
  probability from the prior), with and without ``--baseline``;
* 10,000 systems x 1 vote each are refused before any computation, naming the limit and its option;
* the cost is estimated and printed before the fit; the win matrix of a large leaderboard is limited.
"""

from __future__ import annotations

import json
import re
import time

import numpy as np
import pandas as pd
import pytest

import lib.cli
import lib.ranking.marginal
from lib.ranking.fit import DEFAULT_SAMPLER


@pytest.fixture(autouse=True, scope="module")
def cache(tmp_path_factory):
    """One fit cache for the module: the same votes and settings are fitted once."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("EVAL_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        yield


def two_groups(path):
    """Votes of {a1, a2, a3} among themselves and of {b1, b2} between themselves: no vote links the groups."""
    rng = np.random.default_rng(0)
    rows = [
        {
            "prompt": f"q{p}",
            "system_a": a,
            "system_b": b,
            "annotator": f"r{r}",
            "choice": rng.choice(["A", "B", "tie"], p=[0.3, 0.6, 0.1]),
            "prompt_text": f"text {p}",
            "response_a": f"{a} on {p}",
            "response_b": f"{b} on {p}",
        }
        for p in range(20)
        for r in range(2)
        for a, b in [("a1", "a2"), ("a2", "a3"), ("a1", "a3"), ("b1", "b2")]
    ]
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def rank(args, capsys, sampler=("--sampler", "laplace")):
    began = time.perf_counter()
    code = lib.cli.main(["rank", "--format", "pairwise", *sampler, *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err, time.perf_counter() - began


@pytest.mark.parametrize("baseline", [[], ["--baseline", "a1"]])
def test_disconnected_groups_are_ranked_within_each_group(tmp_path, capsys, baseline, monkeypatch):
    # The full model's Laplace fit, whose phases outlast the half second between progress reports: the votes'
    # quadrature fit (lib.ranking.marginal) of these 160 votes is over before the first report, so it has no time
    # to go to revise
    monkeypatch.setattr(lib.ranking.marginal, "not_applicable", lambda *args, **kwargs: "the time to go's test")
    out = tmp_path / "out"
    code, stdout, err, seconds = rank(
        ["--input", str(two_groups(tmp_path / "votes.csv")), *baseline, "--next", "4", "--out", str(out)], capsys
    )
    assert code == 0 and seconds < 300  # a few seconds on an idle machine
    assert "GB of memory on an idle machine (the time to go is revised as phases finish)" in stdout
    to_go = re.findall(r"about ([\d.]+) s to go", stdout)
    assert len(set(to_go)) >= 2  # the time to go is revised as the fit's phases finish
    written = json.loads((out / "diagnostics.json").read_text())
    assert set(written["estimate"]["phases"]) <= set(written["timings"]) | {"cache read"}  # beside what it estimated
    assert "2 groups that no judgment links" in err and "1: a1, a2, a3 (3 systems); 2: b1, b2 (2 systems)" in err
    board = pd.read_csv(out / "leaderboard.csv").set_index("system")
    assert board["component"].to_dict() == {"a1": 1, "a2": 1, "a3": 1, "b1": 2, "b2": 2}
    assert "component" in stdout.splitlines()[-7]  # the printed table's header says which group
    for _, group in board.groupby("component"):
        assert group["p_best"].sum() == pytest.approx(1.0)  # one best system per group, not one in all
        assert group["rank_high"].max() == len(group) and group["rank_low"].min() == 1
        assert group["skill_mean"].sum() == pytest.approx(0.0, abs=1e-9) or baseline
    if baseline:
        assert board.loc["a1", "skill_mean"] == 0.0
    wins = pd.read_csv(out / "win_matrix.csv")
    across = wins["system_a"].str[0] != wins["system_b"].str[0]
    assert len(wins) == 10 and wins.loc[across, "p_b_better"].isna().all()  # left empty, not the prior's 0.5-ish
    assert wins.loc[~across, "p_b_better"].notna().all()
    assert any("no judgment links" in w for w in json.loads((out / "diagnostics.json").read_text())["warnings"])
    batch = pd.read_csv(out / "next_batch.csv")
    assert (batch["system_a"].str[0] == batch["system_b"].str[0]).all()  # no pair across the groups
    assert (batch["response_b"] == batch["system_b"] + " on " + batch["prompt_id"].str[1:]).all()  # for annotators


@pytest.mark.parametrize(
    ("limit", "message"),
    [
        ([], "above the time limit of 10 minutes"),  # the defaults
        (["--max-memory", "4"], "above the memory limit of 4 GB"),
    ],
)
def test_ten_thousand_systems_with_one_vote_each_are_refused_before_computing(tmp_path, capsys, limit, message):
    systems = [f"s{i:05d}" for i in range(10_000)]
    pd.DataFrame(
        {
            "prompt": [f"q{i}" for i in range(5_000)],
            "system_a": systems[0::2],
            "system_b": systems[1::2],
            "annotator": "r",
            "choice": "A",
        }
    ).to_csv(tmp_path / "wide.csv", index=False)
    code, stdout, err, seconds = rank(
        ["--input", str(tmp_path / "wide.csv"), *limit, "--out", str(tmp_path / "out")], capsys
    )
    assert code == 2 and seconds < 60  # it ran 212 s, reached 7 GB and died allocating 372 GiB
    assert message in err and ("--max-memory" if limit else "--max-minutes") in err
    if limit:
        assert "the Hessian at the mode" in err  # the part that does not fit is named
    estimate = float(stdout.split("estimated: about ")[1].split(" and ")[1].split(" GB")[0])
    assert estimate > 5  # the measured peak before the win matrix was 7 GB
    assert not any((tmp_path / "out").glob("*.csv"))


def test_the_estimate_is_printed_before_the_fit_and_a_large_win_matrix_is_limited(tmp_path, capsys):
    # the votes and settings of the first disconnected case (laplace, the default): its fit is in the module's cache
    out = tmp_path / "out"
    code, stdout, _err, _ = rank(
        ["--input", str(two_groups(tmp_path / "votes.csv")), "--win-matrix-top", "3", "--out", str(out)],
        capsys,
        sampler=(),
    )
    assert code == 0 and f"default sampler: {DEFAULT_SAMPLER}" in stdout  # the page's default too
    lines = stdout.splitlines()
    first = next(i for i, line in enumerate(lines) if "estimated: about" in line)
    assert first < next(i for i, line in enumerate(lines) if "building the model" in line or "from cache" in line)
    assert "win matrix holds the pairs of the top 3 of the 5 systems" in stdout
    wins = pd.read_csv(out / "win_matrix.csv")
    top3 = set(pd.read_csv(out / "leaderboard.csv")["system"][:3])
    assert len(wins) == 3 and set(wins["system_a"]) | set(wins["system_b"]) == top3


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--win-matrix-top", "1"], "at least 2 systems"),
        (["--max-minutes", "0.001"], "above the time limit of 0.001 minutes"),
    ],
)
def test_limits_are_checked_with_a_message(tmp_path, capsys, extra, message):
    code, _, err, seconds = rank(
        ["--input", str(two_groups(tmp_path / "votes.csv")), *extra, "--out", str(tmp_path / "out")], capsys
    )
    assert code == 2 and message in err and seconds < 30
