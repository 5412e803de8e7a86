"""Real browser: the Study planner runs a small plan from typed-in assumptions on the embedded Dask
cluster and draws the power curves; a reload keeps the uploaded pilot and the plan (issue 29)."""

from __future__ import annotations

from playwright.sync_api import expect


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


PILOT = "item,system_a,system_b,annotator,choice\n" + "".join(
    f"q{p},base,variant,w{w},{'BBBA'[(p + w) % 4] if (p * w) % 5 else 'tie'}\n" for p in range(20) for w in range(3)
)
"""A pairwise pilot: 20 prompts, 3 annotators, the variant mostly preferred."""


def test_a_reload_keeps_the_uploaded_pilot_and_the_plan(page, app_url, tmp_path, upload_judgments):
    """Issue 29: reloading the Study planner dropped the uploaded pilot ("No upload yet") and the plan."""
    pilot = tmp_path / "pilot.csv"
    pilot.write_text(PILOT)
    page.goto(app_url)
    page.get_by_role("heading", name="Data").wait_for(timeout=120_000)
    upload_judgments(page, pilot)
    page.get_by_text("a reload of the page keeps it").wait_for()
    page.locator("[data-testid='stSidebarNav']").get_by_text("Study planner").click()
    page.get_by_text("Planning from the pilot").wait_for(timeout=120_000)
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
    page.get_by_role("heading", name="Cheapest design reaching power 0.8").wait_for(timeout=180_000)
    assert "upload=" in page.url and "planner_replicates=4" in page.url  # the upload's key and the settings
    page.reload()
    page.get_by_text("Planning from the pilot").wait_for(timeout=120_000)
    page.get_by_text("shown from the plan cache").wait_for()
    page.get_by_role("heading", name="Cheapest design reaching power 0.8").wait_for()
    expect(page.get_by_label("Simulated studies per design", exact=True)).to_have_value("4")
    assert not page.get_by_text("No upload yet").count()
    assert not page.locator("[data-testid='stException']").count()
