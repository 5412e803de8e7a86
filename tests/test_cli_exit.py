"""``python -m lib`` ends by ``lib.cli.exit_now``: the status kept, output flushed, exit handlers run, and none of
Python's shutdown (which tore down every module a fit loaded for 0.5-3 s after its files were written)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_exit_now_keeps_the_status_and_output_and_runs_the_exit_handlers_only(tmp_path):
    script = textwrap.dedent(
        f"""
        import atexit, sys
        from pathlib import Path
        from lib.cli import exit_now

        atexit.register(lambda: Path({str(tmp_path / "handler")!r}).write_text("ran"))

        class TornDown:  # finalised by Python's shutdown, which exit_now skips
            def __del__(self):
                Path({str(tmp_path / "shutdown")!r}).write_text("ran")

        kept = TornDown()
        print("said", end="")
        print("warned", end="", file=sys.stderr)
        exit_now(3)
        print("never")
        """
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (3, "said", "warned")
    assert (tmp_path / "handler").read_text() == "ran"
    assert not (tmp_path / "shutdown").exists()


def test_python_minus_m_lib_exits_with_the_command_status(tmp_path):
    """A refused input: status 2 and the message, through ``python -m lib`` (the path ``exit_now`` ends)."""
    args = ["fit", "--input", str(tmp_path / "none.csv"), "--format", "pairwise", "--out", str(tmp_path / "out")]
    done = subprocess.run(
        [sys.executable, "-m", "lib", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and "none.csv" in done.stderr, done.stderr
