"""Real browser: hostile item text, instructions, example and study name on the annotator's page are
shown as text: no image loaded, no script run, no live link."""

from __future__ import annotations

import importlib.util
import urllib.parse
from pathlib import Path

from lib.study import db as study_db
from lib.study.create import create_study
from lib.study.items import ItemSpec

_spec = importlib.util.spec_from_file_location("browser_fixtures", Path(__file__).with_name("conftest.py"))
_fixtures = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_fixtures)

PAYLOAD = "\n\n".join(  # one per paragraph: a line that starts with <script> is one HTML block in Markdown
    [
        "![pixel](http://127.0.0.1:9/pixel.png)",
        "[win](javascript:alert('z'))",
        "<http://127.0.0.1:9/auto> and www.example.org",
        ":red[loud] $\\frac{a}{b}$",
        "<img src=x onerror=alert('y')>",
        "<script>alert('x')</script>",
    ]
)


def _inert(page) -> None:
    main = page.locator("[data-testid='stMain']")
    main.get_by_text("<script>alert('x')</script>", exact=False).first.wait_for()  # shown as text
    assert main.locator("img").count() == 0
    assert main.locator("script").count() == 0
    assert main.locator("a[href^='javascript']").count() == 0
    assert main.locator("a[href*='127.0.0.1:9']").count() == 0 and main.locator("a[href*='example.org']").count() == 0
    assert main.locator(".katex").count() == 0


def test_hostile_texts_are_inert_in_the_annotators_page(browser, tmp_path, monkeypatch):
    url_db = f"sqlite:///{tmp_path / 'studies.sqlite'}"
    monkeypatch.setenv(study_db.DATABASE_ENV, url_db)
    items = [ItemSpec("p1", PAYLOAD, (("one", PAYLOAD), ("two", "plain"), ("three", "plain too")), None)]
    study = create_study(
        items,
        task="bestworst",
        criteria=["fluency"],
        annotators=1,
        per_item=1,
        instructions=f"## Read me\n\n{PAYLOAD}",
        example=PAYLOAD,
        name=PAYLOAD[:200],
    )
    study_db.dispose(url_db)
    with _fixtures.serve(tmp_path / "cache") as url:
        context = browser.new_context(viewport={"width": 1300, "height": 1000})
        page = context.new_page()
        page.set_default_timeout(60_000)
        dialogs, requests = [], []
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.on("request", lambda r: requests.append(r.url))
        page.goto(f"{url}/?{urllib.parse.urlencode({'study_token': study.tokens[0][1]})}")
        page.get_by_role("button", name="Start").wait_for(timeout=120_000)
        page.get_by_role("heading", name="Read me").wait_for()  # the researcher's Markdown heading stays
        _inert(page)  # the instructions and the example, open before the first page
        page.get_by_role("button", name="Start").click()
        page.get_by_text("Page 1 of 1").wait_for()
        page.get_by_text("Instructions", exact=True).click()
        page.get_by_text("Example", exact=True).click()
        page.get_by_role("heading", name="Read me").wait_for()
        _inert(page)  # the item's text and passages, with both expanders open
        page.wait_for_timeout(500)
        assert dialogs == [] and not any(":9/" in u for u in requests)
        context.close()
