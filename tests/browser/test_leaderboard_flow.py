"""Real browser: the Leaderboard page opens on HANNA and shows the table and the forest plot of skills;
an upload of unpaired ratings goes from the Data page to a ranking on the Leaderboard, its annotators'
severities modelled by default."""

from __future__ import annotations

from playwright.sync_api import expect


def test_leaderboard_page_shows_the_table_and_the_forest_plot(page, app_url):
    page.goto(f"{app_url}/leaderboard")
    page.get_by_role("heading", name="Leaderboard").wait_for(timeout=120_000)
    page.get_by_text("Skill per system: posterior mean and 95% interval").first.wait_for(timeout=180_000)
    assert page.locator("[data-testid='stDataFrame']").count() >= 1
    assert page.locator(".js-plotly-plot").count() >= 1
    expect(page.get_by_text("11 systems").first).to_be_visible()
    assert not page.locator("[data-testid='stException']").count()


def test_unpaired_ratings_go_from_upload_to_leaderboard(page, app_url, tmp_path, upload_judgments):
    from lib.ranking.simulate import simulate_ratings

    scores, _ = simulate_ratings(4, 40, 6, raters_per_cell=2, unpaired=True, seed=1)  # one system per prompt
    path = tmp_path / "dialog ratings.csv"
    scores.rename(columns={"prompt_id": "prompt", "annotator_id": "annotator"}).to_csv(path, index=False)
    page.goto(app_url)
    page.get_by_role("heading", name="Data").wait_for(timeout=120_000)
    upload_judgments(page, path)
    page.locator("[data-testid='stAlert']").filter(has_text="no prompt was rated for two systems").wait_for(
        timeout=60_000
    )
    page.locator("[data-testid='stSidebarNav']").get_by_text("Abilities").click()
    note = page.locator("[data-testid='stAlert']").filter(has_text="holds unpaired ratings")
    note.wait_for(timeout=60_000)
    page.get_by_role("link", name="Rank them on the Leaderboard").click()  # the page that can rank them
    page.get_by_role("heading", name="Leaderboard").wait_for(timeout=60_000)
    # the 6 annotators rated dialogs of every system: their severities are modelled by default, by NUTS,
    # which waits for the button
    page.locator("[data-testid='stAlert']").filter(has_text="annotator severity").wait_for(timeout=60_000)
    page.get_by_role("button", name="Rank", exact=True).click()
    page.get_by_text("Skill per system: posterior mean and 95% interval").first.wait_for(timeout=300_000)
    expect(page.get_by_text("Annotator severity is modelled").first).to_be_visible()
    expect(page.get_by_text("4 systems").first).to_be_visible()
    expect(page.get_by_text("ratings likelihood").first).to_be_visible()
    assert not page.get_by_text("could not be used").count()
    assert not page.locator("[data-testid='stException']").count()
