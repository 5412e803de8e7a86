"""The Data page in chromium: after a new upload the format is chosen with one choice (issue 16, item 15).

The browser keeps a keyed widget's last value until the server sends another: the format of the last
file stayed on screen while the page asked for the format, and choosing that format did nothing.
"""

from __future__ import annotations

RANKED = "item,annotator,condition,{rank}\n" + "".join(
    f"i{i},{w},{c},{r}\n"
    for i in range(4)
    for w in ("w1", "w2")
    for c, r in zip(("AI", "edited", "human"), (1, 2, 3), strict=True)
)


def shown_format(page) -> str:
    return page.locator("[data-testid='stSelectbox']").filter(has_text="Format").locator("input").input_value()


def choose_format(page, name: str) -> None:
    page.locator("[data-testid='stSelectbox']").filter(has_text="Format").click()
    page.get_by_role("option", name=name, exact=True).click()


def test_the_first_format_choice_after_a_new_upload_takes(page, app_url, tmp_path, upload_judgments):
    first, second = tmp_path / "first.csv", tmp_path / "second.csv"
    first.write_text(RANKED.format(rank="rank"))
    second.write_text(RANKED.format(rank="order_given"))  # no column says "rank": the format is asked for
    page.goto(app_url)
    page.get_by_role("heading", name="Data").wait_for(timeout=120_000)
    upload_judgments(page, first)
    page.get_by_text("Map your columns").wait_for()  # read as a ranking
    choose_format(page, "bestworst")
    page.get_by_text("judgment", exact=True).wait_for()
    upload_judgments(page, second)
    page.get_by_text("The format could not be told").wait_for()
    assert shown_format(page) == ""  # not the last file's "bestworst"
    choose_format(page, "bestworst")
    page.get_by_text("Map your columns").wait_for(timeout=30_000)
    assert shown_format(page) == "bestworst"
    assert not page.locator("[data-testid='stException']").count()
