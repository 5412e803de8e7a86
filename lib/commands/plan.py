"""``python -m lib plan``: power, interval width and cost of candidate study designs, simulated on Dask."""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace

from lib.cli import (
    add_input_options,
    count,
    finish_parser,
    non_negative_float,
    non_negative_int,
    probability,
    seed,
)
from lib.errors import SettingsError
from lib.planning.design import ANALYSES, MAX_MINUTES, NUTS_CHECK_SETTINGS, PRESETS, RESPONSES, Assumptions, Design
from lib.planning.grid import PLAN_DEFAULTS, default_analyses, designs, pairs_read, parse_counts

OWN_FILES = (
    "power.csv",
    "power_pairs.csv",
    "cheapest.csv",
    "ranking.csv",
    "calibration.csv",
    "nuts_check.csv",
    "simulator_check.csv",
)


def add_parser(sub: argparse._SubParsersAction) -> None:
    """The ``plan`` subcommand and its options."""
    p = sub.add_parser(
        "plan",
        help="power, interval width and cost of study designs (simulated studies on Dask)",
        description="Simulate many studies of every design (prompts x annotators x prompt strategy x "
        "analysis) from a pilot (--input, posterior predictive of its fit) or stated assumptions "
        "(--systems, --effect), analyse each as the user would, and write power.csv (power with its "
        "Monte-Carlo SE at each analysis's nominal 5% level, interval width, Kendall's tau, judgments, hours, "
        "cost, the real false-detection rate under the design and whether the analysis is valid there), "
        "cheapest.csv (the cheapest design reaching --target-power with a valid test, else what would), "
        "ranking.csv (how often the true best system is estimated best), calibration.csv (the threshold "
        "that holds 5% under the assumptions and the power at it) and, with --nuts-check, nuts_check.csv "
        "to --out. docs/planner.md explains the statistics.",
    )
    pilot = p.add_argument_group("pilot (instead of --systems)")
    add_input_options(pilot, "CSV of the pilot's judgments, ratings or responses", required=False)
    p.add_argument(
        "--systems",
        type=count,
        default=None,
        help=f"without a pilot: systems compared, all pairs (default {Assumptions.n_systems})",
    )
    p.add_argument(
        "--effect",
        type=non_negative_float,
        default=Assumptions.effect,
        help="smallest difference worth detecting, theta in logits (default %(default)s; 0 plans a null "
        "design: power is then each analysis's false-detection rate)",
    )
    d = PLAN_DEFAULTS
    p.add_argument(
        "--prompts",
        default=None,
        help=f"prompts per comparison, comma-separated (default {','.join(map(str, d.prompts))}, those the bank holds)",
    )
    p.add_argument(
        "--annotators",
        default=",".join(map(str, d.annotators)),
        help="annotators per (comparison, prompt), comma-separated (default %(default)s)",
    )
    p.add_argument(
        "--strategies", default=",".join(d.strategies()), help="prompt choice, comma-separated (default %(default)s)"
    )
    p.add_argument(
        "--analyses",
        default=None,
        help="comma-separated (default: "
        + ", ".join(n for n, a in ANALYSES.items() if a.default)
        + ", those that fit the data)",
    )
    p.add_argument(
        "--replicates", type=count, default=d.replicates, help="simulated studies per design (default %(default)s)"
    )
    p.add_argument(
        "--target-power",
        type=probability,
        default=d.target_power,
        help="power the cheapest design must reach (default %(default)s)",
    )
    p.add_argument(
        "--seconds-per-judgment",
        type=non_negative_float,
        default=d.seconds_per_judgment,
        help="annotator time (default %(default)s)",
    )
    p.add_argument(
        "--cost-per-hour", type=non_negative_float, default=d.cost_per_hour, help="annotator pay (default %(default)s)"
    )
    p.add_argument("--seed", type=seed, default=d.seed)
    p.add_argument(
        "--nuts-check",
        type=non_negative_int,
        default=0,
        metavar="N",
        help="also fit the GRM by NUTS on the first N simulated studies of every design size and "
        "compare it with the GRM analyses (nuts_check.csv; default: no check)",
    )
    p.add_argument(
        "--nuts-draws",
        type=count,
        default=NUTS_CHECK_SETTINGS.draws,
        help=f"draws (and tuning steps) of each of the NUTS check's {NUTS_CHECK_SETTINGS.chains} "
        "chains (default %(default)s)",
    )
    p.add_argument(
        "--scheduler",
        default=None,
        metavar="ADDRESS",
        help="Dask scheduler (tcp://HOST:8786) to run the studies on (default: an embedded cluster on this machine)",
    )
    stated = p.add_argument_group("stated assumptions (without a pilot; the page's settings)")
    stated.add_argument(
        "--tie-rate",
        type=float,
        default=Assumptions.tie_rate,
        help="share of ties between equal systems on a prompt of alpha 1 (default %(default)s)",
    )
    stated.add_argument(
        "--bank-size",
        type=int,
        default=Assumptions.bank_size,
        help="prompts in the bank the designs choose from (default %(default)s)",
    )
    stated.add_argument(
        "--alpha-sd",
        type=float,
        default=Assumptions.log_alpha_sd,
        help="spread of prompt discrimination, SD of log alpha (default %(default)s)",
    )
    stated.add_argument(
        "--response",
        choices=list(RESPONSES),
        default=Assumptions.response,
        help="what one simulated annotator gives: "
        + "; ".join(f"{k}: {v}" for k, v in RESPONSES.items())
        + " (default %(default)s)",
    )
    stated.add_argument(
        "--preset",
        choices=list(PRESETS),
        default=None,
        help="published variance components on the normal response model (--item-sd and "
        "--annotator-sd override them): " + "; ".join(f"{k}: {v.help}" for k, v in PRESETS.items()),
    )
    components = p.add_argument_group("variance components (estimated from a pilot when not given; else 0)")
    components.add_argument(
        "--item-sd",
        type=non_negative_float,
        default=None,
        help="SD of the prompt x comparison effect (logits): prompts differ in which system "
        "is better; shared by a cell's annotators",
    )
    components.add_argument(
        "--annotator-sd",
        type=non_negative_float,
        default=None,
        help="SD of the annotator x comparison effect (logits): annotators differ in which system "
        "they prefer; the same annotators judge every prompt of a design",
    )
    p.add_argument(
        "--pairs",
        default=None,
        metavar="A:B,C:D",
        help="with a pilot: the system pairs the study must detect (power is the smallest of theirs; "
        "default: every pair whose pilot difference is at least --effect)",
    )
    p.add_argument(
        "--max-minutes",
        type=float,
        default=MAX_MINUTES,
        help="refuse a plan estimated to take longer on one core (default %(default)s)",
    )
    finish_parser(p, run)


def parse_pairs(text: str | None) -> tuple[tuple[str, str], ...] | None:
    """``"A:B, C:D"`` as ((A, B), (C, D)); None for no text.

    Raises
    ------
    SettingsError
        An item that is not two names joined by ':'.
    """
    if text is None:
        return None
    pairs = []
    for item in (x.strip() for x in text.split(",") if x.strip()):
        names = [n.strip() for n in item.split(":")]
        if len(names) != 2 or not all(names):
            raise SettingsError(f"--pairs: '{item}' is not two system names joined by ':' (e.g. modelA:modelB)")
        pairs.append((names[0], names[1]))
    if not pairs:
        raise SettingsError("--pairs: give at least one pair A:B")
    return tuple(pairs)


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


def run(args: argparse.Namespace) -> int:
    """Simulate the candidate designs on the Dask engine and write ``power.csv`` and the other
    ``OWN_FILES`` to ``--out``.

    Raises
    ------
    lib.errors.SettingsError
        Options that do not go together, or a plan stopped by its time limit (the finished designs
        are written first).
    """
    from lib.engine.cluster import Engine
    from lib.errors import PlanStopped
    from lib.io.export import prepare_out, write_csv
    from lib.planning.design import GRM_ANALYSES
    from lib.planning.power import COLUMNS, check_plan, iter_plan, order_parts

    prompts, annotators, strategies, analyses, nuts_settings, pairs = _parse_options(args)
    assumptions, check = _assumptions(args, pairs)
    prompts = prompts or PLAN_DEFAULTS.prompts_for(assumptions.bank())
    grid = designs(prompts, annotators, strategies, analyses or default_analyses(assumptions))
    check_plan(
        assumptions, grid, args.replicates, args.seconds_per_judgment, args.cost_per_hour, args.max_minutes
    )  # before the cluster starts
    out = prepare_out(args.out, OWN_FILES, overwrite=args.overwrite)
    if check is not None:
        write_csv(check, out / "simulator_check.csv")
    print(f"power is read on {pairs_read(assumptions)}", flush=True)
    checked = [a for a in dict.fromkeys(d.analysis for d in grid) if a in GRM_ANALYSES]

    def report(done: int, total: int) -> None:
        print(f"[{done / total:4.0%}] {done} of {total} simulated studies", flush=True)

    print(
        f"{len(grid)} designs x {args.replicates} studies; starting the Dask engine "
        f"({args.scheduler or 'embedded cluster'})",
        flush=True,
    )
    parts, stopped = [], None
    with Engine(args.scheduler) as engine:
        try:  # each design size is cached as it finishes: a stopped plan keeps them, a rerun resumes
            for part in iter_plan(
                assumptions,
                grid,
                replicates=args.replicates,
                seed=args.seed,
                engine=engine,
                progress=report,
                seconds_per_judgment=args.seconds_per_judgment,
                cost_per_hour=args.cost_per_hour,
                max_minutes=args.max_minutes,
            ):
                parts.append(part)
        except PlanStopped as err:
            stopped = err
        if stopped is not None and not parts:
            raise stopped
        power, power_pairs = order_parts(parts, grid)
        if stopped is not None:
            write_csv(power[COLUMNS], out / "power.csv")
            write_csv(power_pairs, out / "power_pairs.csv")
            raise SettingsError(
                f"{stopped}; wrote the {len(power)} finished designs to {out}/power.csv and power_pairs.csv"
            )
        # NUTS fits go to a cluster named by --scheduler; on this machine's embedded one, two fits at once
        # were slower than one after another (47.0 s against 42.6 s for 4 studies: XLA already uses both cores)
        nuts = nuts_checks(
            assumptions, grid, checked, args.nuts_check, args.seed, nuts_settings, engine if args.scheduler else None
        )
    _write_results(args, out, power, power_pairs, nuts, with_check=check is not None)
    return 0


def _parse_options(args: argparse.Namespace):
    """The design options parsed and checked: ``prompts (None: the default ones the bank holds), annotators,
    strategies, analyses (None: the default ones), NUTS-check settings, pairs``.

    Raises
    ------
    SettingsError
        Options that do not go together, or a value out of range.
    """
    from lib.planning.design import GRM_ANALYSES, PLANNED_STRATEGIES

    if args.input is not None and args.systems is not None:
        raise SettingsError("give a pilot (--input) or stated assumptions (--systems), not both")
    if (args.input is None) != (args.format is None):
        raise SettingsError("--input and --format go together")
    if args.input is not None and (args.preset is not None or args.response != Assumptions.response):
        raise SettingsError(
            "--preset and --response are stated assumptions: a pilot's judgments give the "
            "response model and its variance components (set --item-sd, --annotator-sd)"
        )
    if not 0 < args.target_power < 1:
        raise SettingsError(f"--target-power must be between 0 and 1 (got {args.target_power})")
    prompts = parse_counts(args.prompts, "--prompts") if args.prompts is not None else None
    annotators = parse_counts(args.annotators, "--annotators")
    strategies = parse_names(args.strategies, PLANNED_STRATEGIES, "--strategies")
    analyses = parse_names(args.analyses, ANALYSES, "--analyses") if args.analyses else None
    if args.nuts_check < 0:
        raise SettingsError(f"--nuts-check must be 0 or more (got {args.nuts_check})")
    if args.nuts_check and not set(analyses or GRM_ANALYSES) & set(GRM_ANALYSES):
        raise SettingsError(f"--nuts-check compares the GRM analyses: add {' or '.join(GRM_ANALYSES)} to --analyses")
    nuts_settings = replace(NUTS_CHECK_SETTINGS, draws=args.nuts_draws, tune=args.nuts_draws, seed=args.seed)
    nuts_settings.validate()
    return prompts, annotators, strategies, analyses, nuts_settings, parse_pairs(args.pairs)


def _assumptions(args: argparse.Namespace, pairs: tuple[tuple[str, str], ...] | None):
    """The simulation's assumptions, and the simulator check of a pilot (None without one): from the
    pilot's fit (``--input``, its summary and check printed) or as stated (:func:`stated_assumptions`).

    Raises
    ------
    SettingsError
        ``--pairs`` without a pilot; a refused pilot raises its :class:`lib.errors.InputError`.
    """
    from lib.cli import read_input
    from lib.planning.check import disagreements, simulator_check
    from lib.planning.design import assumptions_from_pilot, pilot_summary

    check = None
    if args.input is not None:
        data = read_input(args)
        print(
            f"pilot: {data.matrix.shape[0]} comparisons x {data.matrix.shape[1]} prompts; fitting its judgments "
            "(one per annotator) for the truth and the prompt bank",
            flush=True,
        )
        assumptions = assumptions_from_pilot(
            data, effect=args.effect, pairs=pairs, item_sd=args.item_sd, annotator_sd=args.annotator_sd
        )
        assert assumptions.pilot is not None  # assumptions_from_pilot sets it
        print(pilot_summary(assumptions.pilot), flush=True)
        print(
            f"{assumptions.pilot.components.summary()}; simulated with prompt x comparison SD "
            f"{assumptions.item_sd:.2f}, annotator x comparison SD {assumptions.annotator_sd:.2f}",
            flush=True,
        )
        check = simulator_check(assumptions.pilot, item_sd=assumptions.item_sd)  # fixed seed: the page's numbers
        differ = disagreements(check)
        print(
            f"simulator check: {len(check) - len(differ)} of {len(check)} statistics of the pilot agree with "
            "data sets simulated from its fit (simulator_check.csv)",
            flush=True,
        )
        for line in differ:
            print(f"warning: the simulator does not look like the pilot: {line}", file=sys.stderr)
    else:
        if pairs is not None:
            raise SettingsError("--pairs names pairs of a pilot's systems: give --input")
        assumptions = stated_assumptions(args)
    return assumptions, check


def _write_results(args: argparse.Namespace, out, power, power_pairs, nuts, *, with_check: bool) -> None:
    """Write the plan's tables to ``out`` (power, pairs, cheapest, ranking, calibration and NUTS check
    where there is one) and print their summary and the files written."""
    from lib.io.export import write_csv
    from lib.planning.choice import advice, cheapest, validity_notes
    from lib.planning.power import CALIBRATION_COLUMNS, COLUMNS, RANKING_COLUMNS

    best = cheapest(power, args.target_power)
    written = ["simulator_check.csv"] if with_check else []
    written += ["power.csv", "power_pairs.csv", "cheapest.csv", "ranking.csv", "calibration.csv"]
    write_csv(power[COLUMNS], out / "power.csv")
    write_csv(power_pairs, out / "power_pairs.csv")
    write_csv(best, out / "cheapest.csv")
    write_csv(power[RANKING_COLUMNS], out / "ranking.csv")
    write_csv(power[CALIBRATION_COLUMNS], out / "calibration.csv")
    if args.effect == 0:
        print("effect 0: no difference to detect, so power is each analysis's false-detection rate (its real size)")
    for line in validity_notes(power):
        print(line)
    if nuts is not None:
        write_csv(nuts, out / "nuts_check.csv")
        written.append("nuts_check.csv")
        print(
            f"NUTS check: the intervals agree on excluding 0 in {nuts['agree'].mean():.0%} of "
            f"{len(nuts)} comparisons; R-hat max {nuts['rhat_max'].max():.3f}, min bulk ESS "
            f"{nuts['ess_bulk_min'].min():.0f}"
        )
    print(f"cheapest designs reaching power {args.target_power:g} with a valid test:")
    print(best.to_string(index=False))
    for line in advice(best, power, args.target_power):
        print(line)
    print(f"wrote {out}/{', '.join(written)}")


def stated_assumptions(args: argparse.Namespace) -> Assumptions:
    """The assumptions typed on the command line without a pilot: a preset's variance components on the
    normal response model, overridden by --item-sd / --annotator-sd.

    Raises
    ------
    SettingsError
        A value out of range (:meth:`Assumptions.validate`).
    """
    preset = PRESETS[args.preset] if args.preset is not None else None
    item_sd = preset.item_sd if preset else Assumptions.item_sd
    annotator_sd = preset.annotator_sd if preset else Assumptions.annotator_sd
    out = Assumptions(
        n_systems=Assumptions.n_systems if args.systems is None else args.systems,
        effect=args.effect,
        tie_rate=args.tie_rate,
        bank_size=args.bank_size,
        log_alpha_sd=args.alpha_sd,
        response="normal" if preset else args.response,
        item_sd=item_sd if args.item_sd is None else args.item_sd,
        annotator_sd=annotator_sd if args.annotator_sd is None else args.annotator_sd,
    )
    if preset is not None:
        print(
            f"preset {preset.name}: normal response, prompt x comparison SD {out.item_sd:.3f}, annotator x "
            f"comparison SD {out.annotator_sd:.3f} (residual SD 1; the published coefficient beta is an effect "
            f"of sqrt(2) beta / {preset.rating_sd:g})",
            flush=True,
        )
    out.validate()
    return out


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
        print(
            f"NUTS check {k} of {len(sizes)}: {prompts} prompts x {annotators} annotators, {strategy}, "
            f"{replicates} studies",
            flush=True,
        )
        found = nuts_check(
            assumptions,
            Design(prompts, annotators, strategy),
            replicates,
            seed=seed,
            settings=settings,
            analyses=tuple(analyses),
            engine=engine,
            progress=lambda done, total: print(f"  {done} of {total} NUTS fits", flush=True),
        )
        parts.append(found.assign(prompts=prompts, annotators=annotators, strategy=strategy))
    found = pd.concat(parts, ignore_index=True)
    return found[["prompts", "annotators", "strategy", *found.columns[:-3]]]
