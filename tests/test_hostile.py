"""The hostile-input corpus (``tests/hostile/``, made by ``scripts/make_hostile.py``) through every command.

Each manifest row runs in-process through :func:`lib.cli.main` (the heavy imports happen once) with a
fresh ``--out``, MAP for ``fit`` and a small fast-mode grid for ``select``. A case passes when:
the exit code is 0 (``ok``) or 2 (``error``); no exception escapes; an error message names the file
(the input, or the ``--out`` path for output-folder cases) and the manifest's ``contains`` text; it
takes under 60 s; on exit 2 nothing was written to ``--out``; on exit 0 the documented outputs exist
and no CSV cell can start a spreadsheet formula (OWASP: ``= + - @`` unless the text is a number).
"""

from __future__ import annotations

import contextlib
import csv
import io
import math
import os
import shlex
import signal
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import pytest

from lib.cli import main
from lib.errors import InputError

HOSTILE = Path(__file__).parent / "hostile"
LIMIT_S = 60
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
INPUT_FLAG = {"fit": "--input", "select": "--input", "cost": "--input", "revise": "--drafts"}
# Smallest settings that still run every step: MAP fit, fast-mode selection on a short k grid.
FAST = {
    "fit": ["--sampler", "map", "--seed", "0"],
    "select": ["--mode", "fast", "--k", "2,4", "--random-draws", "3", "--seed", "0"],
}
OUTPUTS = {  # the documented files of each command (README.md, docs/*.md)
    "fit": ["abilities.csv", "prompts.csv", "diagnostics.json", "posterior.nc"],
    "select": ["selection_curve.csv", "prompts_needed.csv"],
    "cost": [
        "loss_table.csv",
        "loss_tests.csv",
        "effort_medians.csv",
        "effort_tests.csv",
        "cost_terms.csv",
        "cost_curve.csv",
        "loss_by_difficulty.csv",
        "spearman.csv",
    ],
    "revise": ["edits.jsonl", "revision_distance.csv"],
}
STRANGER = "notes.txt"  # a file of the user's in a non-empty --out, never to be removed


class Hang(BaseException):
    """Raised by the alarm: a BaseException, so the code under test cannot swallow it."""


@dataclass
class Result:
    """What one case did: exit code (or what escaped), first message line, and failed checks."""

    observed: str
    message: str
    problems: list[str] = field(default_factory=list)


def load_manifest() -> list[dict[str, str]]:
    with open(HOSTILE / "manifest.csv", newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _formula_cells(path: Path) -> list[str]:
    """Cells (and column names) of a CSV a spreadsheet would run as a formula."""
    table = pd.read_csv(path, dtype=str, keep_default_na=False)
    cells = [*map(str, table.columns), *table.to_numpy().ravel().tolist()]

    def is_formula(cell: str) -> bool:
        if not cell.startswith(FORMULA_START):
            return False
        try:
            float(cell)
            return False
        except ValueError:
            return True

    return [c for c in cells if is_formula(c)]


def _listing(folder: Path) -> list[str]:
    """Names in ``folder`` (none when it is missing or a file)."""
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


def _on_alarm(signum, frame):
    raise Hang()


def _run(argv: list[str], command: str, path: Path) -> tuple[int, str]:
    """Exit code and captured output of one command; ``edits`` is the page's upload reader."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        if command == "edits":
            from lib.revision.io import read_edits

            try:
                read_edits(path, path.name)
                code = 0
            except InputError as error:
                print(f"error: {error}", file=err)
                code = 2
        else:
            try:
                code = main(argv)
            except SystemExit as exit_:  # argparse: unknown option or bad value
                code = exit_.code if isinstance(exit_.code, int) else 2
    return code, err.getvalue() + out.getvalue()


def run_case(case: dict[str, str], tmp: Path) -> Result:
    """Run one manifest case in ``tmp`` and check it; the problems list is empty when it passes."""
    command, path = case["command"], HOSTILE / case["file"]
    out = tmp / "out"
    if case["out"] == "file":
        out.write_text("a file, not a folder")
    elif case["out"] == "nonempty":
        out.mkdir()
        (out / STRANGER).write_text("the user's own notes")
    before = _listing(out)
    argv = [
        command,
        INPUT_FLAG.get(command, "--input"),
        str(path),
        *shlex.split(case["args"]),
        *FAST.get(command, []),
        "--out",
        str(out),
    ]

    start = time.perf_counter()
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    signal.alarm(LIMIT_S)
    try:
        code, text = _run(argv, command, path)
    except Hang:
        return Result("hang", f"no answer after {LIMIT_S} s", [f"ran over {LIMIT_S} s"])
    except Exception as exc:  # a traceback: the failure this corpus exists to find
        frame = traceback.extract_tb(exc.__traceback__)[-1]
        where = f"{Path(frame.filename).name}:{frame.lineno}"
        return Result(
            f"{type(exc).__name__}",
            f"{type(exc).__name__} at {where}: {exc}".splitlines()[0],
            ["an exception escaped (traceback)"],
        )
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    elapsed = time.perf_counter() - start

    lines = [line for line in text.splitlines() if line.strip()]
    # the error, or else the last line (what was written)
    message = next((line for line in lines if line.startswith("error")), lines[-1] if lines else "")
    result = Result(str(code), message)
    problems = result.problems
    if elapsed > LIMIT_S:
        problems.append(f"took {elapsed:.0f} s")
    if "Traceback" in text:
        problems.append("a traceback was printed")
    want = 0 if case["expect"] == "ok" else 2
    if code != want:
        problems.append(f"exit {code}, expected {want}: {message}")
        return result
    if want == 2:
        _check_refusal(case, path, out, before, result)
    elif command != "edits":
        _check_outputs(case, out, result)
    return result


def _check_refusal(case: dict[str, str], path: Path, out: Path, before: list[str], result: Result) -> None:
    """A refused input: the message names the file (or --out) and what is wrong, and nothing is written."""
    problems, message, files = result.problems, result.message, _listing(out)
    named = out.name if case["out"] != "fresh" else path.name
    if named not in message:
        problems.append(f"the message does not name {named!r}: {message}")
    if case["contains"] and case["contains"].lower() not in message.lower():
        problems.append(f"the message does not contain {case['contains']!r}: {message}")
    if files != before:  # an empty folder created before reading is not an output
        problems.append(f"partial outputs left in --out: {files}")


def _check_outputs(case: dict[str, str], out: Path, result: Result) -> None:
    """An accepted input: the documented outputs, the user's own file kept, no live formula, finite thetas."""
    command, problems, files = case["command"], result.problems, _listing(out)
    missing = [name for name in OUTPUTS[command] if name not in files]
    if missing:
        problems.append(f"documented outputs missing: {missing}")
    if case["out"] == "nonempty" and STRANGER not in files:
        problems.append("--overwrite removed a file the command does not own")
    for csv_file in sorted(out.glob("*.csv")):
        if bad := _formula_cells(csv_file):
            problems.append(f"{csv_file.name}: formula cells not neutralised: {bad[:3]}")
    if command == "fit" and (out / "abilities.csv").exists():
        theta = pd.read_csv(out / "abilities.csv")["theta_mean"]
        if not all(math.isfinite(v) for v in theta):
            problems.append(f"abilities.csv has theta_mean that is not finite: {theta.tolist()}")


CASES = load_manifest()


@pytest.fixture(scope="module", autouse=True)
def _own_cache(tmp_path_factory):
    """Fits and revision answers are cached under $EVAL_CACHE_DIR: keep them out of the user's cache."""
    old = os.environ.get("EVAL_CACHE_DIR")
    os.environ["EVAL_CACHE_DIR"] = str(tmp_path_factory.mktemp("cache"))
    yield
    if old is None:
        os.environ.pop("EVAL_CACHE_DIR")
    else:
        os.environ["EVAL_CACHE_DIR"] = old


def test_the_corpus_is_what_the_issue_asks_for():
    # The folder also holds the hostile tests of the later surfaces (test_*.py): the corpus is its data files.
    corpus = [p for p in HOSTILE.iterdir() if p.is_file() and p.suffix != ".py"]
    names = {p.name for p in corpus} - {"manifest.csv"}
    assert len(names) >= 60
    assert {c["file"] for c in CASES} == names, "every corpus file has a case and every case a file"
    assert sum(p.stat().st_size for p in corpus) < 3_000_000
    assert {c["command"] for c in CASES} == {"fit", "select", "cost", "revise", "edits"}
    assert {c["expect"] for c in CASES} == {"ok", "error"}


@pytest.mark.parametrize("case", CASES, ids=[f"{c['command']}-{c['file']}-{i}" for i, c in enumerate(CASES)])
def test_hostile_case(case):
    with tempfile.TemporaryDirectory() as tmp:
        result = run_case(case, Path(tmp))
    assert not result.problems, f"{case['why']}: " + "; ".join(result.problems)
