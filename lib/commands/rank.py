"""``python -m lib rank``: a leaderboard of systems (structured IRT) with Bradley–Terry beside it."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from lib.cli import (
    EXIT_CODES,
    add_input_options,
    add_sampling_options,
    add_verbose_option,
    count,
    finish_fit,
    finish_parser,
    non_negative_int,
    positive_float,
    print_target_ess,
    read_input,
)
from lib.errors import SettingsError

OUTPUTS = (
    "leaderboard.csv",
    "win_matrix.csv",
    "diagnostics.json",
    "next_batch.csv",
    "annotators.csv",
    "judge_quality.csv",
    "annotator_quality.csv",
    "leaderboard_by_category.csv",
    "robustness.csv",
)


def add_parser(sub: argparse._SubParsersAction) -> None:
    """The ``rank`` subcommand and its options (light imports only: ``--help`` stays fast)."""
    # Light imports only (``--help`` stays fast): the fitting modules load pymc.
    from lib.inference.settings import samplers_for
    from lib.ranking.budget import MAX_MEMORY_GB, MAX_MINUTES, WIN_MATRIX_TOP
    from lib.ranking.clusters import CLUSTER_MODES, DEFAULT_CLUSTERING, MIN_PROMPTS
    from lib.ranking.likelihoods import LIKELIHOODS
    from lib.ranking.robustness import ROBUSTNESS_TOP

    samplers = samplers_for("ranking")
    p = sub.add_parser(
        "rank",
        help="leaderboard of systems: skills, ranks, P(best), Bradley–Terry baseline, what to annotate next",
        description="Fit one skill per system (structured IRT: theta of a pair = s_B - s_A, with the "
        "prompts' discriminations) and write leaderboard.csv, win_matrix.csv, diagnostics.json, "
        "with --next N next_batch.csv, with annotator severity (ratings) annotators.csv, with --annotator-weights "
        "annotator_quality.csv, with --by category leaderboard_by_category.csv, with --judge judge_quality.csv "
        "and with --robustness robustness.csv to --out.",
        epilog=EXIT_CODES,
    )
    add_input_options(p, "CSV of judgments or ratings")
    p.add_argument(
        "--judge",
        default=None,
        metavar="FILE",
        help="CSV of LLM-judge verdicts (pairwise columns and a 'judge' column) on the same prompts and system "
        "pairs: adds human-only, judge-only and prediction-powered (PPI++) Bradley–Terry skills and rank-sets "
        "to leaderboard.csv, writes judge_quality.csv and effective_human_n in diagnostics.json",
    )
    p.add_argument(
        "--likelihood",
        choices=list(LIKELIHOODS),
        default=None,
        help="default: the data's own; " + "; ".join(f"{k}: {spec.help}" for k, spec in LIKELIHOODS.items()),
    )
    p.add_argument(
        "--sampler",
        choices=list(samplers),
        default=None,
        help="; ".join(f"{s.name}: {s.help}" for s in samplers.values()) + ". Default: the leaderboard's one default, "
        "lib.ranking.fit.DEFAULT_SAMPLER (the page's too; printed with the results), which falls "
        "back to NUTS where a Gaussian at the mode is not trustworthy",
    )
    p.add_argument(
        "--baseline",
        default=None,
        metavar="SYSTEM",
        help="identify the skills by this system's skill = 0 (default: skills sum to zero)",
    )
    p.add_argument(
        "--intransitivity",
        action="store_true",
        help="add a deviation per pair (scale tau estimated) and list the pairs whose deviation interval excludes 0",
    )
    p.add_argument(
        "--position-column",
        default=None,
        metavar="NAME",
        help="column naming the system shown first (left): a / left / 1, b / right / 2, the row's "
        "system, or blank; estimate a position bias gamma (the same as --columns position=NAME)",
    )
    p.add_argument(
        "--style-control",
        action="store_true",
        help="fit the answers' style as covariates (LMArena's style control: length in tokens and markdown "
        "headers, bold and list items, each the normalised difference of the two answers, standardised) in the "
        "votes model and the Bradley–Terry baseline, from the answers' texts (pairwise: response_a and "
        "response_b; best-worst and ranking: response); "
        "leaderboard.csv then holds the controlled skills with skill_uncontrolled and rank_change beside them, "
        "diagnostics.json style_coefficients",
    )
    p.add_argument(
        "--style-columns",
        type=_names,
        default=None,
        metavar="COL[,COL...]",
        help="style control with these numeric columns of the file as covariates instead of the texts' features "
        "(NAME as it is, or the normalised difference of NAME_a and NAME_b); implies --style-control",
    )
    p.add_argument(
        "--by",
        choices=["category"],
        default=None,
        help="category: one fit with a skill per system and category (the votes' 'category' column), each shrunk "
        "towards the system's overall skill by a spread sigma_category learnt from all categories (partial "
        "pooling: a small category borrows strength from the others); writes leaderboard_by_category.csv "
        "(category, system, skill with 95%% interval, rank interval, P(best) in the category)",
    )
    p.add_argument(
        "--annotator-effect",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="ratings likelihood: add each annotator's severity (scale sigma_zeta estimated), so that "
        "who rated which system does not bias the skills; write annotators.csv. Default: on where the scores "
        "identify it (two or more annotators whose scores link every system: the annotator-system graph is "
        "connected), off otherwise; the command says which and why. --no-annotator-effect turns it off",
    )
    p.add_argument(
        "--cluster-prompts",
        choices=list(CLUSTER_MODES),
        default=None,
        help="skill intervals robust to votes that share a prompt (cluster-robust sandwich); "
        + "; ".join(f"{k}: {v.format(min=MIN_PROMPTS)}" for k, v in CLUSTER_MODES.items())
        + f". Default: {DEFAULT_CLUSTERING} (the page's too)",
    )
    p.add_argument(
        "--annotator-weights",
        action="store_true",
        help="votes likelihood: weigh each vote by its annotator's reliability (Dawid-Skene, kappa against the "
        "estimated truth, 0 for a spammer); write annotator_quality.csv",
    )
    p.add_argument(
        "--next",
        type=non_negative_int,
        default=0,
        metavar="N",
        help="write next_batch.csv: the N (pair, prompt) judgments that most reduce the "
        "ranking's uncertainty (pairwise likelihoods: votes or cells)",
    )
    p.add_argument(
        "--win-matrix-top",
        type=count,
        default=WIN_MATRIX_TOP,
        metavar="K",
        help=f"win_matrix.csv holds the pairs of the top K systems (default {WIN_MATRIX_TOP}: "
        f"{WIN_MATRIX_TOP * (WIN_MATRIX_TOP - 1) // 2:,} pairs); K systems have K (K - 1) / 2 pairs",
    )
    p.add_argument(
        "--max-memory",
        type=positive_float,
        default=MAX_MEMORY_GB,
        metavar="GB",
        help=f"refuse, before computing, a fit estimated to need more memory (default {MAX_MEMORY_GB:g} GB)",
    )
    p.add_argument(
        "--max-minutes",
        type=positive_float,
        default=MAX_MINUTES,
        metavar="M",
        help=f"refuse, before computing, a fit estimated to take longer (default {MAX_MINUTES:g} minutes)",
    )
    p.add_argument(
        "--robustness",
        action="store_true",
        help="write robustness.csv: for each adjacent pair of the top systems (the top pair first), the fewest votes "
        "whose removal swaps them, found by their influence on the fit and confirmed by refitting without them, with "
        "the input file's rows of those votes (pairwise votes, MAP + Laplace; each pair takes one refit or a few)",
    )
    p.add_argument(
        "--robustness-top",
        type=count,
        default=None,
        metavar="K",
        help=f"--robustness for the adjacent pairs of the top K systems (default {ROBUSTNESS_TOP}: "
        f"{ROBUSTNESS_TOP - 1} pairs)",
    )
    add_sampling_options(p, "ranking", laplace=True)
    add_verbose_option(p)
    finish_parser(p, run)


def _names(value: str) -> list[str]:
    """``A,B`` as ``["A", "B"]`` (blanks left out)."""
    return [name.strip() for name in value.split(",") if name.strip()]


def run(args: argparse.Namespace) -> int:
    """Fit the leaderboard to ``--input``, write ``OUTPUTS`` to ``--out`` and print the leaderboard.

    Returns
    -------
    int
        0; :data:`lib.cli.EXIT_NOT_CONVERGED` for a NUTS fit whose chains did not converge (``diagnostics.json``
        says ``"converged": false``; the tables keep their rows and the data's columns, every estimate left
        empty, :func:`lib.ranking.run.withhold_estimates`).

    Raises
    ------
    lib.errors.SettingsError
        An option that does not fit the format (``--position-column``, ``--annotator-effect``,
        ``--robustness``: :func:`lib.ranking.robustness.check_robustness`), a negative ``--next``,
        ``--robustness-top`` without ``--robustness``, or ``--target-ess`` for a fit whose sampler does not
        sample to one.
    """
    import time

    from lib.cli import parse_columns, progress_printer
    from lib.inference.timings import PhaseTimer
    from lib.io.export import prepare_out
    from lib.ranking.data import AnnotatorDesign, annotator_design_of
    from lib.ranking.fit import RankSettings, rank_settings
    from lib.ranking.likelihoods import LIKELIHOODS
    from lib.ranking.run import rank_systems, withhold_estimates

    started = time.perf_counter()
    _check_options(args)
    style = args.style_control or bool(args.style_columns)
    if args.position_column:  # the pairwise format's optional role "position"
        args.columns = ",".join(filter(None, [args.columns, f"position={args.position_column}"]))

    def settings_for(design: AnnotatorDesign) -> RankSettings:
        """--draws and --target-ess as `fit` takes them, for the sampler the fit runs (Laplace's NUTS fallback
        too, where ``design`` models the annotators' severities by default)."""
        return rank_settings(
            likelihood=args.likelihood,
            baseline=args.baseline,
            intransitivity=args.intransitivity,
            position_bias="position" in parse_columns(args.columns),
            annotator_effect=args.annotator_effect,
            annotator_weights=args.annotator_weights,
            style_control=style,
            by_category=args.by == "category",
            design=design,
            **({"cluster_prompts": args.cluster_prompts} if args.cluster_prompts is not None else {}),
            **{k: getattr(args, k) for k in ("sampler", "chains", "draws", "tune", "target_ess", "seed")},
        )

    # Checked before anything is written; the default annotator effect (None), decided by the scores, is
    # counted as on for a ratings file (its NUTS takes --target-ess) until the file is read.
    settings_for(AnnotatorDesign(args.format == "ratings", ""))
    out = prepare_out(args.out, OUTPUTS, overwrite=args.overwrite)
    # Votes are ranked from the votes: the pairs x prompts matrix is built only for a likelihood that reads it.
    reading = time.perf_counter()
    data = read_input(args, matrix=args.likelihood is not None and LIKELIHOODS[args.likelihood].matrix)
    read_s = time.perf_counter() - reading
    # annotator_effect stays None (rank_systems decides it again and says so); the sizes follow the decision
    settings = settings_for(annotator_design_of(data, args.likelihood))
    judged = _judge(args.judge, data) if args.judge else None  # its errors come before the long fit
    if args.robustness:
        from lib.ranking.robustness import check_robustness

        check_robustness(data, settings)
    result = rank_systems(
        data,
        settings,
        n_next=args.next,
        win_top=args.win_matrix_top,
        max_memory_gb=args.max_memory,
        max_minutes=args.max_minutes,
        progress=progress_printer(),
    )
    PhaseTimer(result.fit.diagnostics.timings).add("read", read_s)  # diagnostics.json's timings
    if unconverged := result.fit.diagnostics.converged is False:
        result = withhold_estimates(result)
    # no robustness of estimates withheld: its refits would start from chains that did not converge
    robustness = _robustness(data, result, args.robustness_top) if args.robustness and not unconverged else None
    written = _write_outputs(result, out, judged, robustness)
    if judged is not None:
        _print_judged(judged)
    _print_result(result, default_sampler=args.sampler is None)
    if robustness is not None:
        _print_robustness(robustness)
    return finish_fit(args, result.fit.diagnostics, started, out, written)


def _check_options(args: argparse.Namespace) -> None:
    """Raise SettingsError for options that do not fit the format or each other (before anything is read)."""
    if args.next < 0:
        raise SettingsError(f"--next must be 0 or more (got {args.next})")
    if args.position_column and args.format != "pairwise":
        raise SettingsError(f"--position-column needs pairwise votes (one pair shown per row), not {args.format}")
    if args.annotator_effect and args.format != "ratings":
        raise SettingsError(
            f"--annotator-effect needs scores of the ratings format (one system per score), not {args.format}"
        )
    if args.robustness_top is not None and not args.robustness:
        raise SettingsError("--robustness-top K needs --robustness")


def _judge(path: str, data):
    """The judge analysis of ``--judge`` beside the human votes (:func:`lib.judges.run.judge_leaderboard`).

    Raises
    ------
    lib.errors.SettingsError
        The human file yields no pairwise votes.
    """
    from lib.io.tables import read_csv
    from lib.judges.read import read_judge_file
    from lib.judges.run import judge_leaderboard

    if data.judgments is None:
        raise SettingsError(f"--judge needs human pairwise votes to compare with, not the {data.fmt} format")
    name = Path(path).name
    return judge_leaderboard(data.judgments.votes, read_judge_file(read_csv(Path(path), name), file=name))


def _print_judged(judged) -> None:
    """The judges' quality, the notes and the effective human sample size of ``--judge``."""
    for note in judged.notes:
        print(f"note: {note}")
    print(judged.quality.table.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    d = judged.diagnostics
    print(
        f"prediction-powered skills: lambda = {d['lambda']:.3f}; the {d['human_votes']} human votes are worth "
        f"{d['effective_human_n']:.0f} (effective human sample size)"
    )


def _robustness(data, result, top: int | None):
    """``robustness.csv``'s table (:func:`lib.ranking.robustness.vote_robustness`), its time estimated first."""
    from lib.cli import progress_printer
    from lib.ranking.robustness import ROBUSTNESS_TOP, estimate_text, vote_robustness

    top = top or ROBUSTNESS_TOP
    print(f"{estimate_text(result, top)}", flush=True)
    return vote_robustness(data, result, top=top, progress=progress_printer())


def _print_robustness(table) -> None:
    """How many votes hold each adjacent pair: the count and share, or the note where no flip is confirmed."""
    print("how many votes hold the order (robustness.csv):")
    for r in table.itertuples():
        held = f"flips if {r.votes_to_flip:,} votes ({r.share_of_votes:.3%}) are dropped" if r.confirmed else r.note
        print(f"  {r.system_a} above {r.system_b} (gap {r.gap:.3f}): {held} [{r.refits} refits]")


def _write_outputs(result, out: Path, judged=None, robustness=None) -> list[str]:
    """Write the result's tables to ``out`` (staged, so no partial outputs); returns the names written."""
    from lib.io.export import csv_text
    from lib.ranking.run import diagnostics_text

    board = result.leaderboard
    if judged is not None:
        from lib.judges.run import JUDGE_COLUMNS

        board = board.merge(judged.leaderboard[["system", *JUDGE_COLUMNS]], on="system", how="left")
    extra = {"estimate": result.cost.as_json()} if result.cost is not None else {}  # beside the timings it estimated
    diagnostics = diagnostics_text(result, extra | (judged.diagnostics if judged is not None else {}))
    texts = {
        "leaderboard.csv": csv_text(board),
        "win_matrix.csv": csv_text(result.win_matrix),
        "diagnostics.json": diagnostics,
    }
    if judged is not None:
        texts["judge_quality.csv"] = csv_text(judged.quality.table)
    if result.next_batch is not None:
        texts["next_batch.csv"] = csv_text(result.next_batch)
    if result.severity is not None:
        texts["annotators.csv"] = csv_text(result.severity)
    if result.annotator_quality is not None:
        texts["annotator_quality.csv"] = csv_text(result.annotator_quality)
    if result.by_category is not None:
        texts["leaderboard_by_category.csv"] = csv_text(result.by_category)
    if robustness is not None:
        texts["robustness.csv"] = csv_text(robustness)
    # Staged in a temporary folder inside --out and moved in at the end: no partial outputs.
    with tempfile.TemporaryDirectory(dir=out, prefix=".rank-") as staging:
        for name, text in texts.items():
            (Path(staging) / name).write_text(text, encoding="utf-8")
        for name in texts:
            (Path(staging) / name).replace(out / name)
    return list(texts)


def _print_result(result, *, default_sampler: bool) -> None:
    """Print the notes, the read-outs asked for (position bias, annotator severity, intransitivity), the
    warnings (to stderr), the sampler and the leaderboard."""
    for note in result.notes:
        print(f"note: {note}")
    if result.position is not None:
        g = result.position.iloc[0]
        print(
            f"position bias gamma (logits; > 0 favours the system shown first): {g['mean']:.3f}, "
            f"95% interval {g['low']:.3f} to {g['high']:.3f}"
        )
    if result.severity_scale is not None:
        z = result.severity_scale.iloc[0]
        print(
            f"annotator severity: sigma_zeta (logits) {z['mean']:.3f}, 95% interval {z['low']:.3f} to "
            f"{z['high']:.3f}; most severe first in annotators.csv"
        )
    if result.category_spread is not None:
        z = result.category_spread.iloc[0]
        print(
            f"by category: spread of the systems' skills across categories sigma_category (logits) {z['mean']:.3f}, "
            f"95% interval {z['low']:.3f} to {z['high']:.3f}; each category's leaderboard in "
            "leaderboard_by_category.csv"
        )
    if result.style is not None:
        print("style coefficients (logits per SD; > 0: the answer with more of it wins more often):")
        for row in result.style.itertuples():
            print(
                f"  {row.feature}: {row.mean:.3f}, 95% interval {row.low:.3f} to {row.high:.3f} "
                f"(Bradley–Terry {row.bt_mean:.3f}, {row.bt_low:.3f} to {row.bt_high:.3f})"
            )
    if result.intransitive is not None:
        print(
            f"intransitivity: tau = {result.tau:.3f}; {len(result.intransitive)} pairs whose deviation "
            "interval excludes 0" + "".join(f"\n  {note}" for note in result.intransitive["note"])
        )
    for w in result.fit.diagnostics.warnings:
        print(f"warning: {w}", file=sys.stderr)
    d = result.fit.diagnostics
    print(
        f"fitted with {d.sampler}"
        + (f" (default sampler: {result.fit.settings.sampler})" if default_sampler else "")
        + f" in {d.wall_s:.1f} s"
        + (f": {result.fit.route}" if result.fit.route else "")
    )
    print_target_ess(d)
    columns = ["system", "skill_mean", "rank_low", "rank_high", "p_best", "bt_rating"]
    if result.style is not None:
        columns += ["skill_uncontrolled", "rank_change"]
    if result.leaderboard["component"].max() > 1:  # ranked within each group of linked systems
        columns.append("component")
    shown = result.leaderboard[columns]
    print(shown.to_string(index=False, float_format=lambda v: f"{v:.3f}", na_rep=""))
