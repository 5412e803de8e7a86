"""``python -m lib fit``: the Bayesian IRT fit of a judgment file, written to a folder."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from lib.cli import add_input_options, add_out_option, count, non_negative_int, progress_printer, read_input, seed
from lib.irt.settings import CUTPOINTS, SAMPLERS, FitSettings

OUTPUTS = ["abilities.csv", "prompts.csv", "diagnostics.json", "posterior.nc", "groups.csv"]


def add_parser(sub: argparse._SubParsersAction) -> None:
    """The ``fit`` subcommand and its options."""
    p = sub.add_parser(
        "fit",
        help="fit the graded response model to a judgment file",
        description="Fit the Bayesian graded response model (Sedoc & Ungar 2020) and write "
        "abilities.csv, prompts.csv, diagnostics.json, posterior.nc and groups.csv to --out.",
    )
    add_input_options(p, "CSV of judgments")
    p.add_argument(
        "--cutpoints",
        choices=list(CUTPOINTS),
        default=None,
        help="; ".join(f"{name}: {text}" for name, text in CUTPOINTS.items())
        + " (default: chosen from the format and the design, lib.data_checks.auto_cutpoints)",
    )
    p.add_argument(
        "--sampler",
        choices=list(SAMPLERS),
        default=FitSettings.sampler,
        help="; ".join(f"{s.name}: {s.help}" for s in SAMPLERS.values()),
    )
    p.add_argument("--chains", type=count, help=f"default {FitSettings.chains}")
    p.add_argument("--draws", type=count, help=f"draws per chain, default {FitSettings.draws}")
    p.add_argument("--tune", type=non_negative_int, help=f"tuning iterations per chain, default {FitSettings.tune}")
    p.add_argument("--seed", type=seed)
    add_out_option(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Fit the graded response model to ``--input`` and write ``OUTPUTS`` to ``--out``.

    Returns
    -------
    int
        0, also for a fit that did not converge (it prints an error line and ``diagnostics.json``
        says ``"converged": false``); a refused input raises :class:`lib.errors.InputError`.
    """
    from lib.data_checks import auto_cutpoints
    from lib.export import csv_text, prepare_out
    from lib.inference.diagnostics import diagnostics_json
    from lib.irt.fit import fit_grm
    from lib.irt.summary import ability_table, prompt_table

    out = prepare_out(args.out, OUTPUTS, overwrite=args.overwrite)
    data = read_input(args)
    rm = data.matrix
    cutpoints = args.cutpoints or auto_cutpoints(rm, args.format)
    given = {k: getattr(args, k) for k in ("chains", "draws", "tune", "seed") if getattr(args, k) is not None}
    settings = FitSettings(cutpoints=cutpoints, sampler=args.sampler, **given)
    fit = fit_grm(rm, settings, use_cache=False, progress=progress_printer())
    texts = {
        "abilities.csv": csv_text(ability_table(fit, rm)),
        "prompts.csv": csv_text(prompt_table(fit, rm).drop(columns="b_mean")),
        "diagnostics.json": diagnostics_json(fit.diagnostics),
        "groups.csv": csv_text(rm.groups),
    }
    # Everything is written into a temporary folder inside --out first and moved in at the end,
    # so a failure (e.g. the netcdf writer) leaves no partial outputs.
    with tempfile.TemporaryDirectory(dir=out, prefix=".fit-") as staging:
        fit.idata.to_netcdf(str(Path(staging) / "posterior.nc"))
        for name, text in texts.items():
            (Path(staging) / name).write_text(text, encoding="utf-8")
        for name in OUTPUTS:
            (Path(staging) / name).replace(out / name)
    for w in fit.diagnostics.warnings:
        print(f"warning: {w}")
    print(f"wrote {out}/{', '.join(OUTPUTS)}")
    if fit.diagnostics.converged is False:
        print(
            'error: the fit did NOT converge (diagnostics.json: "converged": false): its abilities and '
            "intervals are not to be reported; see the warnings above.",
            file=sys.stderr,
        )
    return 0
