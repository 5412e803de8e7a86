"""Where a fit's time went: seconds per phase, timed by one :class:`PhaseTimer` on every fit path.

A fit's phases run in several threads: the caller's (checks, diagnostics, cache), the sampler's (model
build, compile, optimise, warm-up, sampling, Hessian, draws) and, around the fit, the command's or the
page's (read, read-outs, Bradley–Terry baseline). They run one after another, never side by side, so
their sum is at most the wall time of the whole. ``Diagnostics.timings`` holds them
(``diagnostics.json``); ``python -m lib fit|rank --verbose`` prints them, the pages show them.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

PHASES: dict[str, str] = {
    "read": "reading and checking the file (the command line)",
    "checks": "settings and data-design checks",
    "cache read": "looking the fit up in the cache",
    "model build": "building the PyMC model",
    "compile": "translating the model to JAX / compiling it (the first call of each JAX program compiles it "
    "inside its own phase; a warm cache skips it)",
    "optimise": "L-BFGS to the posterior mode (MAP, Laplace)",
    "warm-up": "NUTS warm-up (step size and mass matrix)",
    "sampling": "NUTS draws (numpyro): a fixed number, or until the target ESS or the ceiling with the ESS checks",
    "compile, warm-up and sampling": "PyMC's or nutpie's NUTS (they report no phases)",
    "Hessian": "curvature at the mode (Laplace)",
    "draws": "drawing from the Gaussian at the mode (Laplace)",
    "diagnostics": "R-hat, ESS, divergences and the model's own checks",
    "read-outs": "the draws turned into the model's parameters; the leaderboard, ranks, win matrix and what "
    "to annotate next",
    "Bradley–Terry baseline": "the Bradley–Terry ratings beside the leaderboard",
    "without style control": "style control's second fit: the same votes without the style covariates, its "
    "leaderboard and Bradley–Terry baseline",
    "cache write": "writing the fit to the cache",
}
"""The phases a fit reports, in the order they run, name -> what is timed (one home for the names)."""


class PhaseTimer:
    """Seconds per phase (:data:`PHASES`), written from any thread.

    Parameters
    ----------
    seconds : dict, optional
        The dict to add to (e.g. ``Diagnostics.timings`` of a fit, to time what follows it); a new one
        by default.

    Attributes
    ----------
    seconds : dict of str to float
        Seconds spent in each phase timed so far (a phase timed twice adds up).
    """

    def __init__(self, seconds: dict[str, float] | None = None) -> None:
        self.seconds = {} if seconds is None else seconds
        self._lock = threading.Lock()

    def add(self, name: str, seconds: float) -> None:
        """Add ``seconds`` (>= 0) to phase ``name``.

        Raises
        ------
        KeyError
            ``name`` is not one of :data:`PHASES`.
        """
        if name not in PHASES:
            raise KeyError(f"unknown phase {name!r}; add it to lib.inference.timings.PHASES")
        with self._lock:
            self.seconds[name] = self.seconds.get(name, 0.0) + max(float(seconds), 0.0)

    def snapshot(self) -> dict[str, float]:
        """A copy of ``seconds`` (another thread may be adding to it)."""
        with self._lock:
            return dict(self.seconds)

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        """Time the block as phase ``name`` (also when it raises). Phases must not nest."""
        start = time.perf_counter()
        try:
            yield
        finally:
            self.add(name, time.perf_counter() - start)


def ordered(timings: dict[str, float]) -> dict[str, float]:
    """``timings`` in the order of :data:`PHASES` (unknown names last, as given)."""
    known = {name: timings[name] for name in PHASES if name in timings}
    return known | {name: value for name, value in timings.items() if name not in known}


def timings_table(timings: dict[str, float]):
    """The seconds per phase as a table for a page: columns ``phase``, ``seconds``, ``what``
    (:data:`PHASES`), in their order, then a ``total`` row."""
    import pandas as pd

    rows = [
        {"phase": name, "seconds": seconds, "what": PHASES.get(name, "")} for name, seconds in ordered(timings).items()
    ]
    rows.append({"phase": "total", "seconds": sum(timings.values()), "what": "the phases together"})
    return pd.DataFrame(rows, columns=["phase", "seconds", "what"])


def timings_text(timings: dict[str, float], wall_s: float | None = None) -> str:
    """One line per phase, ``  compile       3.21 s``, in the order of :data:`PHASES`, and their total
    (with ``wall_s``, the time not in any phase too)."""
    rows = ordered(timings)
    width = max((len(name) for name in rows), default=0)
    lines = [f"  {name:<{width}}  {seconds:8.2f} s" for name, seconds in rows.items()]
    total = sum(rows.values())
    lines.append(f"  {'total':<{width}}  {total:8.2f} s")
    if wall_s is not None:
        lines.append(f"  {'not in a phase':<{width}}  {max(wall_s - total, 0.0):8.2f} s")
    return "\n".join(lines)
