"""``python -m lib study``: create a study and its annotator links, export its judgments, summarise it,
back up its database.

The database is ``--database`` or ``$EVAL_DATABASE_URL``, else the SQLite file ``studies.sqlite`` in the
per-user data folder (:func:`lib.study.db.default_path`; docs/studies.md).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from lib.cli import count, non_negative_int, seed
from lib.errors import OutputError, SettingsError
from lib.study.tasks import TASKS, Scale

DEFAULT_BASE_URL = "http://localhost:8501"


def _rate(text: str) -> float:
    """An argparse ``type``: a gold rate in [0, 1)."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value < 1:
        raise argparse.ArgumentTypeError(f"must be a number from 0 to below 1 (got '{text}')")
    return value


def add_parser(sub: argparse._SubParsersAction) -> None:
    """The ``study`` command and its subcommands ``create``, ``export``, ``list``, ``summary``, ``extend``,
    ``revoke``, ``backup``."""
    p = sub.add_parser(
        "study",
        help="run a judgment study: annotator links, answers in a database, export for the Data page",
        description="Create a study (items, task, criteria, annotators per item) and write one private link "
        "per annotator; export the collected judgments as the best-worst / pairwise / ratings CSV the Data page "
        "reads.",
    )
    p.add_argument("--database", default=None, help="SQLAlchemy URL (default: $EVAL_DATABASE_URL, else SQLite)")
    steps = p.add_subparsers(dest="step", required=True)

    _add_create(steps)

    e = steps.add_parser("export", help="the judgments as the CSV the Data page reads")
    e.add_argument("--study", type=non_negative_int, required=True, help="the study's id (study list)")
    e.add_argument("--out", required=True, help="CSV file to write")
    e.add_argument("--include-gold", action="store_true", help="keep the gold items' answers")
    e.add_argument(
        "--keep-failed",
        action="store_true",
        help="keep the judgments of annotators who failed the attention checks (left out by default)",
    )
    e.set_defaults(run=run_export)

    steps.add_parser("list", help="every study in the database").set_defaults(run=run_list)

    s = steps.add_parser("summary", help="progress, agreement, gold accuracy, seconds, speeders")
    s.add_argument("--study", type=non_negative_int, required=True, help="the study's id")
    s.set_defaults(run=run_summary)

    x = steps.add_parser(
        "extend", help="adaptive: new pages from the leaderboard's next batch (rank --next N: next_batch.csv)"
    )
    x.add_argument("--study", type=non_negative_int, required=True, help="the study's id")
    x.add_argument("--next", required=True, help="next_batch.csv of `python -m lib rank --next N` on the export")
    x.add_argument("--per-prompt", type=count, default=1, help="more annotators per item of the batch (default 1)")
    x.add_argument("--max-items", type=count, default=None, help="use at most this many items of the batch")
    x.add_argument("--seed", type=seed, default=0, help="seed of the ties and the shown orders")
    x.add_argument(
        "--new-links",
        default=None,
        help="CSV to write (must not exist): where every annotator has judged an item, new annotators are made "
        "for it and their links written here (annotator, link; a crowd study: new places on its link)",
    )
    x.add_argument("--base-url", default=DEFAULT_BASE_URL, help=f"the app's address (default {DEFAULT_BASE_URL})")
    x.set_defaults(run=run_extend)

    r = steps.add_parser("revoke", help="refuse an annotator's link from now on (their answers stay)")
    r.add_argument("--study", type=non_negative_int, required=True, help="the study's id")
    r.add_argument("--annotator", required=True, help="the annotator's label, e.g. annotator-03")
    r.set_defaults(run=run_revoke)

    b = steps.add_parser("backup", help="a consistent copy of the SQLite study database (while the app runs)")
    b.add_argument("--out", required=True, help="the copy's file (must not exist)")
    b.set_defaults(run=run_backup)


def _add_create(steps: argparse._SubParsersAction) -> None:
    """The ``study create`` subcommand and its options."""
    c = steps.add_parser("create", help="store a study and write its annotator links")
    source = c.add_mutually_exclusive_group(required=True)
    source.add_argument("--items", help="CSV: prompt_id, prompt_text, system, response[, gold_<criterion>]")
    source.add_argument("--demo", action="store_true", help="seed 001's study on the bundled ROME passages")
    c.add_argument(
        "--task", choices=list(TASKS), default=None, help="; ".join(f"{t}: {s.help}" for t, s in TASKS.items())
    )
    c.add_argument("--criteria", default=None, help="comma-separated, e.g. consistency,fluency")
    c.add_argument(
        "--labels",
        default=None,
        help="the word each criterion's questions use, comma-separated in the criteria's order, e.g. "
        "consistent,fluent (the form asks 'MOST CONSISTENT'); default the criteria's names (--demo: seed 001's)",
    )
    c.add_argument("--points", type=count, default=None, help="likert: points of the rating scale (default 5)")
    c.add_argument("--low", default=None, help="likert: the label of rating 1 (default 'very poor')")
    c.add_argument("--high", default=None, help="likert: the label of the top rating (default 'excellent')")
    c.add_argument("--per-item", type=count, default=3, help="distinct annotators per item (default 3)")
    c.add_argument("--annotators", type=count, default=None, help="number of annotator links (default: --per-item)")
    c.add_argument("--gold-rate", type=_rate, default=0.0, help="share of each annotator's pages that are gold items")
    c.add_argument(
        "--check-rate",
        type=_rate,
        default=0.0,
        help="share of each annotator's pages that are instructed attention checks ('choose passage B as MOST "
        "FLUENT'); annotators who fail them are left out of the export",
    )
    c.add_argument(
        "--crowd",
        action="store_true",
        help="recruit on a crowd platform: one study link (Prolific's PROLIFIC_PID, or worker_id) whose "
        "visitors take the --annotators places; --out-link gets that link",
    )
    c.add_argument("--completion-code", default=None, help="shown at the end (--crowd: default a random code)")
    c.add_argument("--redirect-url", default=None, help="offered at the end, e.g. the platform's completion URL")
    c.add_argument(
        "--allow-system-names",
        action="store_true",
        help="store the study even though its name, instructions, example or questions name a system",
    )
    c.add_argument("--instructions", default=None, help="Markdown file shown before the first page")
    c.add_argument("--example", default=None, help="Markdown file: a worked example")
    c.add_argument("--name", default=None, help="the study's name")
    c.add_argument("--max-prompts", type=count, default=None, help="use only the first N prompts of the items")
    c.add_argument("--seed", type=seed, default=0, help="seed of the assignment and the shown orders")
    c.add_argument(
        "--out-link",
        required=True,
        help="CSV to write (must not exist): annotator, link; with --crowd platform, link (the study's one link)",
    )
    c.add_argument("--base-url", default=DEFAULT_BASE_URL, help=f"the app's address (default {DEFAULT_BASE_URL})")
    c.set_defaults(run=run_create)


def _text(path: str | None, what: str) -> str | None:
    if path is None:
        return None
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise SettingsError(f"{what} file cannot be read: {err}", file=path) from None


def _new_file(path: str) -> Path:
    """``path`` created empty, so that a folder that takes no file is found before the study is stored.

    Raises
    ------
    OutputError
        The file exists, its folder does not, or the file cannot be created there.
    """
    out = Path(path)
    if out.exists():
        raise OutputError("already exists: links are written to a new file only", file=str(out))
    if not out.parent.is_dir():
        raise OutputError("its folder does not exist", file=str(out))
    try:
        out.open("x").close()
    except OSError as err:
        raise OutputError(f"cannot be written ({err.strerror or err})", file=str(out)) from None
    return out


def _scale(args: argparse.Namespace, task: str) -> Scale | None:
    """The rating scale of a rated task from ``--points / --low / --high`` (the others: refused)."""
    given = {k: v for k, v in (("points", args.points), ("low", args.low), ("high", args.high)) if v is not None}
    if not TASKS[task].rated:
        if given:
            raise SettingsError(f"--{', --'.join(given)}: only a rated task (likert) has a scale")
        return None
    return Scale(**given)


def run_create(args: argparse.Namespace) -> int:
    """Read the items (or the demo's), store the study, write ``--out-link`` and print the links file."""
    out = _new_file(args.out_link)
    try:
        return _create(args, out)
    except BaseException:
        out.unlink(missing_ok=True)  # no study, no links file
        raise


def _create(args: argparse.Namespace, out: Path) -> int:
    from lib.io.export import write_csv
    from lib.io.tables import read_csv
    from lib.study.create import create_study, parse_criteria, parse_labels
    from lib.study.db import describe
    from lib.study.demo import DEMO_CRITERIA, DEMO_LABELS, DEMO_NAME, DEMO_TASK, demo_items, demo_texts
    from lib.study.items import read_items
    from lib.study.summary import crowd_table, study_links

    labels = args.labels
    if args.demo:
        task = args.task or DEMO_TASK
        scale = _scale(args, task)
        criteria = parse_criteria(args.criteria or ",".join(DEMO_CRITERIA))
        labels = labels if labels is not None or args.criteria else ",".join(DEMO_LABELS)
        items = demo_items(args.max_prompts, task=task)
        instructions, example = demo_texts()
        name = DEMO_NAME
    else:
        if args.task is None or args.criteria is None:
            raise SettingsError("--items needs --task and --criteria")
        task, criteria = args.task, parse_criteria(args.criteria)
        scale = _scale(args, task)
        path = Path(args.items)
        items = read_items(
            read_csv(path, path.name), task, criteria, file=path.name, max_prompts=args.max_prompts, scale=scale
        )
        instructions, example, name = "", "", path.stem
    created = create_study(
        items,
        task=task,
        criteria=criteria,
        annotators=args.annotators or args.per_item,
        per_item=args.per_item,
        gold_rate=args.gold_rate,
        instructions=_text(args.instructions, "--instructions") or instructions,
        example=_text(args.example, "--example") or example,
        name=args.name or name,
        seed=args.seed,
        url=args.database,
        scale=scale,
        labels=parse_labels(labels, criteria),
        check_rate=args.check_rate,
        crowd=args.crowd,
        completion_code=args.completion_code,
        redirect_url=args.redirect_url,
        allow_system_names=args.allow_system_names,
    )
    n = args.annotators or args.per_item
    if created.crowd_key is not None:
        links = crowd_table(created.study_id, args.base_url, url=args.database)
        write_csv(links, out)
        print(f"study {created.study_id}: {len(items)} items, {n} places; its one link in {out}:")
        for row in links.itertuples():
            print(f"  {row.platform}: {row.link}")
    else:
        links = study_links(created.study_id, args.base_url, url=args.database)
        write_csv(links[["annotator", "link"]], out)
        print(f"study {created.study_id}: {len(items)} items, {n} annotators; links in {out} (keep them private)")
    print(f"database: {describe(args.database)}")
    return 0


def run_export(args: argparse.Namespace) -> int:
    """Write the study's judgments to ``--out``."""
    from lib.io.export import write_csv
    from lib.study.export import export_study

    done = export_study(args.study, include_gold=args.include_gold, keep_failed=args.keep_failed, url=args.database)
    write_csv(done.table, args.out)
    print(f"{len(done.table)} rows written to {args.out}")
    if done.failed:
        print(f"{done.said()}{'' if args.keep_failed else '; --keep-failed keeps them'}", file=sys.stderr)
    return 0


def run_list(args: argparse.Namespace) -> int:
    """Print every study."""
    from lib.study.summary import list_studies

    print(list_studies(url=args.database).to_string(index=False))
    return 0


def run_summary(args: argparse.Namespace) -> int:
    """Print a study's progress, agreement, gold accuracy, seconds and speeders."""
    from lib.study.summary import SPEEDER_RULE, summarize

    s = summarize(args.study, url=args.database)
    print(s.annotators.to_string(index=False))
    print(s.agreement.to_string(index=False))
    print(f"median seconds per judgment: {s.median_seconds_per_judgment:.1f}; gold accuracy: {s.gold_accuracy:.2f}")
    failed = s.annotators["annotator"][s.annotators["failed_checks"]].tolist() if len(s.annotators) else []
    if failed:
        print(f"failed the attention checks (left out of the export): {', '.join(failed)}")
    print(f"speeders: {SPEEDER_RULE}", file=sys.stderr)
    return 0


def run_extend(args: argparse.Namespace) -> int:
    """Add the next batch's pages to the study (and, with ``--new-links``, new annotators) and print who got how
    many; what could not be placed is said on stderr, with what to do."""
    from lib.io.export import write_csv
    from lib.io.tables import read_csv
    from lib.study.adaptive import extend
    from lib.study.summary import crowd_table, study_links

    path = Path(args.next)
    batch = read_csv(path, path.name)
    out = _new_file(args.new_links) if args.new_links else None
    try:
        done = extend(
            args.study,
            batch,
            per_prompt=args.per_prompt,
            max_items=args.max_items,
            seed=args.seed,
            url=args.database,
            file=path.name,
            new_annotators=out is not None,
        )
    except BaseException:
        if out is not None:
            out.unlink(missing_ok=True)
        raise
    for label, pages in done.pages.items():
        print(f"{label}: {pages} new page(s)")
    if out is not None:
        crowd = crowd_table(args.study, args.base_url, url=args.database)
        if not crowd.empty:  # the new annotators are new places on the study's one link
            write_csv(crowd, out)
            print(f"{len(done.new)} new place(s) on the study link (in {out}): raise the places on the platform")
        else:
            links = study_links(args.study, args.base_url, url=args.database)
            write_csv(links[links["annotator"].isin([label for label, _ in done.new])][["annotator", "link"]], out)
            print(f"{len(done.new)} new annotator(s); their links in {out} (keep them private)")
    for problem in done.problems():
        print(f"warning: {problem}", file=sys.stderr)
    return 0


def run_revoke(args: argparse.Namespace) -> int:
    """Revoke one annotator's link."""
    from lib.study.create import revoke

    revoke(args.study, args.annotator, url=args.database)
    print(f"the link of {args.annotator} is refused from now on")
    return 0


def run_backup(args: argparse.Namespace) -> int:
    """Copy the SQLite study database to ``--out`` (SQLite's online backup)."""
    from lib.study.db import backup, describe

    out = backup(args.out, url=args.database)
    print(f"backup of {describe(args.database).removeprefix('SQLite file ')} written to {out}")
    return 0
