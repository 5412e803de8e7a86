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

THETA_SCALE = {
    "fast": "Theta here is on the calibration's scale, not the Abilities page's: the fast calibration is "
    "rescaled so that the other comparisons' thetas have root-mean-square 1 (the prior's scale, so "
    "that the target SE means the same on every data set), and the estimate starts from theta's "
    "N(0, 1) prior. The Abilities page gives the NUTS fit's theta in logits, where comparisons "
    "spread more (clearly different systems reach 4-6): divide its theta by the root-mean-square of "
    "its comparisons' thetas to compare. Signs and order agree.",
    "full": "Theta here is in the posterior fit's logits, as on the Abilities page, but this comparison is "
    "left out of the calibration and its estimate starts from theta's N(0, 1) prior again, prompt by "
    "prompt: for clearly different systems it is pulled towards 0 until many prompts are in, while the "
    "Abilities page's theta uses every prompt at once. Signs and order agree.",
}
"""Why the adaptive what-if's theta differs from the Abilities page's, per calibration mode (issue 16;
shown under the what-if and in docs/selection.md)."""

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
