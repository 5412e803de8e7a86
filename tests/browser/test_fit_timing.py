"""Real browser: the time the Abilities page reports is the time the user waited."""

from __future__ import annotations

import re
import time

import pytest


@pytest.mark.browser
@pytest.mark.timed
def test_reported_map_time_matches_click_to_result_in_the_browser(abilities_with_map):
    page = abilities_with_map
    result = page.locator("[data-testid='stAlert']").filter(has_text="Result in")
    page.get_by_role("button", name="Fit", exact=True).click()
    result.wait_for(timeout=180_000)  # the warm-up fit: compiles the MAP solver

    seed = page.get_by_label("Seed", exact=True)
    seed.fill("1")  # another seed: not in the cache, so the page fits again
    seed.press("Enter")
    result.wait_for(state="detached", timeout=60_000)  # the rerun without a click drops it
    page.wait_for_timeout(1000)  # let that rerun finish before the timed click

    clicked = time.perf_counter()
    page.get_by_role("button", name="Fit", exact=True).click()
    result.wait_for(timeout=120_000)
    seen = time.perf_counter() - clicked
    reported = float(re.search(r"Result in ([\d.]+) s", result.inner_text()).group(1))
    # The page times from its script's start to after the results are built. Not in its count:
    # the click's trip to the server and app.py's preamble before the page starts (the status
    # element shows 0.2-0.3 s after the click), and sending and drawing the elements (chart,
    # table) in headless chromium without a GPU, plus playwright's polling: measured 0.7-0.9 s
    # on the shared 2-core machine whatever the fit's length (fits of 0.2 and 0.5 s were seen
    # after 1.0-1.2 s). Hence 10% plus 1 s of absolute slack, not the 0.3 s first planned. The
    # old page reported 26.5 s for a 38.9 s wait: 12 s missing, which this still catches.
    assert abs(seen - reported) <= 0.1 * seen + 1.0, (seen, reported)
    assert not page.locator("[data-testid='stException']").count()
