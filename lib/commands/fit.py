"""``python -m lib fit``: the Bayesian IRT fit of a judgment file, written to a folder."""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from lib.cli import (
    EXIT_CODES,
    add_input_options,
    add_sampling_options,
    add_verbose_option,
    finish_fit,
    finish_parser,
    print_target_ess,
    progress_printer,
    read_input,
)
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
        + " (default: chosen from the format and the design, lib.irt.data_checks.auto_cutpoints)",
    )
    p.add_argument(
        "--sampler",
        choices=list(SAMPLERS),
        default=FitSettings.sampler,
        help="; ".join(f"{s.name}: {s.help}" for s in SAMPLERS.values()),
    )
    add_sampling_options(p, "grm", reported="theta, alpha and b")
    add_verbose_option(p)
    finish_parser(p, run)


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

    from lib.inference.diagnostics import diagnostics_json, withhold
    from lib.inference.timings import PhaseTimer
    from lib.io.export import csv_text, prepare_out
    from lib.irt.data_checks import auto_cutpoints
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
    if fit.diagnostics.converged is False:
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
    print_target_ess(fit.diagnostics)
    return finish_fit(args, fit.diagnostics, started, out, OUTPUTS)
