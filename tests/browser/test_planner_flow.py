"""Real browser: the Study planner runs a small plan from typed-in assumptions on the embedded Dask
cluster and draws the power curves."""

from __future__ import annotations


def test_planner_runs_a_small_plan_and_shows_the_power_curve(page, app_url):
    page.goto(f"{app_url}/planner")
    page.get_by_role("heading", name="Study planner").wait_for(timeout=120_000)
    page.get_by_text("Typed in", exact=True).click()
    page.get_by_label("Systems", exact=True).wait_for()
    for label, value in (
        ("Prompts per comparison", "5, 10"),
        ("Annotators per item", "1"),
        ("Simulated studies per design", "4"),
    ):
        field = page.get_by_label(label, exact=True)
        field.fill(value)
        field.press("Enter")
    page.get_by_text("Press Run plan to simulate the designs.").wait_for()
    page.get_by_role("button", name="Run plan").click()
    page.locator(".js-plotly-plot").first.wait_for(timeout=180_000)
    # The page draws the curves first and the tables and downloads after them: wait for each.
    page.get_by_text("Power against prompts").first.wait_for()
    page.get_by_role("heading", name="Cheapest design reaching power 0.8").wait_for()
    page.get_by_role("button", name="power.csv").wait_for()
    assert not page.locator("[data-testid='stException']").count()
