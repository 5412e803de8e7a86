"""``python -m lib plan``: power, interval width and cost of candidate study designs, simulated on Dask."""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace

from lib.cli import add_input_options, add_out_option
from lib.errors import SettingsError
from lib.planning.design import NUTS_CHECK_SETTINGS, Assumptions, Design
from lib.typed import whole_numbers

OWN_FILES = ("power.csv", "cheapest.csv", "ranking.csv", "calibration.csv", "nuts_check.csv")


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "plan",
        help="power, interval width and cost of study designs (simulated studies on Dask)",
        description="Simulate many studies of every design (prompts x annotators x prompt strategy x "
        "analysis) from a pilot (--input, posterior predictive of its fit) or stated assumptions "
        "(--systems, --effect), analyse each as the user would, and write power.csv (power with its "
        "Monte-Carlo SE, interval width, Kendall's tau, judgments, hours, cost), cheapest.csv (the "
        "cheapest design reaching --target-power), ranking.csv (how often the true best system is "
        "estimated best), calibration.csv (grm_map's calibration under the null) and, with "
        "--nuts-check, nuts_check.csv to --out. docs/planner.md explains the statistics.",
    )
    pilot = p.add_argument_group("pilot (instead of --systems)")
    add_input_options(pilot, "CSV of the pilot's judgments, ratings or responses", required=False)
    p.add_argument("--systems", type=int, default=None,
                   help=f"without a pilot: systems compared, all pairs (default {Assumptions.n_systems})")
    p.add_argument("--effect", type=float, default=Assumptions.effect,
                   help="smallest difference worth detecting, theta in logits (default %(default)s)")
    p.add_argument("--prompts", default="25,50,100,200", help="prompts per comparison, comma-separated")
    p.add_argument("--annotators", default="1,3,5", help="annotators per (comparison, prompt), comma-separated")
    p.add_argument("--strategies", default="random,top_alpha", help="prompt choice, comma-separated")
    p.add_argument("--analyses", default=None, help="comma-separated (default: all that fit the data)")
    p.add_argument("--replicates", type=int, default=200, help="simulated studies per design (default %(default)s)")
    p.add_argument("--target-power", type=float, default=0.8, help="power the cheapest design must reach")
    p.add_argument("--seconds-per-judgment", type=float, default=30.0, help="annotator time (default %(default)s)")
    p.add_argument("--cost-per-hour", type=float, default=15.0, help="annotator pay (default %(default)s)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--nuts-check", type=int, default=0, metavar="N",
                   help="also fit the GRM by NUTS on the first N simulated studies of every design size and "
                        "compare it with the GRM analyses (nuts_check.csv; default: no check)")
    p.add_argument("--nuts-draws", type=int, default=NUTS_CHECK_SETTINGS.draws,
                   help=f"draws (and tuning steps) of each of the NUTS check's {NUTS_CHECK_SETTINGS.chains} "
                        "chains (default %(default)s)")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="Dask scheduler (tcp://HOST:8786) to run the studies on (default: an embedded "
                        "cluster on this machine)")
    add_out_option(p)
    p.set_defaults(run=run)


def parse_counts(text: str, option: str) -> list[int]:
    """Whole numbers >= 1 typed as ``"25, 50, 100"``, unique, in the given order.

    Raises
    ------
    SettingsError
        Text that is not whole numbers, or a number below 1 (``option`` names the field).
    """
    values = whole_numbers(text, option)
    if not values or min(values) < 1:
        raise SettingsError(f"{option} must list whole numbers of at least 1 (got '{text}')")
    return list(dict.fromkeys(values))


def parse_names(text: str, known, option: str) -> list[str]:
    """Comma-separated names of a registry, unique, in the given order.

    Raises
    ------
    SettingsError
        An unknown or missing name (``option`` names the field; the known names are listed).
    """
    names = list(dict.fromkeys(n.strip() for n in text.split(",") if n.strip()))
    unknown = [n for n in names if n not in known]
    if unknown or not names:
        problem = f"unknown '{unknown[0]}'" if unknown else "give at least one"
        raise SettingsError(f"{option}: {problem} (choose from {', '.join(known)})")
    return names


def designs(prompts, annotators, strategies, analyses):
    """Every :class:`lib.planning.design.Design` of the grid, prompts varying slowest."""
    return [Design(p, n, s, a) for p in prompts for n in annotators for s in strategies for a in analyses]


def default_analyses(assumptions) -> list[str]:
    """The registered calibrated analyses that apply to the assumptions' response model."""
    from lib.planning.design import ANALYSES

    return [name for name, a in ANALYSES.items()
            if a.calibrated and (assumptions.response == "votes" or not a.votes_only)]


def run(args: argparse.Namespace) -> int:
    from lib.cli import read_input
    from lib.engine import Engine
    from lib.export import prepare_out, write_csv
    from lib.planning.design import ANALYSES, GRM_ANALYSES, STRATEGIES, assumptions_from_pilot
    from lib.planning.power import CALIBRATION_COLUMNS, COLUMNS, RANKING_COLUMNS, cheapest, plan

    if args.input is not None and args.systems is not None:
        raise SettingsError("give a pilot (--input) or stated assumptions (--systems), not both")
    if (args.input is None) != (args.format is None):
        raise SettingsError("--input and --format go together")
    if not 0 < args.target_power < 1:
        raise SettingsError(f"--target-power must be between 0 and 1 (got {args.target_power})")
    prompts = parse_counts(args.prompts, "--prompts")
    annotators = parse_counts(args.annotators, "--annotators")
    strategies = parse_names(args.strategies, STRATEGIES, "--strategies")
    analyses = parse_names(args.analyses, ANALYSES, "--analyses") if args.analyses else None
    for name in analyses or ():
        if not ANALYSES[name].calibrated:
            print(f"warning: {name}: {ANALYSES[name].help}", file=sys.stderr)
    if args.nuts_check < 0:
        raise SettingsError(f"--nuts-check must be 0 or more (got {args.nuts_check})")
    if args.nuts_check and not set(analyses or GRM_ANALYSES) & set(GRM_ANALYSES):
        raise SettingsError(f"--nuts-check compares the GRM analyses: add {' or '.join(GRM_ANALYSES)} to --analyses")
    nuts_settings = replace(NUTS_CHECK_SETTINGS, draws=args.nuts_draws, tune=args.nuts_draws, seed=args.seed)
    nuts_settings.validate()
    out = prepare_out(args.out, OWN_FILES, overwrite=args.overwrite)
    if args.input is not None:
        data = read_input(args)
        print(f"pilot: {data.matrix.shape[0]} comparisons x {data.matrix.shape[1]} prompts; fitting its MAP "
              "point for the prompt bank", flush=True)
        assumptions = assumptions_from_pilot(data, effect=args.effect)
    else:
        assumptions = Assumptions(n_systems=args.systems or Assumptions.n_systems, effect=args.effect)
    grid = designs(prompts, annotators, strategies, analyses or default_analyses(assumptions))
    for design in grid:  # before the cluster starts
        design.validate(assumptions)
    checked = [a for a in dict.fromkeys(d.analysis for d in grid) if a in GRM_ANALYSES]

    def report(done: int, total: int) -> None:
        print(f"[{done / total:4.0%}] {done} of {total} simulated studies", flush=True)

    print(f"{len(grid)} designs x {args.replicates} studies; starting the Dask engine "
          f"({args.scheduler or 'embedded cluster'})", flush=True)
    with Engine(args.scheduler) as engine:
        power = plan(assumptions, grid, replicates=args.replicates, seed=args.seed, engine=engine, progress=report,
                     seconds_per_judgment=args.seconds_per_judgment, cost_per_hour=args.cost_per_hour)
        # NUTS fits go to a cluster named by --scheduler; on this machine's embedded one, two fits at once
        # were slower than one after another (47.0 s against 42.6 s for 4 studies: XLA already uses both cores)
        nuts = nuts_checks(assumptions, grid, checked, args.nuts_check, args.seed, nuts_settings,
                           engine if args.scheduler else None)
    best = cheapest(power, args.target_power)
    calibration = power[power["critical_z"].notna()][CALIBRATION_COLUMNS]
    written = ["power.csv", "cheapest.csv", "ranking.csv"]
    write_csv(power[COLUMNS], out / "power.csv")
    write_csv(best, out / "cheapest.csv")
    write_csv(power[RANKING_COLUMNS], out / "ranking.csv")
    if len(calibration):
        write_csv(calibration, out / "calibration.csv")
        written.append("calibration.csv")
        factors = calibration["calibration_factor"]
        print(f"grm_map calibrated under the null: intervals widened {factors.min():.2f}x to {factors.max():.2f}x "
              f"(nominal 95% intervals excluded 0 in {calibration['nominal_false_detection'].max():.0%} of null "
              "comparisons at most; calibration.csv)")
    if nuts is not None:
        write_csv(nuts, out / "nuts_check.csv")
        written.append("nuts_check.csv")
        print(f"NUTS check: the intervals agree on excluding 0 in {nuts['agree'].mean():.0%} of "
              f"{len(nuts)} comparisons; R-hat max {nuts['rhat_max'].max():.3f}, min bulk ESS "
              f"{nuts['ess_bulk_min'].min():.0f}")
    print(f"cheapest designs reaching power {args.target_power:g}:")
    print(best.to_string(index=False))
    print(f"wrote {out}/{', '.join(written)}")
    return 0


def nuts_checks(assumptions, grid, analyses: list[str], replicates: int, seed: int, settings, engine):
    """:func:`lib.planning.nuts.nuts_check` of every design size of the grid, on the engine when one is
    given (None without replicates), with ``prompts, annotators, strategy`` in front; a line per fitted study."""
    import pandas as pd

    from lib.planning.nuts import nuts_check

    if not replicates:
        return None
    sizes = list(dict.fromkeys((d.prompts, d.annotators, d.strategy) for d in grid if d.analysis in analyses))
    parts = []
    for k, (prompts, annotators, strategy) in enumerate(sizes, 1):
        print(f"NUTS check {k} of {len(sizes)}: {prompts} prompts x {annotators} annotators, {strategy}, "
              f"{replicates} studies", flush=True)
        found = nuts_check(assumptions, Design(prompts, annotators, strategy), replicates, seed=seed,
                           settings=settings, analyses=tuple(analyses), engine=engine,
                           progress=lambda done, total: print(f"  {done} of {total} NUTS fits", flush=True))
        parts.append(found.assign(prompts=prompts, annotators=annotators, strategy=strategy))
    found = pd.concat(parts, ignore_index=True)
    return found[["prompts", "annotators", "strategy", *found.columns[:-3]]]
