"""Command line: ``python -m lib {fit,rank,select,plan,revise,cost,study,judge} ...``.

Each subcommand lives in ``lib/commands/<name>.py`` with ``add_parser(subparsers)``; heavy imports
(pandas, scipy, pymc, openai) happen inside the command's ``run``, so ``--help`` and argument errors
answer without them (``tests/test_cli_light.py`` lists the modules a parser imports). A command's
``run(args)`` returns the exit status, 0 when done (its docstring says when it is another). Input errors
(:class:`lib.errors.InputError`, raised by ``run``) exit with status 2 (:data:`EXIT_INPUT`) and the same
message the app shows; a fit that did not converge with status 3 (:data:`EXIT_NOT_CONVERGED`).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import math
import re
import sys
from collections.abc import Callable
from pathlib import Path

from lib.errors import InputError, OutputError, SettingsError

COMMANDS = ("fit", "rank", "select", "plan", "revise", "cost", "study", "judge")

EXIT_INPUT = 2
"""Exit status of a refused input, option or output folder (the message names the file, row and column)."""
EXIT_NOT_CONVERGED = 3
"""Exit status of a fit that ran but whose chains did not converge (``diagnostics.json``: ``"converged":
false``): its files are written for diagnosis, with every estimate left empty; do not use them."""
EXIT_CODES = (
    f"Exit status: 0 done; {EXIT_INPUT} refused input, option or output folder (the message says why); "
    f'{EXIT_NOT_CONVERGED} the fit ran but did not converge (diagnostics.json: "converged": false): the files '
    "are written for diagnosis, with every estimate (means, intervals, probabilities, ranks) left empty; "
    "fit again with more tuning iterations and draws."
)
"""The ``--help`` epilog of the commands that fit (``fit``, ``rank``)."""
NOT_CONVERGED_ERROR = (
    'error: the fit did NOT converge (diagnostics.json: "converged": false; see the warnings): its estimates '
    f"are left empty and are not to be reported (exit status {EXIT_NOT_CONVERGED}); fit again with more "
    "tuning iterations and draws."
)
"""What ``fit`` and ``rank`` print (standard error) before exiting with :data:`EXIT_NOT_CONVERGED`."""


_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""Terminal control characters: C0 (ESC, BEL, BS, CR, ...) but newline and tab, DEL, and C1 (CSI, ...)."""


def printable(text: str) -> str:
    r"""``text`` with terminal control characters written as escapes (``\x1b``, ``\r``): a name read
    from a file (a system called ``"\x1b[2J"``) is shown, never acted on by the terminal."""
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


class Printable:
    """A text stream that writes :func:`printable` text to ``stream`` (:func:`main` wraps stdout and
    stderr in it, so every command's prints are covered); anything else is the stream's own."""

    def __init__(self, stream) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        """Write ``text`` made :func:`printable`; returns the length of ``text`` as given."""
        self._stream.write(printable(text))
        return len(text)

    def __getattr__(self, name: str):
        """Every other attribute (``flush``, ``encoding``, ...) is the wrapped stream's."""
        return getattr(self._stream, name)


MAX_COUNT = 2**31 - 1
"""Largest whole number an option takes (beyond it numpy's and the samplers' integers overflow)."""


def _number(text: str, kind: type, ok, wanted: str):
    """``kind(text)`` when it parses, is finite and ``ok``; else argparse's error naming what was wanted."""
    try:
        value = kind(text)
    except ValueError:
        value = None
    if value is None or (kind is float and not math.isfinite(value)) or not ok(value):
        raise argparse.ArgumentTypeError(f"must be {wanted} (got '{text}')")
    return value


def count(text: str) -> int:
    """An argparse ``type``: a whole number from 1 to :data:`MAX_COUNT`."""
    return _number(text, int, lambda v: 1 <= v <= MAX_COUNT, f"a whole number from 1 to {MAX_COUNT}")


def non_negative_int(text: str) -> int:
    """An argparse ``type``: a whole number from 0 to :data:`MAX_COUNT`."""
    return _number(text, int, lambda v: 0 <= v <= MAX_COUNT, f"a whole number from 0 to {MAX_COUNT}")


def seed(text: str) -> int:
    """An argparse ``type``: a random seed, a whole number from 0 to 2**32 - 1 (what every sampler takes)."""
    return _number(text, int, lambda v: 0 <= v < 2**32, f"a whole number from 0 to {2**32 - 1}")


def positive_float(text: str) -> float:
    """An argparse ``type``: a finite number above 0."""
    return _number(text, float, lambda v: v > 0, "a finite number above 0")


def non_negative_float(text: str) -> float:
    """An argparse ``type``: a finite number of at least 0."""
    return _number(text, float, lambda v: v >= 0, "a finite number of at least 0")


def finite_float(text: str) -> float:
    """An argparse ``type``: any finite number."""
    return _number(text, float, lambda v: True, "a finite number")


def probability(text: str) -> float:
    """An argparse ``type``: a number strictly between 0 and 1."""
    return _number(text, float, lambda v: 0 < v < 1, "a number between 0 and 1 (both excluded)")


def parse_columns(text: str | None) -> dict[str, str]:
    """Parse ``--columns ROLE=NAME,...`` into ``{role: file_column}``; ``ROLE=A+B`` maps the role onto
    columns A and B combined (:func:`lib.io.tables.combine_columns`, e.g. ``prompt=story+test``).

    Raises
    ------
    SettingsError
        If an entry has no ``=`` or an empty role or name.
    """
    if not text:
        return {}
    mapping: dict[str, str] = {}
    for part in text.split(","):
        role, sep, name = part.partition("=")
        if not sep or not role.strip() or not name.strip():
            raise SettingsError(f"--columns entry '{part}' is not ROLE=NAME")
        mapping[role.strip()] = name.strip()
    return mapping


def add_columns_option(parser: argparse.ArgumentParser) -> None:
    """The ``--columns`` option every command shares."""
    parser.add_argument(
        "--columns",
        default=None,
        help="map the file's column names onto the format's roles: ROLE=NAME,...; ROLE=A+B combines "
        "columns A and B (e.g. prompt=story+test)",
    )


def add_input_options(parser, what: str, *, required: bool = True) -> None:
    """The judgment-file options ``fit``, ``rank``, ``select`` and ``plan`` share (the Data page's choices).

    ``--format`` offers the formats registered in ``lib.judgments.formats.FORMATS`` when the parser is built.
    ``parser`` may be an argument group; ``required=False`` for a command where the file is optional.
    """
    from lib.judgments.formats import FORMATS

    parser.add_argument("--input", required=required, default=None, help=what)
    parser.add_argument(
        "--format",
        required=required,
        default=None,
        choices=list(FORMATS),
        help="; ".join(f"{name}: {spec.help}" for name, spec in FORMATS.items()),
    )
    parser.add_argument("--criterion", default=None, help="criterion to use when the file has several")
    add_columns_option(parser)
    parser.add_argument(
        "--filter", default=None, metavar="COLUMN=V1,V2", help="keep only the rows whose COLUMN has one of these values"
    )
    parser.add_argument(
        "--drop-incomplete",
        action="store_true",
        help="leave out rows with a blank required cell (their row numbers are printed)",
    )
    parser.add_argument("--no-merge", action="store_true", help="do not average redundant prompts")


def read_input(args: argparse.Namespace, *, matrix: bool = True):
    """The :class:`lib.inputs.AnalysisInput` of ``add_input_options``' arguments.

    Prints what changed the data: dropped rows, the reader's notes (votes without an annotator column),
    every redundancy merge, and a warning when many prompts merged.

    Raises
    ------
    lib.errors.InputError
        Bad file, mapping, filter or criterion.
    """
    from lib.inputs import analysis_input
    from lib.io.tables import read_csv
    from lib.judgments.ratings import merge_lines, merge_warning

    filters = None
    if args.filter:
        column, sep, values = args.filter.partition("=")
        if not sep or not column.strip() or not values.strip():
            raise SettingsError(f"--filter '{args.filter}' is not COLUMN=V1,V2,...")
        filters = {column.strip(): [v.strip() for v in values.split(",")]}
    path = Path(args.input)
    data = analysis_input(
        read_csv(path, path.name),
        args.format,
        parse_columns(args.columns),
        file=path.name,
        criterion=args.criterion,
        merge_redundant=not args.no_merge,
        filters=filters,
        drop_incomplete_rows=args.drop_incomplete,
        matrix=matrix,
        style_columns=getattr(args, "style_columns", None) or (),
    )
    if data.dropped_rows:
        print(f"dropped {len(data.dropped_rows)} incomplete rows: {', '.join(map(str, data.dropped_rows))}")
    for note in data.judgments.notes if data.judgments is not None else ():
        print(f"note: {note}")
    if data.matrix is not None:
        for line in merge_lines(data.matrix):
            print(line)
        if (merged := merge_warning(data.matrix)) is not None:
            print(f"warning: {merged}", file=sys.stderr)
    return data


def finish_parser(
    parser: argparse.ArgumentParser, run: Callable[[argparse.Namespace], int], *, columns: bool = False
) -> None:
    """End a command's parser with the options every command that writes a folder takes, and bind its ``run``:
    ``--columns`` when ``columns`` (a command whose file options are not :func:`add_input_options`, which has
    it), then ``--out DIR`` and ``--overwrite`` (checked by :func:`lib.io.export.prepare_out` before computing)."""
    if columns:
        add_columns_option(parser)
    parser.add_argument("--out", required=True, help="output folder (created; must be empty unless --overwrite)")
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="write into a folder that is not empty, removing this command's earlier files first",
    )
    parser.set_defaults(run=run)


def add_llm_options(parser: argparse.ArgumentParser, unit: str) -> None:
    """The options of the commands that ask an LLM: ``--base-url`` and ``--api-key-env`` (read by
    :func:`llm_server`), ``--concurrency``, ``--timeout`` and ``--max-retries`` (``unit``: what is in flight,
    e.g. "drafts"); :func:`llm_settings` reads them all."""
    parser.add_argument("--base-url", default=None, help="server URL (default $OPENAI_BASE_URL or OpenAI)")
    parser.add_argument(
        "--api-key-env",
        default=None,
        metavar="NAME",
        help="environment variable holding the key for --base-url ($OPENAI_API_KEY is only sent to "
        "$OPENAI_BASE_URL, the configured server)",
    )
    parser.add_argument("--concurrency", type=count, default=4, help=f"{unit} in flight at once (default 4)")
    parser.add_argument(
        "--timeout",
        type=positive_float,
        default=60.0,
        help="seconds one request may wait for the LLM's answer (default 60)",
    )
    parser.add_argument(
        "--max-retries",
        type=non_negative_int,
        default=3,
        help="retries of a request that timed out, was rate-limited or hit a server error (default 3)",
    )


def llm_server(args: argparse.Namespace) -> tuple[str, str]:
    """The base URL an LLM command calls and the API key it sends there, as the app chooses them
    (:func:`lib.revision.credentials.choose_key`): ``--base-url`` (else $OPENAI_BASE_URL, else OpenAI),
    with the key in the variable ``--api-key-env`` names, else $OPENAI_API_KEY for its own server only.

    Raises
    ------
    lib.errors.SettingsError
        A base URL that cannot be used, or another server than the configured one without a key of its
        own while $OPENAI_API_KEY is set.
    """
    import os

    from lib.revision.credentials import choose_key

    typed_key = os.environ.get(args.api_key_env, "") if args.api_key_env else ""
    return choose_key(args.base_url or "", typed_key, os.environ)


def llm_settings(args: argparse.Namespace, model: str):
    """The :class:`lib.revision.client.LLMSettings` of a command that asks an LLM: ``model`` on the server and
    with the key of :func:`llm_server`, with the options of :func:`add_llm_options`.

    Raises
    ------
    lib.errors.SettingsError
        As :func:`llm_server`: a base URL that cannot be used, or another server than the configured one
        without a key of its own while $OPENAI_API_KEY is set.
    """
    from lib.revision.client import LLMSettings

    url, key = llm_server(args)  # the configured key goes to the configured server only
    return LLMSettings(
        model=model,
        base_url=url,
        api_key=key,
        concurrency=args.concurrency,
        timeout=args.timeout,
        max_retries=args.max_retries,
    )


def progress_printer() -> Callable[[float, str], None]:
    r"""A progress callback for a command: it prints ``[ 40%] message`` when the stage changes or the
    fraction has grown by a further 10% (a line each, as a carriage return is printed as ``\r``).

    Returns
    -------
    callable
        ``show(fraction, message)``: ``fraction`` done in [0, 1]; the stage is the ``message`` up to
        its first ``":"`` or ``" · "``.
    """
    last_stage: str | None = None
    last_fraction = -1.0

    def show(fraction: float, message: str) -> None:
        nonlocal last_stage, last_fraction
        stage = message.split(":")[0].split(" · ")[0]
        if stage != last_stage or fraction >= last_fraction + 0.1:
            last_stage, last_fraction = stage, fraction
            print(f"[{fraction:4.0%}] {message}", flush=True)

    return show


def add_verbose_option(parser: argparse.ArgumentParser) -> None:
    """``--verbose``: print the seconds each phase took (:func:`print_timings`)."""
    parser.add_argument(
        "--verbose",
        action="store_true",
        help="print the seconds each phase took (read, checks, model build, compile, ...; also the "
        "'timings' of diagnostics.json)",
    )


def add_sampling_options(
    parser: argparse.ArgumentParser, fit: str, *, laplace: bool = False, reported: str = "reported parameter"
) -> None:
    """``--chains``, ``--draws``, ``--tune``, ``--target-ess`` and ``--seed`` of the commands that fit
    (``fit``, ``rank``), with the defaults of :class:`lib.inference.settings.NutsSettings` and the warm-up of
    the kind of fit (:data:`lib.inference.settings.FITS`) sampled to a target ESS; ``laplace``: the
    command's default sampler is a Gaussian at the mode, which falls back to NUTS; ``reported``: the
    parameters a target ESS is reached on (after "every")."""
    from lib.inference.settings import TARGET_CEILING, TARGET_CHUNK, TARGET_ESS, TARGET_TUNE, NutsSettings

    d = NutsSettings
    parser.add_argument("--chains", type=count, help=f"NUTS chains (default {d.chains})")
    parser.add_argument(
        "--draws",
        type=count,
        help=f"draws per chain (default {d.draws}{'; Laplace: draws in all' if laplace else ''}); given without "
        f"--target-ess, exactly this many (no target); with a target, the ceiling (default {TARGET_CEILING})",
    )
    parser.add_argument(
        "--tune",
        type=non_negative_int,
        help=f"tuning iterations per chain (default {d.tune}; {TARGET_TUNE[fit]} when sampling to a target ESS)",
    )
    parser.add_argument(
        "--target-ess",
        type=count,
        default=None,
        metavar="N",
        help=f"numpyro{' (chosen, or the NUTS a Laplace fit falls back to)' if laplace else ''}: warm up from "
        f"jittered points around the priors' centres, then draw {TARGET_CHUNK} per chain at a time until the bulk "
        f"and tail ESS of every {reported} reach N and their R-hat is at most 1.01, or --draws per chain are "
        f"drawn (diagnostics.json says which: 'stopped'). Default {TARGET_ESS} for numpyro unless --draws is given; "
        "refused by the other samplers",
    )
    parser.add_argument("--seed", type=seed, help=f"default {d.seed}")


def finish_fit(args: argparse.Namespace, diagnostics, started: float, out: Path, written: list[str]) -> int:
    """The end of a command that fits (``fit``, ``rank``): the seconds per phase with ``--verbose``, the files
    written, and the exit status.

    Parameters
    ----------
    args : argparse.Namespace
        The command's arguments (``verbose``: :func:`add_verbose_option`).
    diagnostics : lib.inference.diagnostics.Diagnostics
        The fit's (``timings``, ``converged``).
    started : float
        ``time.perf_counter()`` when the command began.
    out : Path
        The output folder.
    written : list of str
        The files written into it.

    Returns
    -------
    int
        0, or :data:`EXIT_NOT_CONVERGED` (after printing :data:`NOT_CONVERGED_ERROR` to standard error) when
        the chains did not converge.
    """
    if args.verbose:
        print_timings(diagnostics.timings, started)
    print(f"wrote {out}/{', '.join(written)}")
    if diagnostics.converged is False:
        print(NOT_CONVERGED_ERROR, file=sys.stderr)
        return EXIT_NOT_CONVERGED
    return 0


def print_timings(timings: dict[str, float], started: float) -> None:
    """Print the seconds per phase (:func:`lib.inference.timings.timings_text`) and the time not in a
    phase since ``started`` (``time.perf_counter()`` when the command began)."""
    import time

    from lib.inference.timings import timings_text

    print("time per phase:\n" + timings_text(timings, time.perf_counter() - started))


def print_target_ess(diagnostics) -> None:
    """Print how a fit sampled to a target ESS stopped (:class:`lib.inference.diagnostics.Diagnostics`
    ``target_ess``, ``draws`` and ``stopped``); nothing for a fixed number of draws."""
    d = diagnostics
    if d.stopped is not None:
        print(
            f"sampled to the target ESS {d.target_ess}: {d.draws} draws per chain, "
            + ("target reached" if d.stopped == "target" else "ceiling reached first (--draws)")
        )


def build_parser() -> argparse.ArgumentParser:
    """The ``python -m lib`` parser: one subcommand per module of :data:`COMMANDS` (its ``add_parser``)."""
    parser = argparse.ArgumentParser(
        prog="python -m lib",
        description="Efficient human evaluation of language models: Bayesian IRT fit, prompt "
        "selection, revision edits and the human cost of using a model.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    for name in COMMANDS:
        importlib.import_module(f"lib.commands.{name}").add_parser(sub)
    return parser


def exit_now(status: int) -> None:
    """End the process with ``status`` once a command has returned: standard output and error flushed, the
    exit handlers (``atexit``: logging's among them) run, then ``os._exit``, without Python's shutdown.

    That shutdown tears down, one by one, every module a fit loaded (PyMC, pytensor, JAX, arviz): 0.5 s on a
    quiet machine, 1.5-3 s on a loaded one, after the files are written (``bench/bench_target_ess.py``
    times the whole process). Threads still running are not waited for: call it after the command's own
    have ended (every command joins its workers before returning).
    """
    import atexit
    import os

    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe: nothing more can be said
            stream.flush()
    atexit._run_exitfuncs()
    os._exit(status)


def main(argv: list[str] | None = None) -> int:
    """Run one command; everything it prints (and argparse's messages) goes through :func:`printable`."""
    with contextlib.redirect_stdout(Printable(sys.stdout)), contextlib.redirect_stderr(Printable(sys.stderr)):
        return _run(argv)


def _run(argv: list[str] | None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.run(args) or 0)
    except InputError as err:
        source = getattr(args, "input", None) or getattr(args, "drafts", None)
        if err.file is None and source and not isinstance(err, (SettingsError, OutputError)):
            err.file = Path(source).name  # design checks in lib see the data, not the file it came from
        print(f"error: {err}", file=sys.stderr)
        return EXIT_INPUT
