"""``python -m lib fit``: the Bayesian IRT fit of a judgment file, written to a folder."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from lib.cli import (
    EXIT_CODES,
    EXIT_NOT_CONVERGED,
    NOT_CONVERGED_ERROR,
    add_input_options,
    add_out_option,
    add_verbose_option,
    count,
    non_negative_int,
    print_target_ess,
    print_timings,
    progress_printer,
    read_input,
    seed,
)
from lib.inference.settings import TARGET_CEILING, TARGET_CHUNK, TARGET_ESS, TARGET_TUNE
from lib.irt.settings import CUTPOINTS, SAMPLERS, FitSettings, fit_settings

OUTPUTS = ["abilities.csv", "prompts.csv", "diagnostics.json", "posterior.nc", "groups.csv"]


def add_parser(sub: argparse._SubParsersAction) -> None:
    """The ``fit`` subcommand and its options."""
    p = sub.add_parser(
        "fit",
        help="fit the graded response model to a judgment file",
        description="Fit the Bayesian graded response model (Sedoc & Ungar 2020) and write "
        "abilities.csv, prompts.csv, diagnostics.json, posterior.nc and groups.csv to --out.",
        epilog=EXIT_CODES,
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
    p.add_argument(
        "--draws",
        type=count,
        help=f"draws per chain, default {FitSettings.draws}; given without --target-ess, exactly this many "
        f"(no target); with a target, the ceiling (default {TARGET_CEILING})",
    )
    p.add_argument(
        "--tune",
        type=non_negative_int,
        help=f"tuning iterations per chain, default {FitSettings.tune} ({TARGET_TUNE} when sampling to a target ESS)",
    )
    p.add_argument(
        "--target-ess",
        type=count,
        default=None,
        metavar="N",
        help=f"numpyro: warm up from jittered points around the priors' centres, then draw {TARGET_CHUNK} per chain "
        "at a time until the bulk and tail ESS of every theta, alpha and b reach N and their R-hat is at most 1.01, "
        f"or --draws per chain are drawn (diagnostics.json says which: 'stopped'). Default {TARGET_ESS} unless "
        "--draws is given",
    )
    p.add_argument("--seed", type=seed)
    add_verbose_option(p)
    add_out_option(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Fit the graded response model to ``--input`` and write ``OUTPUTS`` to ``--out``.

    Returns
    -------
    int
        0; :data:`lib.cli.EXIT_NOT_CONVERGED` for a fit whose chains did not converge (``diagnostics.json``
        says ``"converged": false``; abilities.csv and prompts.csv keep their rows and the data's columns,
        every estimate left empty; posterior.nc holds the draws for diagnosis). A refused input raises
        :class:`lib.errors.InputError`.
    """
    import time
    from dataclasses import replace

    from lib.data_checks import auto_cutpoints
    from lib.export import csv_text, prepare_out
    from lib.inference.diagnostics import diagnostics_json, withhold
    from lib.inference.timings import PhaseTimer
    from lib.irt.fit import fit_grm
    from lib.irt.summary import ABILITY_DATA, PROMPT_DATA, ability_table, prompt_table

    started = time.perf_counter()
    chosen = {k: getattr(args, k) for k in ("chains", "draws", "tune", "target_ess", "seed")}
    settings = fit_settings(sampler=args.sampler, **chosen)  # refused before reading (a target pymc cannot take)
    out = prepare_out(args.out, OUTPUTS, overwrite=args.overwrite)
    timer = PhaseTimer()
    with timer.phase("read"):
        data = read_input(args)
    rm = data.matrix
    settings = replace(settings, cutpoints=args.cutpoints or auto_cutpoints(rm, args.format))
    fit = fit_grm(rm, settings, use_cache=False, progress=progress_printer(), timer=timer)
    with timer.phase("read-outs"):
        abilities, prompts = ability_table(fit, rm), prompt_table(fit, rm)
    if unconverged := fit.diagnostics.converged is False:
        abilities, prompts = withhold(abilities, ABILITY_DATA), withhold(prompts, PROMPT_DATA)
    texts = {
        "abilities.csv": csv_text(abilities),
        "prompts.csv": csv_text(prompts.drop(columns="b_mean")),
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
    d = fit.diagnostics
    print_target_ess(d)
    if args.verbose:
        print_timings(d.timings, started)
    print(f"wrote {out}/{', '.join(OUTPUTS)}")
    if unconverged:
        print(NOT_CONVERGED_ERROR, file=sys.stderr)
        return EXIT_NOT_CONVERGED
    return 0
