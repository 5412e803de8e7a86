"""``python -m lib revise``: revision edits and Revision Distance for a CSV of drafts (Ma et al. 2024).

Writes ``edits.jsonl`` (one edit per line: ``text_id, system``, the six schema fields and
``located``) and ``revision_distance.csv`` (``text_id, system, revision_distance, unlocated``).
Drafts the LLM could not revise are left out of both and listed in ``failures.csv`` (exit 1).
CSV cells that would start a spreadsheet formula are neutralised (:func:`lib.io.export.write_csv`).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

OUTPUTS = ("edits.jsonl", "revision_distance.csv", "failures.csv")
"""The files ``revise`` writes (``--overwrite`` removes them first)."""


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """The ``revise`` subcommand and its options."""
    from lib.cli import add_llm_options, finish_parser

    parser = subparsers.add_parser(
        "revise",
        help="LLM or diff-based revision edits and Revision Distance per draft",
        description=__doc__.splitlines()[0],
    )
    parser.add_argument("--drafts", required=True, help="CSV with text_id, system, draft [, reference]")
    parser.add_argument(
        "--reference-column", default=None, help="column holding the reference text (reference-based setting)"
    )
    parser.add_argument(
        "--engine",
        required=True,
        choices=("openai", "diff"),
        help="openai: an OpenAI-compatible LLM proposes edits; diff: word-level diff against the reference (no LLM)",
    )
    parser.add_argument("--model", default=None, help="model name (default $OPENAI_MODEL)")
    add_llm_options(parser, "drafts")
    finish_parser(parser, run, columns=True)


def run(args: argparse.Namespace) -> int:
    """Ask the LLM for revision edits of every draft, locate them and write ``OUTPUTS`` to ``--out``.

    Returns
    -------
    int
        0, or 1 when some drafts failed (listed in ``failures.csv``).

    Raises
    ------
    lib.errors.SettingsError
        No ``--model``, or a concurrency, timeout or retry count out of range; a base URL that cannot
        be used, or another server than the configured one without a key of its own while
        $OPENAI_API_KEY is set (:func:`lib.cli.llm_server`: the configured key never goes elsewhere).
    """
    from lib.cli import llm_settings, parse_columns
    from lib.errors import SettingsError
    from lib.io.export import prepare_out, write_csv
    from lib.revision import run as revision_run
    from lib.revision.io import read_drafts

    model = args.model or os.environ.get("OPENAI_MODEL")
    if args.engine == "openai":
        if not model:
            raise SettingsError("--model is required (or set OPENAI_MODEL)")
        if args.concurrency < 1:
            raise SettingsError("--concurrency must be at least 1")
        if args.timeout <= 0:
            raise SettingsError("--timeout must be more than 0 seconds")
        if args.max_retries < 0:
            raise SettingsError("--max-retries must be 0 or more")
        settings = llm_settings(args, model)
    out = prepare_out(args.out, OUTPUTS, overwrite=args.overwrite)  # before any reading or LLM call
    columns = parse_columns(args.columns)
    if args.reference_column:
        columns["reference"] = args.reference_column
    # a named reference column must be filled in every row: a blank one would fail only at the LLM
    drafts = read_drafts(
        args.drafts,
        Path(args.drafts).name,
        columns=columns,
        need_reference=args.engine == "diff" or "reference" in columns,
    )
    if args.engine == "diff":
        revision = revision_run.diff_revision(drafts)
    else:
        from lib.cli import progress_printer
        from lib.revision.prompts import REFERENCE_BASED, REFERENCE_FREE

        template = REFERENCE_BASED if "reference" in drafts.columns else REFERENCE_FREE
        print(f"{len(drafts)} drafts, {template.name} prompt {template.version}, model {model}", file=sys.stderr)
        show = progress_printer()  # a line per 10%: a carriage return would be printed as "\r"
        revision = revision_run.llm_revision(
            drafts, settings, template, progress=lambda done, total: show(done / total, f"drafts: {done}/{total}")
        )
    located, per_draft = revision_run.score(revision.edits, drafts, revision.evaluated)

    (out / "edits.jsonl").write_text(revision_run.edits_jsonl(located, editor=False), encoding="utf-8")
    write_csv(per_draft[revision_run.RD_COLUMNS], out / "revision_distance.csv")
    summary = per_draft.groupby("system")["revision_distance"].agg(["count", "mean"])
    print(
        f"{len(located)} edits ({int((~located['located']).sum())} unlocated) by {revision.editor}; "
        f"mean Revision Distance per system:\n{summary.round(3).to_string()}"
    )
    failures = revision.failures
    if len(failures):
        write_csv(failures, out / "failures.csv")
        for row in failures.itertuples(index=False):
            print(f"failed: {row.text_id} / {row.system}: {row.error}", file=sys.stderr)
        print(f"{len(failures)} draft(s) failed; see failures.csv", file=sys.stderr)
        return 1
    return 0
