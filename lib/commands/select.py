"""``python -m lib select``: how few prompts still tell systems apart (leave-one-out SE curve)."""

from __future__ import annotations

import argparse
import sys

from lib.cli import add_input_options, add_out_option, read_input
from lib.errors import SettingsError

STRATEGY_NAMES = ("random", "top_alpha", "max_info", "group", "cat_info", "cat_epv")
"""``lib.selection.STRATEGIES`` spelled out, so that ``--help`` needs no numpy/scipy import."""

TARGET_SE = 0.3
"""``lib.selection.DEFAULT_TARGET_SE``, spelled out for the same reason."""

OWN_FILES = ("selection_curve.csv", "prompts_needed.csv", "subset_*.csv", "groups.csv")


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "select",
        help="leave-one-out SE curve of prompt-selection strategies",
        description="For each comparison, calibrate the prompts on the other comparisons, select k "
        "prompts by each strategy and estimate the held-out ability from them (Sedoc & Ungar 2020, "
        "Fig. 2). Writes selection_curve.csv, prompts_needed.csv, subset_<strategy>.csv and groups.csv "
        "to --out.",
    )
    add_input_options(p, "CSV of judgments, ratings or responses")
    p.add_argument("--strategies", default=",".join(STRATEGY_NAMES),
                   help=f"comma-separated, from {', '.join(STRATEGY_NAMES)} (default: all)")
    p.add_argument("--mode", choices=["fast", "full"], default="fast",
                   help="fast: leave-one-out MAP rescaled to sd(theta)=1; full: posterior draws "
                        "of the items with PSIS leave-one-out (minutes)")
    p.add_argument("--target-se", type=float, default=TARGET_SE,
                   help=f"SE of theta to reach, the same in both modes (default {TARGET_SE}: reliability 0.91)")
    p.add_argument("--k", default=None, help="comma-separated subset sizes (default: about 12 "
                                             "roughly geometric steps from 5 to all prompts)")
    p.add_argument("--random-draws", type=int, default=50, help="random orders per comparison")
    p.add_argument("--theta0", type=float, default=0.0, help="ability where max_info ranks prompts")
    p.add_argument("--cutpoints", choices=["antisymmetric", "free"], default=None,
                   help="default: antisymmetric for votes and ratings, free for responses")
    p.add_argument("--chains", type=int, default=2, help="full mode: NUTS chains")
    p.add_argument("--draws", type=int, default=500, help="full mode: draws per chain")
    p.add_argument("--tune", type=int, default=500, help="full mode: tuning iterations per chain")
    p.add_argument("--seed", type=int, default=0)
    add_out_option(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    import pandas as pd

    from lib.export import prepare_out, write_csv
    from lib.selection import (
        PSIS_KHAT_LIMIT,
        STRATEGIES,
        check_selection_data,
        check_strategies,
        default_k_grid,
        loo_curve,
        make_calibration,
        parse_k_grid,
        prompts_needed,
        select_subset,
    )

    strategies = check_strategies([s.strip() for s in args.strategies.split(",") if s.strip()])
    if not args.target_se > 0:
        raise SettingsError(f"--target-se must be positive (got {args.target_se})")
    out = prepare_out(args.out, OWN_FILES, overwrite=args.overwrite)
    data = read_input(args)
    rm = data.matrix
    for message in check_selection_data(rm):
        print(f"warning: {message}", file=sys.stderr)
    ks = parse_k_grid(args.k, rm.shape[1]) if args.k else default_k_grid(rm.shape[1])
    cutpoints = args.cutpoints or ("free" if args.format == "responses" else "antisymmetric")

    def report(fraction: float, message: str) -> None:
        print(f"[{fraction:4.0%}] {message}", flush=True)

    print(f"{rm.shape[0]} comparisons x {rm.shape[1]} prompts; calibrating ({args.mode} mode)", flush=True)
    cal = make_calibration(rm, args.mode, cutpoints=cutpoints, chains=args.chains, draws=args.draws,
                           tune=args.tune, seed=args.seed, progress=report)
    curve = loo_curve(rm.codes(), cal, strategies, ks,
                      n_random=args.random_draws, theta0=args.theta0, seed=args.seed, progress=report)
    needed = prompts_needed(curve.summary, args.target_se)
    write_csv(curve.summary, out / "selection_curve.csv")
    write_csv(needed, out / "prompts_needed.csv")
    write_csv(rm.groups, out / "groups.csv")
    texts = data.judgments.prompt_texts if data.judgments is not None else None
    written = ["selection_curve.csv", "prompts_needed.csv", "groups.csv"]
    for row in needed.itertuples():
        if STRATEGIES[row.strategy].adaptive:
            print(f"note: {row.strategy} is adaptive (prompts chosen per comparison): no fixed subset")
            continue
        reached = not pd.isna(row.k_needed)
        k = int(row.k_needed) if reached else rm.shape[1]
        if not reached:
            print(f"note: {row.strategy} does not reach SE {args.target_se:.3g} (best {row.se_best:.3g}); "
                  "its subset lists all prompts")
        try:
            subset = select_subset(cal, row.strategy, k, prompt_ids=rm.prompt_ids, groups=rm.groups,
                                   texts=texts, theta0=args.theta0, seed=args.seed)
        except SettingsError as err:
            print(f"note: no subset for {row.strategy}: {err}")
            continue
        write_csv(subset, out / f"subset_{row.strategy}.csv")
        written.append(f"subset_{row.strategy}.csv")
    if curve.khat_max is not None and curve.khat_max > PSIS_KHAT_LIMIT:
        print(f"warning: Pareto k-hat up to {curve.khat_max:.2f} (> {PSIS_KHAT_LIMIT}): some leave-one-out "
              "weights are unreliable; the fast mode or more draws may be safer", file=sys.stderr)
    print(needed.to_string(index=False))
    print(f"wrote {out}/" + ", ".join(written))
    return 0
