"""Real browser: the Prompt selection page opens and draws the SE-vs-k chart (default data, fast mode)."""

from __future__ import annotations

from playwright.sync_api import expect


def test_selection_page_shows_the_se_curve(page, app_url):
    page.goto(f"{app_url}/selection")
    page.get_by_role("heading", name="Prompt selection").wait_for(timeout=120_000)
    chart = page.locator(".js-plotly-plot").first
    chart.wait_for(timeout=180_000)
    expect(page.get_by_text("SE of the held-out ability vs number of prompts").first).to_be_visible()
    expect(page.get_by_text("fast calibration").first).to_be_visible()
    assert not page.locator("[data-testid='stException']").count()
