"""Real browser: the time the Abilities page reports is the server's, and the rest of the user's wait is
what any answer costs the browser at the moment's load (issue 29, item 5).

The page reports the seconds of the run a click began, on the server (``ui.timings.server_time_text``).
Checked on the server's side: the figure is within the user's wait, and it holds the fit (its phases'
seconds, from the page's "Time per phase" table, are at most the figure). The user waits longer: the
click's trip to the server and the drawing of the page are not in the figure, and they grow with the
machine's load (a few tenths of a second idle, 1.5 s and more on a loaded 2-core machine). So they are
measured in the same run, by clicks whose fit is already in the cache: the same page (progress, charts,
table) comes back after the same work but the fit, and their unexplained wait (browser seconds minus
reported seconds) is the browser's cost of an answer at this moment. A fit's unexplained wait may exceed
it by the spread of those clicks and ``SLACK`` only: a part of the server's work left out of the figure
shows as excess (the page of issue 16 reported 26.5 s for a 38.9 s wait). Each click is timed as the other
timed tests time an action (:func:`tests.timing.timed`: from an idle page; the figures give the machine's slowdown).
"""

from __future__ import annotations

import re
import statistics
from functools import partial

import pytest

from tests.timing import Wait, timed
from ui.timings import COMPUTED_IN

ROUNDS = 4
"""Fits and cached answers, interleaved (a load that comes and goes hits both alike); medians are compared
(with 3 rounds a burst of load on the fits alone failed the check once at a load average of 14)."""
SLACK = 0.25
"""Seconds a fit's unexplained wait may exceed the cached answers' beyond their spread: the fit's progress
messages drawn by the browser (the old check allowed 1 s plus 10% of the wait, whatever the load)."""
CLOCKS = 0.02
"""Seconds the reported figure may exceed the browser's wait: it is printed to 0.01 s, and the two processes
read the same monotonic clock."""


@pytest.mark.browser
@pytest.mark.timed
def test_the_reported_time_is_the_servers_and_the_rest_of_the_wait_is_the_browsers(abilities_with_map):
    page = abilities_with_map
    result = page.locator("[data-testid='stAlert']").filter(has_text=COMPUTED_IN)
    fit = page.get_by_role("button", name="Fit", exact=True)
    seed = page.get_by_label("Seed", exact=True)

    def phases_total() -> float:
        """The fit's seconds in all its phases, as its "Time per phase" table says (also when collapsed)."""
        row = page.locator("[data-testid='stExpander']").filter(has_text="Time per phase").locator("tr")
        return float(row.filter(has_text="total").locator("td").first.text_content())

    def answer(value: int) -> tuple[Wait, float]:
        """Seed ``value``, then a click on Fit: (the wait until the browser shows the result, seconds reported)."""
        seed.fill(str(value))
        seed.press("Enter")
        result.wait_for(state="detached", timeout=60_000)  # the rerun without a click drops the message
        wait = timed(page, fit.click, partial(result.wait_for, timeout=120_000))
        return wait, float(re.search(rf"{COMPUTED_IN} ([\d.]+) s", result.inner_text()).group(1))

    cached_seed = int(seed.input_value())
    fit.click()
    result.wait_for(timeout=180_000)  # the warm-up fit: compiles the MAP solver; its fit is now cached
    fits, totals, cached = [], [], []
    for r in range(ROUNDS):
        fits.append(answer(cached_seed + 1 + r))  # a seed not fitted yet: the page fits
        totals.append(phases_total())  # the fit is inside the figure: its phases' seconds are at most it
        cached.append(answer(cached_seed))  # the warm-up's fit, read from the cache
    figures = f"fits (seen, reported) {fits}; cached {cached}"

    assert all(reported <= seen.seconds + CLOCKS for seen, reported in fits + cached), figures  # the server's part
    browser = [seen.seconds - reported for seen, reported in cached]
    unexplained = statistics.median(seen.seconds - reported for seen, reported in fits)
    assert unexplained <= statistics.median(browser) + (max(browser) - min(browser)) + SLACK, figures
    assert all(reported >= total for (_, reported), total in zip(fits, totals, strict=True)), (figures, totals)
    assert not page.locator("[data-testid='stException']").count()
