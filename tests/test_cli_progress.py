"""lib.cli.progress_printer: the commands' progress lines (fit, rank, revise)."""

from __future__ import annotations

from lib.cli import progress_printer


def test_a_line_when_the_stage_changes_or_after_a_further_ten_percent(capsys):
    show = progress_printer()
    for fraction, message in [
        (0.0, "sampling: chain 1"),
        (0.05, "sampling: chain 1"),
        (0.1, "sampling: chain 2"),
        (0.15, "sampling · warm-up"),
        (0.16, "diagnostics: R-hat"),
        (1.0, "diagnostics: done"),
    ]:
        show(fraction, message)
    assert capsys.readouterr().out.splitlines() == [
        "[  0%] sampling: chain 1",
        "[ 10%] sampling: chain 2",
        "[ 16%] diagnostics: R-hat",
        "[100%] diagnostics: done",
    ]
