"""``python -m lib select``: how few prompts still tell systems apart (leave-one-out SE curve)."""

from __future__ import annotations

import argparse
import sys

from lib.cli import (
    add_input_options,
    count,
    finish_parser,
    finite_float,
    non_negative_int,
    positive_float,
    read_input,
    seed,
)
from lib.errors import SettingsError
from lib.irt.settings import CUTPOINTS, FULL_MODE_SETTINGS, SAMPLERS, FitSettings, default_cutpoints
from lib.selection.settings import DEFAULT_RANDOM_DRAWS, DEFAULT_TARGET_SE, MODES
from lib.selection.strategies import STRATEGIES

OWN_FILES = ("selection_curve.csv", "prompts_needed.csv", "subset_*.csv", "groups.csv")


def add_parser(sub: argparse._SubParsersAction) -> None:
    """The ``select`` subcommand and its options."""
    p = sub.add_parser(
        "select",
        help="leave-one-out SE curve of prompt-selection strategies",
        description="For each comparison, calibrate the prompts on the other comparisons, select k "
        "prompts by each strategy and estimate the held-out ability from them (Sedoc & Ungar 2020, "
        "Fig. 2). Writes selection_curve.csv, prompts_needed.csv, subset_<strategy>.csv and groups.csv "
        "to --out.",
    )
    add_input_options(p, "CSV of judgments, ratings or responses")
    p.add_argument(
        "--strategies",
        default=",".join(STRATEGIES),
        help="comma-separated (default: all): " + "; ".join(f"{s.name}: {s.help}" for s in STRATEGIES.values()),
    )
    p.add_argument(
        "--mode",
        choices=list(MODES),
        default=next(iter(MODES)),
        help="; ".join(f"{name}: {text}" for name, text in MODES.items()),
    )
    p.add_argument(
        "--target-se",
        type=positive_float,
        default=DEFAULT_TARGET_SE,
        help=f"SE of theta to reach, the same in both modes (default {DEFAULT_TARGET_SE}: reliability 0.91)",
    )
    p.add_argument(
        "--k",
        default=None,
        help="comma-separated subset sizes (default: about 12 roughly geometric steps from 5 to all prompts)",
    )
    p.add_argument("--random-draws", type=count, default=DEFAULT_RANDOM_DRAWS, help="random orders per comparison")
    p.add_argument("--theta0", type=finite_float, default=0.0, help="ability where max_info ranks prompts")
    p.add_argument(
        "--cutpoints",
        choices=list(CUTPOINTS),
        default=None,
        help="default: antisymmetric for votes and ratings, free for responses",
    )
    p.add_argument(
        "--sampler",
        choices=[s.name for s in SAMPLERS.values() if s.posterior],
        default=next(iter(SAMPLERS)),
        help="full mode: the NUTS sampler of the posterior fits",
    )
    p.add_argument("--chains", type=count, default=FULL_MODE_SETTINGS["chains"], help="full mode: NUTS chains")
    p.add_argument("--draws", type=count, default=FULL_MODE_SETTINGS["draws"], help="full mode: draws per chain")
    p.add_argument(
        "--tune",
        type=non_negative_int,
        default=FULL_MODE_SETTINGS["tune"],
        help="full mode: tuning iterations per chain",
    )
    p.add_argument("--seed", type=seed, default=0)
    p.add_argument(
        "--scheduler",
        default=None,
        metavar="ADDRESS",
        help="full mode: Dask scheduler (tcp://HOST:8786) to run the held-out comparisons on "
        "(default: an embedded cluster on this machine)",
    )
    finish_parser(p, run)


def run(args: argparse.Namespace) -> int:
    """Calibrate the prompts of ``--input``, write the leave-one-out SE curve and the prompts needed
    per strategy (``OWN_FILES``) to ``--out``.

    Raises
    ------
    lib.errors.SettingsError
        A ``--target-se`` that is not positive, or ``--scheduler`` without ``--mode full``.
    """
    from contextlib import nullcontext

    from lib.engine.cluster import Engine
    from lib.io.export import prepare_out, write_csv
    from lib.selection.analysis import run as run_selection
    from lib.selection.strategies import check_strategies

    strategies = check_strategies([s.strip() for s in args.strategies.split(",") if s.strip()])
    if not args.target_se > 0:
        raise SettingsError(f"--target-se must be positive (got {args.target_se})")
    if args.scheduler and args.mode != "full":
        raise SettingsError("--scheduler is for --mode full (the fast mode runs in this process)")
    out = prepare_out(args.out, OWN_FILES, overwrite=args.overwrite)
    data = read_input(args)
    rm = data.matrix
    settings = FitSettings(
        cutpoints=args.cutpoints or default_cutpoints(args.format),
        sampler=args.sampler,
        chains=args.chains,
        draws=args.draws,
        tune=args.tune,
        seed=args.seed,
    )

    def report(fraction: float, message: str) -> None:
        print(f"[{fraction:4.0%}] {message}", flush=True)

    print(f"{rm.shape[0]} comparisons x {rm.shape[1]} prompts; calibrating ({args.mode} mode)", flush=True)
    # Full mode: the held-out comparisons are independent tasks on a Dask cluster (the same result).
    with Engine(args.scheduler) if args.mode == "full" else nullcontext() as engine:
        result = run_selection(
            rm,
            strategies,
            mode=args.mode,
            settings=settings,
            k_grid=args.k or None,
            n_random=args.random_draws,
            theta0=args.theta0,
            seed=args.seed,
            progress=report,
            engine=engine,
        )
    for message in result.warnings:
        print(f"warning: {message}", file=sys.stderr)
    needed = result.needed(args.target_se)
    write_csv(result.curve.summary, out / "selection_curve.csv")
    write_csv(needed, out / "prompts_needed.csv")
    write_csv(rm.groups, out / "groups.csv")
    texts = data.judgments.prompt_texts if data.judgments is not None else None
    written = ["selection_curve.csv", "prompts_needed.csv", "groups.csv"]
    for strategy, subset, note in result.subsets(needed, texts):
        if note:
            print(f"note: {note}")
        if subset is not None:
            write_csv(subset, out / f"subset_{strategy}.csv")
            written.append(f"subset_{strategy}.csv")
    print(needed.to_string(index=False))
    print(f"wrote {out}/" + ", ".join(written))
    return 0
