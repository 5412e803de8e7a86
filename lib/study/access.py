"""Who may open the researcher's pages: anyone on this machine, else whoever knows the operator's secret.

When the app is served on loopback only (``server.address`` 127.0.0.1, the project's
``.streamlit/config.toml``) and no secret is set, the researcher's pages are open, as before studies
existed. When it is served beyond this machine (any other address, or Streamlit's default of every
interface), or whenever ``EVAL_OPERATOR_SECRET`` is set, they need that secret; served beyond this
machine without a secret set, they stay closed. Annotators' links never need it and never reach them.

Guesses are rate-limited (:class:`SecretGate`, one per server process, whatever the browser session): after
:data:`FREE_GUESSES` wrong ones (typos), each wrong guess doubles the wait before the next guess is
compared, from :data:`FIRST_WAIT_S` up to :data:`MAX_WAIT_S`; a guess made during the wait is refused
without being compared. Before (issue 31), 20 guesses took 8.6 s.
"""

from __future__ import annotations

import hmac
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

SECRET_ENV = "EVAL_OPERATOR_SECRET"
LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})


def operator_secret() -> str | None:
    """``$EVAL_OPERATOR_SECRET``, None when unset or empty."""
    return os.environ.get(SECRET_ENV) or None


def served_locally(address: str | None) -> bool:
    """Whether ``server.address`` lets only this machine connect (None: Streamlit's default, every interface)."""
    return address is not None and address.strip("[]") in LOOPBACK


def secret_required(address: str | None) -> bool:
    """Whether the researcher's pages ask for the operator's secret when served on ``address``."""
    return operator_secret() is not None or not served_locally(address)


FREE_GUESSES = 3
"""Wrong guesses compared at once, before the waits start (typos)."""
FIRST_WAIT_S = 1.0
"""The wait after the first wrong guess past :data:`FREE_GUESSES`; it doubles with each further one."""
MAX_WAIT_S = 60.0
"""The longest wait between two compared guesses (an operator who mistyped is never locked out for long)."""


@dataclass(frozen=True)
class Verdict:
    """A guess's outcome: ``ok`` (the secret); ``checked`` False for a guess made during a wait (not
    compared); ``wait_s`` seconds before the next guess is compared (0: at once)."""

    ok: bool
    checked: bool
    wait_s: float


class SecretGate:
    """The operator's secret behind an exponential back-off, shared by every session of a process.

    Parameters
    ----------
    clock : callable, optional
        Seconds, monotonic (default :func:`time.monotonic`; tests pass their own).
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._failures = 0
        self._next = -float("inf")

    def _wait_after(self, failures: int) -> float:
        if failures < FREE_GUESSES:
            return 0.0
        return min(MAX_WAIT_S, FIRST_WAIT_S * 2.0 ** min(failures - FREE_GUESSES, 30))  # no float overflow

    def check(self, given: str, secret: str | None) -> Verdict:
        """Compare ``given`` with ``secret`` (constant time) if no wait is running; count a wrong guess.

        Parameters
        ----------
        given : str
            The guess.
        secret : str or None
            The operator's secret (None: none set, nothing matches).

        Returns
        -------
        Verdict
        """
        with self._lock:
            now = self._clock()
            if now < self._next:
                return Verdict(False, False, self._next - now)
            if secret is not None and hmac.compare_digest(given.encode(), secret.encode()):
                self._failures, self._next = 0, -float("inf")
                return Verdict(True, True, 0.0)
            self._failures += 1
            wait = self._wait_after(self._failures)
            self._next = now + wait
            return Verdict(False, True, wait)


GATE = SecretGate()
"""The process's gate: the researcher's pages ask it (:mod:`ui.access`)."""
