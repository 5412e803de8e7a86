"""Real browser: once compiled, the MAP preview on Abilities and the Laplace leaderboard on HANNA (11
systems) answer within a second of the user's action (issue 19 item 6), on an idle machine.

On a loaded machine every process runs slower, the server's and the browser's alike: each wait is taken at its
idle equivalent, divided by the machine's slowdown measured just before it (:mod:`tests.timing`; 1 on an idle
machine, where the bound is the issue's). Before, the bound was on the wait itself, whatever the load: the MAP
preview took 1.76 s and the leaderboard 1.29 s at a load average of 11-14 on 2 cores.
"""

from __future__ import annotations

import statistics
from functools import partial

import pytest
from playwright.sync_api import expect

from tests.timing import timed
from ui.timings import COMPUTED_IN

WARM_S = 1.0
"""Action (click or Enter) to result on an idle machine, once compiled: the issue's bound, with no allowance, on
the median of ``TIMED`` actions (one action during a burst of load is not what a user waits)."""
TIMED = 3


@pytest.mark.browser
@pytest.mark.timed
def test_map_preview_answers_within_a_second_once_compiled(abilities_with_map):
    page = abilities_with_map
    result = page.locator("[data-testid='stAlert']").filter(has_text=COMPUTED_IN)
    fit = page.get_by_role("button", name="Fit", exact=True)
    fit.click()
    result.wait_for(timeout=180_000)  # the warm-up click: compiles the MAP solver

    seed = page.get_by_label("Seed", exact=True)
    waits = []
    for value in range(2, 2 + TIMED):
        seed.fill(str(value))  # another seed: not in the fit cache, so the page fits again
        seed.press("Enter")
        result.wait_for(state="detached", timeout=60_000)  # the rerun without a click drops it
        waits.append(timed(page, fit.click, partial(result.wait_for, timeout=60_000)))
    idle = statistics.median(w.idle_seconds for w in waits)
    assert idle <= WARM_S, f"MAP preview took {idle:.2f} s from the click at an idle pace: {waits}"
    assert not page.locator("[data-testid='stException']").count()


@pytest.mark.browser
@pytest.mark.timed
def test_laplace_leaderboard_answers_within_a_second_once_compiled(page, app_url):
    page.goto(f"{app_url}/leaderboard")
    page.get_by_role("heading", name="Leaderboard").wait_for(timeout=120_000)
    caption = page.get_by_text("Skill per system: posterior mean and 95% interval").first
    caption.wait_for(timeout=300_000)  # the fit on opening compiles the Laplace programs
    expect(page.get_by_text("11 systems").first).to_be_visible()
    page.get_by_text("Settings", exact=True).click()
    draws = page.get_by_label("Draws (NUTS)", exact=True)
    draws.wait_for()
    # Other draws are not in the fit cache, so the page fits again (Laplace runs at once, no button):
    # a first change warms up what the opening fit did not run, the next ones are timed.
    waits = []
    for value in (1200, *range(1100, 1100 - 100 * TIMED, -100)):
        draws.fill(str(value))
        shown = page.get_by_text(f"{value} draws").first
        waits.append(timed(page, partial(draws.press, "Enter"), partial(shown.wait_for, timeout=60_000)))
    idle = statistics.median(w.idle_seconds for w in waits[1:])
    assert idle <= WARM_S, f"the Laplace leaderboard took {idle:.2f} s from the change at an idle pace: {waits}"
    assert not page.locator("[data-testid='stException']").count()
