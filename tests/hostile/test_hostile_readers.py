"""Hostile inputs to the one reader (``lib.io.tables``), issue 17: overlong names, and paths that are no
regular file. Each runs the command line in-process under a time bound and checks exit 2 and the message."""

from __future__ import annotations

import contextlib
import io
import os
import signal
from pathlib import Path

import pytest

from lib.io import tables
from lib.cli import main
from lib.errors import FormatError
from lib.io.tables import MAX_NAME_CHARS, read_bytes, read_csv

LIMIT_S = 30


class Hang(BaseException):
    """Raised by the alarm: a BaseException, so the code under test cannot swallow it."""


def _on_alarm(signum, frame):
    raise Hang()


def run(argv: list[str]) -> tuple[int, str]:
    """Exit code and stderr of ``python -m lib ARGV``, failing the test after ``LIMIT_S`` seconds."""
    err = io.StringIO()
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    signal.alarm(LIMIT_S)
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = main(argv)
    except Hang:
        pytest.fail(f"python -m lib {' '.join(argv)} took more than {LIMIT_S} s")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    return code, err.getvalue()


def pairwise(path: Path, system: str) -> Path:
    rows = ["prompt,system_a,system_b,annotator,choice"]
    rows += [f"p{i},{system},other,w{j},{'ab'[(i + j) % 2]}" for i in range(6) for j in range(2)]
    path.write_text("\n".join(rows) + "\n")
    return path


def test_a_megabyte_system_name_is_refused_naming_row_and_column(tmp_path):
    path = pairwise(tmp_path / "huge_name.csv", "x" * 1_000_000)
    code, message = run(["fit", "--input", str(path), "--format", "pairwise", "--sampler", "map",
                         "--out", str(tmp_path / "out")])
    assert code == 2
    assert message.startswith("error: huge_name.csv, rows 1, 2,") and "column 'system_a'" in message
    assert f"at most {MAX_NAME_CHARS:,} characters" in message and len(message) < 1000
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_a_name_at_the_limit_is_read_and_a_long_prompt_text_is_not_a_name(tmp_path):
    path = pairwise(tmp_path / "ok.csv", "y" * MAX_NAME_CHARS)
    table = read_csv(path, "ok.csv")
    table["prompt_text"] = "t" * 100_000
    from lib.judgments.formats import read_pairwise

    assert len(read_pairwise(table, file="ok.csv").votes) == 12


def test_a_megabyte_column_name_is_refused_as_row_0(tmp_path):
    path = tmp_path / "wide.csv"
    path.write_text(f"prompt,{'c' * 100_000}\np1,1\n")
    with pytest.raises(FormatError, match=r"^wide.csv, row 0: column name of 100,000 characters"):
        read_csv(path, "wide.csv")
    path.write_text(f"prompt,{'c' * 1_000_000}\np1,1\n")  # over the csv module's field limit
    with pytest.raises(FormatError, match=r"^wide.csv, row 0: cannot read the header .* at most 1,000 characters"):
        read_csv(path, "wide.csv")


def test_a_megabyte_participant_id_in_a_cost_study_is_refused(tmp_path):
    from lib.cost.schema import read_study

    rows = ["condition,participant,task,instance,usefulness,prompt_time,unwrap_time,solve_time"]
    rows += [f"{c},{'p' * 2000 if (c, k) == ('with', 1) else 'p2'},t1,{k},3,5,{5 if c == 'with' else ''},"
             f"{'' if c == 'with' else 9}" for c in ("with", "without") for k in (1, 2)]
    path = tmp_path / "study.csv"
    path.write_text("\n".join(rows) + "\n")
    with pytest.raises(FormatError, match="column 'participant': participant of 2,000 characters"):
        read_study(read_csv(path, "study.csv"), file="study.csv")


@pytest.mark.parametrize("what", ["folder", "fifo", "dev_zero"])
def test_an_input_that_is_not_a_regular_file_says_what_it_is_without_blocking(tmp_path, what):
    if what == "folder":
        path, said = tmp_path / "votes.csv", "this is a folder, not a file"
        path.mkdir()
    elif what == "fifo":
        path, said = tmp_path / "votes.csv", "this is a FIFO (named pipe), not a regular file"
        os.mkfifo(path)  # opening it for reading would block until a writer comes: never opened
    else:
        path, said = Path("/dev/zero"), "this is a device, not a regular file"
    code, message = run(["fit", "--input", str(path), "--format", "pairwise", "--out", str(tmp_path / "out")])
    assert code == 2 and message == f"error: {path.name}: {said}; " + (
        "give the path of a CSV file\n" if what == "folder" else "save the data to a CSV file and give its path\n")


def test_a_missing_file_is_still_no_such_file(tmp_path):
    code, message = run(["fit", "--input", str(tmp_path / "gone.csv"), "--format", "pairwise",
                         "--out", str(tmp_path / "out")])
    assert (code, message) == (2, "error: gone.csv: no such file\n")


def test_reads_stop_at_the_stated_limit(tmp_path, monkeypatch):
    """A file or stream larger than ``MAX_FILE_BYTES`` is refused, and a stream (an endless one such as
    /dev/zero opened by a caller) is never read past the limit."""
    monkeypatch.setattr(tables, "MAX_FILE_BYTES", 100)
    path = tmp_path / "big.csv"
    path.write_bytes(b"a,b\n" + b"1,2\n" * 50)
    with pytest.raises(FormatError, match="^big.csv: the file is larger than"):
        read_bytes(path, "big.csv")

    class Endless:
        def read(self, size=-1):
            assert size >= 0, "an unbounded read of an endless stream"
            return bytes(size)

    with pytest.raises(FormatError, match="^stream: the file is larger than"):
        read_bytes(Endless(), "stream")
