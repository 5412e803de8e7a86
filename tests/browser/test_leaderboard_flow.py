"""Real browser: the Leaderboard page opens on HANNA and shows the table and the forest plot of skills."""

from __future__ import annotations


def test_leaderboard_page_shows_the_table_and_the_forest_plot(page, app_url):
    page.goto(f"{app_url}/leaderboard")
    page.get_by_role("heading", name="Leaderboard").wait_for(timeout=120_000)
    page.get_by_text("Skill per system: posterior mean and 95% interval").first.wait_for(timeout=180_000)
    assert page.locator("[data-testid='stDataFrame']").count() >= 1
    assert page.locator(".js-plotly-plot").count() >= 1
    assert page.get_by_text("11 systems").first.is_visible()
    assert not page.locator("[data-testid='stException']").count()
