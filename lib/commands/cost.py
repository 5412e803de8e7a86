"""``python -m lib cost``: human cost of using a model (Casares et al. 2022) on a study CSV."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from lib.cli import count, finish_parser, parse_columns

DEFAULT_WEIGHT = 0.01
"""``lib.cost.costs.DEFAULT_WEIGHT``, spelled out so that ``--help`` needs no numpy/scipy import."""


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """The ``cost`` subcommand and its options (help text only; the study is read by :func:`run`)."""
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
    parser.add_argument(
        "--with-label", default=None, help="condition label meaning 'with the model' (default: guessed)"
    )
    parser.add_argument(
        "--weights",
        default=None,
        help=f"alpha,beta,gamma,delta of Eqs. 2-3 in loss units per second of effort (default "
        f"{','.join([str(DEFAULT_WEIGHT)] * 4)}: 100 s cost as much as a useless answer)",
    )
    parser.add_argument(
        "--validation-zero",
        action="store_true",
        help="take the validation time V_H as 0 s for tasks where it was not measured (otherwise "
        "those tasks get no cost)",
    )
    parser.add_argument("--n-max", type=count, default=20, help="cost curve for n = 1..N instances (default 20)")
    parser.add_argument(
        "--covariates",
        default=None,
        help="participant covariates NAME[=LOW<...<HIGH],... (default: numeric and known ordered columns; '' for none)",
    )
    finish_parser(parser, run, columns=True)


def run(args: argparse.Namespace) -> int:
    """Read the study CSV, write the cost tables (``FILES``) to ``--out`` and print a verdict per task.

    Returns
    -------
    int
        0; a refused input raises :class:`lib.errors.InputError` (exit 2 in :func:`lib.cli.main`).
    """
    import pandas as pd

    from lib.cost.analysis import FILES, analyse
    from lib.cost.costs import parse_weights
    from lib.cost.schema import parse_covariates, read_study
    from lib.io.export import prepare_out, write_csv
    from lib.judgments.formats import read_csv

    weights = parse_weights(args.weights)
    out = prepare_out(args.out, list(FILES.values()), overwrite=args.overwrite)
    path = Path(args.input)
    study = read_study(
        read_csv(path, path.name),
        parse_columns(args.columns),
        with_label=args.with_label,
        covariates=parse_covariates(args.covariates),
        file=path.name,
    )
    res = analyse(study, weights=weights, n_max=args.n_max, validation_zero=args.validation_zero)
    for name, table in res.files().items():
        write_csv(table, out / name)
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
    print(f"wrote {', '.join(FILES.values())} to {out}")
    return 0
