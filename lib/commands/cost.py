"""``python -m lib cost``: human cost of using a model (Casares et al. 2022) on a study CSV."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from lib.cli import add_columns_option, parse_columns


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "cost",
        help="loss, effort, cost curves and break-even n of a with/without-model study",
        description=(
            "Mean loss per task with Table-1 tests and Holm correction, median effort per component "
            "(first instance = D_H + W_H), C_H(n) and C_H,M(n) of Eqs. 2-3 and Spearman correlations "
            "(Casares et al. 2022). Roles: condition, participant, task, instance, usefulness, "
            "prompt_time_s, unwrap_time_s, validate_time_s, solve_time_s, external_loss."
        ),
    )
    parser.add_argument("--input", required=True, help="study CSV, one row per participant x task instance")
    parser.add_argument("--with-label", default=None, help="condition label meaning 'with the model' (default: guessed)")
    parser.add_argument("--weights", default=None, help="alpha,beta,gamma,delta of Eqs. 2-3 (default 1,1,1,1)")
    parser.add_argument("--n-max", type=int, default=20, help="cost curve for n = 1..N instances (default 20)")
    parser.add_argument(
        "--covariates",
        default=None,
        help="participant covariates NAME[=LOW<...<HIGH],... (default: numeric and known ordered columns; '' for none)",
    )
    add_columns_option(parser)
    parser.add_argument("--out", required=True, help="output directory")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    import pandas as pd

    from lib.cost.analysis import analyse
    from lib.cost.costs import parse_weights
    from lib.cost.schema import parse_covariates, read_study
    from lib.formats import read_csv

    path = Path(args.input)
    weights = parse_weights(args.weights)
    study = read_study(
        read_csv(path, path.name),
        parse_columns(args.columns),
        with_label=args.with_label,
        covariates=parse_covariates(args.covariates),
        file=path.name,
    )
    res = analyse(study, weights=weights, n_max=args.n_max)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    files = {
        "loss_table.csv": res.loss_table,
        "loss_tests.csv": res.loss_tests,
        "effort_medians.csv": res.effort_medians,
        "effort_tests.csv": res.effort_tests,
        "cost_terms.csv": res.cost_terms,
        "cost_curve.csv": res.cost_curve,
        "loss_by_difficulty.csv": res.difficulty,
        "spearman.csv": res.spearman,
    }
    for name, table in files.items():
        table.to_csv(out / name, index=False)
    for message in res.warnings:
        print(f"warning: {message}", file=sys.stderr)
    print(f"{study.file}: {len(study.data)} rows, {len(study.tasks)} tasks, with model = '{study.with_label}'")
    for t in res.cost_terms.itertuples():
        if pd.isna(t.setup):
            verdict = "cost not computed (see warnings)"
        elif pd.isna(t.break_even_n):
            verdict = "the model never pays"
        else:
            verdict = f"the model pays from n = {t.break_even_n} instances"
        print(f"  {t.task}: {verdict}")
    print(f"wrote {', '.join(files)} to {out}")
    return 0
