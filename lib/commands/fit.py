"""``python -m lib fit``: the Bayesian IRT fit of a judgment file, written to a folder."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path

from lib.cli import add_columns_option, parse_columns
from lib.formats import FORMATS


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "fit",
        help="fit the graded response model to a judgment file",
        description="Fit the Bayesian graded response model (Sedoc & Ungar 2020) and write "
        "abilities.csv, prompts.csv, diagnostics.json and posterior.nc to --out.",
    )
    p.add_argument("--input", required=True, help="CSV of judgments")
    p.add_argument("--format", required=True, choices=[f for f in FORMATS])
    p.add_argument("--criterion", default=None, help="criterion to fit when the file has several")
    add_columns_option(p)
    p.add_argument("--cutpoints", choices=["antisymmetric", "free"], default=None,
                   help="default: antisymmetric for votes and ratings, free for responses")
    p.add_argument("--sampler", choices=["numpyro", "pymc", "nutpie", "map"], default="numpyro")
    p.add_argument("--chains", type=int, help="default 4")
    p.add_argument("--draws", type=int, help="draws per chain, default 1000")
    p.add_argument("--tune", type=int, help="tuning iterations per chain, default 500")
    p.add_argument("--seed", type=int)
    p.add_argument("--no-merge", action="store_true", help="do not average redundant prompts")
    p.add_argument("--out", required=True, help="output folder (created)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from lib.formats import read_csv
    from lib.inputs import analysis_input
    from lib.irt.fit import FitSettings, fit_grm
    from lib.irt.summary import ability_table, prompt_table

    path = Path(args.input)
    data = analysis_input(
        read_csv(path, path.name), args.format, parse_columns(args.columns), file=path.name,
        criterion=args.criterion, merge_redundant=not args.no_merge,
    )
    cutpoints = args.cutpoints or ("free" if args.format == "responses" else "antisymmetric")
    given = {k: getattr(args, k) for k in ("chains", "draws", "tune", "seed") if getattr(args, k) is not None}
    settings = FitSettings(cutpoints=cutpoints, sampler=args.sampler, **given)
    fit = fit_grm(data.matrix, settings, use_cache=False,
                  progress=lambda f, msg: print(f"[{f:4.0%}] {msg}", flush=True))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    ability_table(fit, data.matrix).to_csv(out / "abilities.csv", index=False)
    prompt_table(fit, data.matrix).drop(columns="b_mean").to_csv(out / "prompts.csv", index=False)
    (out / "diagnostics.json").write_text(json.dumps(asdict(fit.diagnostics), indent=2))
    fit.idata.to_netcdf(str(out / "posterior.nc"))
    for w in fit.diagnostics.warnings:
        print(f"warning: {w}")
    print(f"wrote {out}/abilities.csv, prompts.csv, diagnostics.json, posterior.nc")
    return 0
