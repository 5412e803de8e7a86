"""``python -m lib judge``: an LLM judge's verdict on each pair of responses, in both orders.

Writes ``judge_votes.csv`` (a judge file for ``python -m lib rank --judge`` and the Judges page:
``prompt, system_a, system_b, judge, choice, raw_verdict, error``, ``system_a`` shown first) and
``usage.json`` (requests, cached answers, failures, unusable answers, prompt and completion tokens).
Exit 1 when some requests failed (their ``error`` is filled and their ``choice`` blank).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

OUTPUTS = ("judge_votes.csv", "usage.json")
"""The files ``judge`` writes (``--overwrite`` removes them first)."""


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """The ``judge`` subcommand and its options (light imports only)."""
    from lib.cli import add_llm_options, finish_parser

    parser = subparsers.add_parser(
        "judge",
        help="an LLM judge's A / B / tie verdict on each pair of responses, in both orders",
        description=__doc__.splitlines()[0],
    )
    parser.add_argument(
        "--input", required=True, help="CSV of pairs: prompt, system_a, system_b, prompt_text, response_a, response_b"
    )
    parser.add_argument("--model", required=True, help="the judge model's name")
    add_llm_options(parser, "requests")
    finish_parser(parser, run, columns=True)


def run(args: argparse.Namespace) -> int:
    """Ask the judge about every pair in both orders and write ``OUTPUTS`` to ``--out``.

    Returns
    -------
    int
        0, or 1 when some requests failed.

    Raises
    ------
    lib.errors.SettingsError
        A Base URL that cannot be used, or another server than the configured one without a key of
        its own while a key is configured (:func:`lib.revision.credentials.choose_key`).
    lib.errors.FormatError
        The pairs file lacks a role or has a blank cell.
    """
    from lib.cli import llm_settings, parse_columns, progress_printer
    from lib.io.export import prepare_out, write_csv
    from lib.io.tables import read_csv
    from lib.judges.ask import VerdictAsker, read_pairs, usage, verdict_table

    settings = llm_settings(args, args.model)
    out = prepare_out(args.out, OUTPUTS, overwrite=args.overwrite)  # before any reading or request
    path = Path(args.input)
    tasks = read_pairs(read_csv(path, path.name), parse_columns(args.columns), file=path.name)
    print(f"{len(tasks) // 2} pairs, {len(tasks)} requests (both orders), model {args.model}", file=sys.stderr)
    show = progress_printer()
    verdicts = VerdictAsker(settings).run(tasks, lambda done, total: show(done / total, f"verdicts: {done}/{total}"))
    table = verdict_table(tasks, verdicts, args.model)
    write_csv(table, out / "judge_votes.csv")
    used = usage(verdicts)
    (out / "usage.json").write_text(json.dumps(used, indent=2), encoding="utf-8")
    print(
        f"{used['requests']} verdicts ({used['cached']} cached, {used['unusable']} unusable, {used['failed']} failed); "
        f"tokens: {used['prompt_tokens']} prompt + {used['completion_tokens']} completion"
    )
    print(f"wrote {out}/{', '.join(OUTPUTS)}")
    for row in table[table["error"] != ""].itertuples(index=False):
        print(f"failed: {row.prompt} / {row.system_a} vs {row.system_b}: {row.error}", file=sys.stderr)
    return 1 if used["failed"] else 0
