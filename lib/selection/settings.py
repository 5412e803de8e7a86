"""What a prompt selection can be asked for: calibration modes and the target SE (no heavy imports).

Read by the command line, the page and :mod:`lib.selection`. The strategies (names, labels, help)
are the registry :data:`lib.selection.strategies.STRATEGIES`; the full mode's NUTS sizes are
:data:`lib.irt.settings.FULL_MODE_SETTINGS`.
"""

from __future__ import annotations

from lib.errors import SettingsError

MODES = {
    "fast": "leave-one-out MAP rescaled to sd(theta) = 1 (seconds)",
    "full": "posterior draws of the items, left out by PSIS, so item uncertainty widens the SE (minutes)",
}
"""Calibration modes of :func:`lib.selection.calibration.make_calibration`, name -> help text."""

DEFAULT_TARGET_SE = 0.3
"""Default target SE on the theta scale, the same whatever the calibration mode. With theta's prior
N(0, 1), SE 0.3 is a reliability of 1 - 0.3^2 = 0.91, the usual stopping rule of computerized
adaptive testing (reliability 0.9, SE about 0.3; e.g. the PROMIS item banks), and a 95% interval of
+-0.59: the sign of a comparison is settled once |theta| is about 0.6 or more."""

DEFAULT_RANDOM_DRAWS = 50
"""Random orders per held-out comparison for the ``random`` strategy."""


def check_mode(mode: str) -> str:
    """Return ``mode``; raise SettingsError for a calibration mode not in :data:`MODES`."""
    if mode not in MODES:
        raise SettingsError(f"unknown calibration mode '{mode}'; choose {' or '.join(MODES)}")
    return mode
