"""Issue 17, item 7 and item 2's end: every numeric option of every command is checked by the parser
(exit 2, a message naming the option, no traceback), and names read from files never reach the
terminal as control characters (ESC, BEL, BS, CSI are printed as escapes)."""

from __future__ import annotations

import re

import pytest

from lib.cli import main

OUT = ["--out", "unused"]
INPUT = ["--input", "missing.csv", "--format", "pairwise"]
CASES = [
    ("rank", [*INPUT, "--seed", "-1"], "--seed"),
    ("plan", ["--seed", "-1"], "--seed"),
    ("plan", ["--systems", "0"], "--systems"),
    ("plan", ["--effect", "nan"], "--effect"),
    ("plan", ["--effect", "-0.5"], "--effect"),
    ("plan", ["--replicates", "1e9"], "--replicates"),
    ("plan", ["--replicates", "99999999999999999999"], "--replicates"),
    ("plan", ["--target-power", "1"], "--target-power"),
    ("plan", ["--cost-per-hour", "inf"], "--cost-per-hour"),
    ("plan", ["--seconds-per-judgment", "-1"], "--seconds-per-judgment"),
    ("plan", ["--nuts-check", "-2"], "--nuts-check"),
    ("plan", ["--nuts-draws", "0"], "--nuts-draws"),
    ("fit", [*INPUT, "--chains", "0"], "--chains"),
    ("fit", [*INPUT, "--draws", "x"], "--draws"),
    ("fit", [*INPUT, "--tune", "-1"], "--tune"),
    ("fit", [*INPUT, "--seed", "4294967296"], "--seed"),
    ("rank", [*INPUT, "--next", "-1"], "--next"),
    ("rank", [*INPUT, "--win-matrix-top", "0"], "--win-matrix-top"),
    ("rank", [*INPUT, "--max-memory", "0"], "--max-memory"),
    ("rank", [*INPUT, "--max-minutes", "nan"], "--max-minutes"),
    ("select", [*INPUT, "--target-se", "0"], "--target-se"),
    ("select", [*INPUT, "--theta0", "inf"], "--theta0"),
    ("select", [*INPUT, "--random-draws", "0"], "--random-draws"),
    ("cost", ["--input", "missing.csv", "--n-max", "0"], "--n-max"),
    ("revise", ["--drafts", "d.csv", "--engine", "openai", "--timeout", "0"], "--timeout"),
    ("revise", ["--drafts", "d.csv", "--engine", "openai", "--concurrency", "-3"], "--concurrency"),
    ("revise", ["--drafts", "d.csv", "--engine", "openai", "--max-retries", "-1"], "--max-retries"),
]


@pytest.mark.parametrize(("command", "args", "option"), CASES, ids=[f"{c} {' '.join(a[-2:])}" for c, a, _ in CASES])
def test_a_number_out_of_range_is_refused_by_the_parser(capsys, command, args, option):
    with pytest.raises(SystemExit) as stop:
        main([command, *args, *OUT])
    err = capsys.readouterr().err
    assert stop.value.code == 2
    assert f"argument {option}: must be" in err and "Traceback" not in err


CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
NAMES = ["clear\x1b[2J\x1b[31m", "bell\x07", "back\x08\x08space", "csi\x9b31m"]


def test_control_characters_in_names_are_printed_escaped(tmp_path, capsys):
    rows = "".join(f'{k},"{name}","a b c",a c\n' for k, name in enumerate(NAMES))
    drafts = tmp_path / "drafts.csv"
    drafts.write_text("text_id,system,draft,reference\n" + rows, encoding="utf-8")
    assert (
        main(
            [
                "revise",
                "--drafts",
                str(drafts),
                "--engine",
                "diff",
                "--reference-column",
                "reference",
                "--out",
                str(tmp_path / "out"),
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert not CONTROL.search(out)
    assert all(
        escaped in out for escaped in ("clear\\x1b[2J\\x1b[31m", "bell\\x07", "back\\x08\\x08space", "csi\\x9b31m")
    )


def test_control_characters_in_an_error_message_are_printed_escaped(tmp_path, capsys):
    bad = tmp_path / "evil\x1b]0;title\x07.csv"
    bad.write_text("text_id,system,draft\n1,A,x\n1,A,y\n", encoding="utf-8")
    assert main(["revise", "--drafts", str(bad), "--engine", "diff", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert not CONTROL.search(err) and "evil\\x1b]0;title\\x07.csv" in err
