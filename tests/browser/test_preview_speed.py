"""Real browser: once compiled, the MAP preview on Abilities and the Laplace leaderboard on HANNA (11
systems) answer within a second of the user's action (issue 19 item 6)."""

from __future__ import annotations

import statistics
import time

import pytest
from playwright.sync_api import expect

from ui.timings import COMPUTED_IN

WARM_S = 1.0
"""Click (or Enter) to result, once compiled: the issue's bound, with no allowance, on the median of
``TIMED`` actions (one action on a machine busy for a moment is not what a user waits)."""
TIMED = 3


@pytest.mark.browser
@pytest.mark.timed
def test_map_preview_answers_within_a_second_once_compiled(abilities_with_map):
    page = abilities_with_map
    result = page.locator("[data-testid='stAlert']").filter(has_text=COMPUTED_IN)
    page.get_by_role("button", name="Fit", exact=True).click()
    result.wait_for(timeout=180_000)  # the warm-up click: compiles the MAP solver

    seed = page.get_by_label("Seed", exact=True)
    times = []
    for value in range(2, 2 + TIMED):
        seed.fill(str(value))  # another seed: not in the fit cache, so the page fits again
        seed.press("Enter")
        result.wait_for(state="detached", timeout=60_000)  # the rerun without a click drops it
        page.wait_for_timeout(1000)  # let that rerun finish before the timed click
        clicked = time.perf_counter()
        page.get_by_role("button", name="Fit", exact=True).click()
        result.wait_for(timeout=60_000)
        times.append(time.perf_counter() - clicked)
    seen = statistics.median(times)
    assert seen <= WARM_S, f"MAP preview took {seen:.2f} s from the click"
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
    times = []
    for value in (1200, *range(1100, 1100 - 100 * TIMED, -100)):
        draws.fill(str(value))
        changed = time.perf_counter()
        draws.press("Enter")
        page.get_by_text(f"{value} draws").first.wait_for(timeout=60_000)
        times.append(time.perf_counter() - changed)
        page.wait_for_timeout(1000)  # let the rerun finish drawing before the next change
    seen = statistics.median(times[1:])
    assert seen <= WARM_S, f"the Laplace leaderboard took {seen:.2f} s from the change"
    assert not page.locator("[data-testid='stException']").count()
