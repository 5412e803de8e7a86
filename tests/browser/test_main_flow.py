"""Real browser: open the app on the default data, fit it, find the ability chart and the prompts."""

from __future__ import annotations

from playwright.sync_api import expect

from ui.timings import COMPUTED_IN


def test_the_default_data_opens_with_its_votes(page, app_url):
    page.goto(app_url)
    page.get_by_role("heading", name="Data").wait_for(timeout=120_000)
    page.get_by_text("1809").first.wait_for()  # votes of the default LAMP rankings
    assert not page.locator("[data-testid='stException']").count()


def test_fit_the_default_data_and_see_abilities_and_prompts(abilities_with_map):
    # A MAP fit keeps the browser test short; the full posterior is tested in tests/irt/test_irt_fit.py.
    page = abilities_with_map
    page.get_by_role("button", name="Fit", exact=True).click()
    page.get_by_text("MAP ability (preview").first.wait_for(timeout=180_000)
    assert page.locator(".js-plotly-plot").count() >= 1
    expect(page.get_by_text("Human-edited vs AI-generated").first).to_be_visible()
    # The open settings stay open on the first rerun after the first fit (the user's next setting).
    seed = page.get_by_label("Seed", exact=True)
    seed.fill("1")
    seed.press("Enter")
    expect(page.locator("[data-testid='stAlert']").filter(has_text=COMPUTED_IN)).to_have_count(0)  # the rerun's end
    expect(seed).to_be_visible()
    page.locator("[data-testid='stSidebarNav']").get_by_text("Prompts").click()
    page.get_by_text("Category response curves").first.wait_for(timeout=60_000)
    assert not page.locator("[data-testid='stException']").count()


def test_a_bad_upload_gets_a_message_naming_file_row_and_column(page, app_url, tmp_path, upload_judgments):
    bad = tmp_path / "my votes.csv"
    bad.write_text("prompt,system_a,system_b,annotator,choice\np1,x,y,r1,A\np2,x,y,r1,maybe\n")
    page.goto(app_url)
    page.get_by_role("heading", name="Data").wait_for(timeout=120_000)
    upload_judgments(page, bad)
    error = page.locator("[data-testid='stAlert']").filter(has_text="Cannot use this data")
    error.wait_for(timeout=60_000)
    text = error.inner_text()
    assert "my votes.csv" in text and "row 2" in text and "'choice'" in text and "maybe" in text
    assert not page.locator("[data-testid='stException']").count()
