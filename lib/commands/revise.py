"""``python -m lib revise``: revision edits and Revision Distance for a CSV of drafts (Ma et al. 2024).

Writes ``edits.jsonl`` (one edit per line: ``text_id, system``, the six schema fields and
``located``) and ``revision_distance.csv`` (``text_id, system, revision_distance, unlocated``).
Drafts the LLM could not revise are left out of both and listed in ``failures.csv`` (exit 1).
CSV cells that would start a spreadsheet formula are neutralised (:func:`lib.export.write_csv`).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path


OUTPUTS = ("edits.jsonl", "revision_distance.csv", "failures.csv")
"""The files ``revise`` writes (``--overwrite`` removes them first)."""


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    from lib.cli import add_columns_option, add_out_option

    parser = subparsers.add_parser(
        "revise", help="LLM or diff-based revision edits and Revision Distance per draft",
        description=__doc__.splitlines()[0])
    parser.add_argument("--drafts", required=True, help="CSV with text_id, system, draft [, reference]")
    parser.add_argument("--reference-column", default=None,
                        help="column holding the reference text (reference-based setting)")
    parser.add_argument("--engine", required=True, choices=("openai", "diff"),
                        help="openai: an OpenAI-compatible LLM proposes edits; diff: word-level diff "
                             "against the reference (no LLM)")
    parser.add_argument("--base-url", default=None, help="server URL (default $OPENAI_BASE_URL or OpenAI)")
    parser.add_argument("--model", default=None, help="model name (default $OPENAI_MODEL)")
    parser.add_argument("--concurrency", type=int, default=4, help="drafts in flight at once (default 4)")
    parser.add_argument("--timeout", type=float, default=60.0,
                        help="seconds one request may wait for the LLM's answer (default 60)")
    parser.add_argument("--max-retries", type=int, default=3,
                        help="retries of a request that timed out, was rate-limited or hit a server error "
                             "(default 3)")
    add_columns_option(parser)
    add_out_option(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    import pandas as pd

    from lib.cli import parse_columns
    from lib.errors import SettingsError
    from lib.export import prepare_out, write_csv
    from lib.revision.diff_edits import diff_edits_table
    from lib.revision.io import read_drafts
    from lib.revision.locate import locate_edits
    from lib.revision.metrics import revision_distance
    from lib.revision.schema import DIFF_EDITOR, EDIT_FIELDS

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
    out = prepare_out(args.out, OUTPUTS, overwrite=args.overwrite)  # before any reading or LLM call
    columns = parse_columns(args.columns)
    if args.reference_column:
        columns["reference"] = args.reference_column
    # a named reference column must be filled in every row: a blank one would fail only at the LLM
    drafts = read_drafts(args.drafts, Path(args.drafts).name, columns=columns,
                         need_reference=args.engine == "diff" or "reference" in columns)
    failures = pd.DataFrame(columns=["text_id", "system", "error"])
    if args.engine == "diff":
        edits, editor = diff_edits_table(drafts), DIFF_EDITOR
    else:
        from lib.revision.client import DraftTask, EditProposer, LLMSettings, results_to_tables
        from lib.revision.prompts import REFERENCE_BASED, REFERENCE_FREE

        has_ref = "reference" in drafts.columns
        settings = LLMSettings(model=model, base_url=args.base_url or os.environ.get("OPENAI_BASE_URL"),
                               api_key=os.environ.get("OPENAI_API_KEY", ""), concurrency=args.concurrency,
                               timeout=args.timeout, max_retries=args.max_retries)
        template = REFERENCE_BASED if has_ref else REFERENCE_FREE
        tasks = [DraftTask(r.text_id, r.system, r.draft, r.reference if has_ref else None)
                 for r in drafts.itertuples(index=False)]
        print(f"{len(tasks)} drafts, {template.name} prompt {template.version}, model {model}", file=sys.stderr)
        results = EditProposer(settings, template).run(
            tasks, progress=lambda done, total: print(f"\r{done}/{total} drafts", end="", file=sys.stderr))
        print(file=sys.stderr)
        editor = f"LLM: {model}"
        edits, failures = results_to_tables(results, editor)
    located = locate_edits(edits, drafts)
    failed = set(zip(failures["text_id"], failures["system"]))
    evaluated = drafts[[(t, s) not in failed for t, s in zip(drafts["text_id"], drafts["system"])]]
    per_draft = revision_distance(located, evaluated.assign(editor=editor))

    with open(out / "edits.jsonl", "w", encoding="utf-8") as lines:
        for record in located[["text_id", "system", *EDIT_FIELDS, "located"]].to_dict("records"):
            lines.write(json.dumps({**record, "located": bool(record["located"])}, ensure_ascii=False) + "\n")
    write_csv(per_draft[["text_id", "system", "revision_distance", "unlocated"]], out / "revision_distance.csv")
    summary = per_draft.groupby("system")["revision_distance"].agg(["count", "mean"])
    print(f"{len(located)} edits ({int((~located['located']).sum())} unlocated) by {editor}; "
          f"mean Revision Distance per system:\n{summary.round(3).to_string()}")
    if len(failures):
        write_csv(failures, out / "failures.csv")
        for row in failures.itertuples(index=False):
            print(f"failed: {row.text_id} / {row.system}: {row.error}", file=sys.stderr)
        print(f"{len(failures)} draft(s) failed; see failures.csv", file=sys.stderr)
        return 1
    return 0
