"""Progress of a fit: from the sampler's threads to the caller's thread, never going back.

A fit reports through a :data:`FitProgress` callback, ``(fraction done in [0, 1], what is
happening)``, called in the caller's thread (a Streamlit page can draw only there). Samplers run in a
worker thread and record their stages and iterations in a :class:`Tracker`; :func:`run_reporting`
relays them.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from lib.inference.timings import PhaseTimer

FitProgress = Callable[[float, str], None]
"""Called with (fraction done in [0, 1], what is happening)."""


def monotone(report: FitProgress) -> FitProgress:
    """Wrap a progress callback so the fraction it receives never goes back.

    Parameters
    ----------
    report : FitProgress
        ``report(fraction, message)``.

    Returns
    -------
    FitProgress
        Calls ``report`` with ``min(fraction, 1)`` raised to the largest fraction reported so far.
    """
    last = [0.0]

    def call(fraction: float, message: str) -> None:
        last[0] = max(last[0], min(float(fraction), 1.0))
        report(last[0], message)

    return call


class Tracker:
    """Progress written by the sampling thread (and JAX's callback threads), read by the caller.

    Parameters
    ----------
    total : int
        Iterations of all chains together (chains x (tune + draws)); at least 1 is assumed.
    start : float
        ``time.perf_counter()`` when the fit began.
    timer : PhaseTimer, optional
        Takes the seconds of the sampler's phases (:mod:`lib.inference.timings`); a new one by default.

    Attributes
    ----------
    events : list of (float, str)
        (fraction done in [0, 1], stage) not yet taken by :meth:`drain`; guarded by ``lock``.
    """

    def __init__(self, total: int, start: float, timer: PhaseTimer | None = None) -> None:
        self.total, self.start = max(total, 1), start
        self.timer = timer or PhaseTimer()
        self.done = 0
        self.events: list[tuple[float, str]] = []
        self.lock = threading.Lock()

    def stage(self, fraction: float, name: str) -> None:
        """Record that the fit reached stage ``name`` at ``fraction`` done."""
        with self.lock:
            self.events.append((fraction, name))

    def iterations(self, n: int, tuning: bool) -> None:
        """``n`` more iterations of one chain; ``tuning``: still warming up."""
        with self.lock:
            self.done = min(self.done + int(n), self.total)
            stage = "warm-up" if tuning else "sampling"
            self.events.append(
                (0.05 + 0.9 * self.done / self.total, f"{stage}: {self.done} of {self.total} iterations (all chains)")
            )

    def drain(self) -> list[tuple[float, str]]:
        """The events recorded since the last call, oldest first (list of (fraction, message))."""
        with self.lock:
            events, self.events = self.events, []
            return events


def run_reporting(
    work: Callable[[Tracker], Any], report: FitProgress, start: float, total: int, timer: PhaseTimer | None = None
) -> Any:
    """Run ``work`` in a thread and relay its progress from this thread every half second.

    Progress comes from the sampler's own threads, which cannot draw on a Streamlit page; the
    caller's thread can. Every stage is relayed in order, with the seconds elapsed since ``start``.

    Parameters
    ----------
    work : callable
        ``work(tracker)`` returns the posterior (``arviz.InferenceData``); it reports through the
        :class:`Tracker` it is given.
    report : FitProgress
        Called in this thread (wrap it in :func:`monotone` to keep fractions non-decreasing).
    start : float
        ``time.perf_counter()`` when the fit began.
    total : int
        Iterations of all chains together (:class:`Tracker`).
    timer : PhaseTimer, optional
        Takes the seconds of the sampler's phases (the :class:`Tracker`'s ``timer``).

    Returns
    -------
    arviz.InferenceData
        What ``work`` returned; whatever it raised is raised again here.
    """
    tracker = Tracker(total, start, timer)
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["idata"] = work(tracker)
        except BaseException as err:  # re-raised in the caller's thread below
            outcome["error"] = err

    thread = threading.Thread(target=target, name="sampler", daemon=True)
    thread.start()
    message = "starting"
    fraction = 0.0
    while True:
        thread.join(0.5)
        for fraction, message in tracker.drain():
            report(fraction, f"{message} · {time.perf_counter() - start:.0f} s")
        if not thread.is_alive():
            break
        report(fraction, f"{message} · {time.perf_counter() - start:.0f} s")
    if "error" in outcome:
        raise outcome["error"]
    return outcome["idata"]
