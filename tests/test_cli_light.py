"""``--help`` and argument errors of every command answer before any heavy import (issue 19 item 5).

One fresh interpreter runs :func:`lib.cli.main` on every call below, in order, and lists the modules
imported after each; no call may bring in pandas, scipy or the model stack. Nothing is timed.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from lib.cli import COMMANDS

HEAVY = ("pandas", "scipy", "jax", "pymc", "arviz", "pytensor", "numpyro", "streamlit", "plotly")
"""Packages building the parser must not import (numpy is allowed)."""

WITH_INPUT = ("fit", "rank", "select", "plan")
"""Commands with the judgment-file options (``--format`` is a choice of ``lib.judgments.formats.FORMATS``)."""

TYPE_ERRORS = {
    "fit": ["--draws", "0"],
    "rank": ["--seed", "-1"],
    "select": ["--theta0", "nan"],
    "plan": ["--target-power", "1"],
    "revise": ["--concurrency", "0"],
    "cost": ["--n-max", "0"],
    "study": ["create", "--per-item", "0"],
    "judge": ["--timeout", "0"],
}
"""An option of each command whose argparse ``type`` refuses the value."""

CALLS: list[tuple[list[str], int]] = [
    (["--help"], 0),
    ([], 2),
    (["nope"], 2),
    *[([command, "--help"], 0) for command in COMMANDS],
    *[([command, *TYPE_ERRORS[command]], 2) for command in COMMANDS],
    *[([command, "--no-such-option"], 2) for command in COMMANDS],
    *[([command, "--format", "nope"], 2) for command in WITH_INPUT],
    (["rank", "--likelihood", "nope"], 2),
    (["plan", "--response", "nope"], 2),
    (["select", "--mode", "nope"], 2),
]
"""(arguments, exit status): help exits 0, every argument error 2."""

SCRIPT = """
import contextlib, io, json, sys
from lib.cli import main
heavy = {heavy!r}
def loaded():
    return sorted(m for m in sys.modules if m.split(".")[0] in heavy)
report = [{{"argv": None, "status": None, "heavy": loaded()}}]
for argv in {argvs!r}:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        try:
            status = main(argv)
        except SystemExit as stop:
            status = stop.code
    report.append({{"argv": argv, "status": status, "heavy": loaded(), "output": out.getvalue()}})
print(json.dumps(report))
"""


@pytest.fixture(scope="module")
def report() -> dict[str, dict]:
    """Run every call of :data:`CALLS` in one fresh interpreter: ``{" ".join(argv): its record}``
    (``"<start>"``: the interpreter before any call)."""
    script = SCRIPT.format(heavy=HEAVY, argvs=[argv for argv, _ in CALLS])
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=Path(__file__).resolve().parents[1],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    records = json.loads(done.stdout)
    return {"<start>" if r["argv"] is None else " ".join(r["argv"]): r for r in records}


def test_the_interpreter_starts_without_heavy_modules(report):
    """Otherwise the test below would prove nothing."""
    assert report["<start>"]["heavy"] == []


@pytest.mark.parametrize(("argv", "status"), CALLS, ids=[" ".join(argv) or "<none>" for argv, _ in CALLS])
def test_help_and_argument_errors_import_nothing_heavy(report, argv, status):
    """The call exits with ``status`` (argparse's own exit), and no module of ``HEAVY`` was imported by it
    or by any call before it."""
    record = report[" ".join(argv)]
    assert record["status"] == status, record["output"]
    assert record["heavy"] == [], f"python -m lib {' '.join(argv)} imported {record['heavy'][:10]}"
    if status == 2:
        assert "error:" in record["output"]
