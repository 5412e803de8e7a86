"""Real browser: the seed-001 demo study from creation to the Leaderboard (issue 21).

A researcher creates the demo study (2 ROME facts, 3 annotators, each fact judged by all three: 2
pages each) on the Studies page; three annotator browser contexts answer it at once, one reloading
mid-page and all of them going on after a server restart between their pages; the export equals what
was clicked, row for row, with positions and times; the judgments open in the Data page and the
Leaderboard ranks them.
"""

from __future__ import annotations

import importlib.util
import re
import time
import urllib.parse
from pathlib import Path

from lib.study import db as study_db
from lib.study.export import export_judgments

_spec = importlib.util.spec_from_file_location("browser_fixtures", Path(__file__).with_name("conftest.py"))
_fixtures = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_fixtures)
serve = _fixtures.serve  # one way to start the app; the `tests` package name is not importable for certain

CHOICES = {  # annotator -> criterion -> (MOST label, LEAST label), varied so rows differ
    "annotator-1": {"consistency": ("A", "C"), "fluency": ("B", "A")},
    "annotator-2": {"consistency": ("C", "B"), "fluency": ("A", "C")},
    "annotator-3": {"consistency": ("B", "A"), "fluency": ("C", "B")},
}


def _choose(page, criterion: str, most: str, least: str) -> None:
    for key, label in (("MOST", most), ("LEAST", least)):
        group = page.locator("[data-testid='stRadio']").filter(has_text=f"{key} {criterion}")
        group.get_by_text(label, exact=True).click()


def _shown(page) -> tuple[str, list[str]]:
    """The page's fact and the passages' texts in the order shown (A, B, C)."""
    markdown = page.locator("[data-testid='stMarkdownContainer']")
    fact = markdown.filter(has_text=re.compile(r"^The fact / prompt:")).last.inner_text().split(":", 1)[1].strip()
    passages = []
    for label in "ABC":
        block = markdown.filter(has_text=re.compile(rf"^{label}\. ")).last
        passages.append(block.inner_text().split(". ", 1)[1].strip())
    return fact, passages


class Annotator:
    """One annotator's browser context, and what they clicked."""

    def __init__(self, browser, label: str, token: str):
        self.label, self.token = label, token
        self.context = browser.new_context(viewport={"width": 1300, "height": 1000})
        self.page = self.context.new_page()
        self.page.set_default_timeout(60_000)
        self.clicked: list[dict] = []
        self.shown_at: float | None = None
        self.asked_at: float | None = None  # before the action that made the server show the next page

    def open(self, url: str) -> None:
        if self.asked_at is None:  # the first page may be marked shown as the link opens
            self.asked_at = time.monotonic()
        self.page.goto(f"{url}/?{urllib.parse.urlencode({'study_token': self.token})}")
        self.page.get_by_role("heading", name="Counterfactual AI Writing Study").first.wait_for(timeout=120_000)

    def start(self) -> None:
        self.page.get_by_role("button", name="Start").click()
        self.wait_page(1)

    def wait_page(self, number: int) -> None:
        self.page.get_by_text(f"Page {number} of 2").wait_for()
        if self.shown_at is None:
            self.shown_at = time.monotonic()

    def answer(self, number: int, *, reload_first: bool = False) -> None:
        page = self.page
        if reload_first:  # a choice made, then the tab reloaded: the same page comes back, unanswered
            _choose(page, "consistency", "A", "B")
            page.reload()
            self.wait_page(number)
        fact, passages = _shown(page)
        for criterion, (most, least) in CHOICES[self.label].items():
            _choose(page, criterion, most, least)
        submitted = time.monotonic()
        page.get_by_role("button", name="Submit this page").click()
        seconds = time.monotonic() - self.shown_at
        self.shown_at = None
        if number < 2:
            self.wait_page(number + 1)  # shown at once: its time starts now, even across the restart
        else:
            page.get_by_text("every page is answered").wait_for()
        window = time.monotonic() - self.asked_at
        self.asked_at = submitted
        self.clicked.append({"page": number, "fact": fact, "passages": passages, "seconds": seconds, "window": window})


def _create_demo_study(browser, url: str) -> dict[str, str]:
    """The researcher creates the demo study on the Studies page; its links' tokens by annotator."""
    researcher = browser.new_context(viewport={"width": 1400, "height": 1000})
    rpage = researcher.new_page()
    rpage.set_default_timeout(60_000)
    rpage.goto(url)
    rpage.get_by_role("heading", name="Data").wait_for(timeout=120_000)
    rpage.locator("[data-testid='stSidebarNav']").get_by_text("Studies").click()
    rpage.get_by_role("heading", name="Studies").wait_for()
    prompts = rpage.get_by_label("Prompts (0 = all)")
    prompts.fill("2")
    prompts.press("Enter")
    rpage.get_by_role("button", name="Create study").click()
    rpage.get_by_text("Study 1 created: 2 items, 3 annotators.").wait_for()
    rpage.get_by_text("Annotator links (3)").click()
    lines = rpage.locator("[data-testid='stCode']").first.inner_text().splitlines()
    researcher.close()
    return {
        label: urllib.parse.parse_qs(urllib.parse.urlparse(link).query)["study_token"][0]
        for label, link in (line.split() for line in lines if line.strip())
    }


def _check_export(people: list[Annotator]) -> None:
    """The export is what was clicked, row for row: fact, passage at each position, judgment, seconds."""
    table = export_judgments(1)
    expected = []
    for person in people:
        for click in person.clicked:
            for criterion, (most, least) in CHOICES[person.label].items():
                for position, label in enumerate("ABC", start=1):
                    judged = "most" if label == most else "least" if label == least else "middle"
                    text = " ".join(click["passages"][position - 1].split())[:60]
                    expected.append((person.label, click["page"], click["fact"], criterion, text, judged, position))
    got = [
        (r.annotator, r.page, r.prompt_text, r.criterion, " ".join(r.response.split())[:60], r.judgment, r.position)
        for r in table.itertuples()
    ]
    assert got == expected
    # The server's time on a page runs from its showing (sent before the browser shows it) to the answer (taken
    # after the click): at least the browser's seconds from showing to click, and at most the window from the
    # action that asked for the page to the browser showing what followed the answer. A fixed allowance above
    # the browser's seconds (5 s) failed on a loaded machine: 26.9 s recorded for 9.4 s seen, load average 30.
    measured = {(person.label, click["page"]): click for person in people for click in person.clicked}
    for r in table.itertuples():
        click = measured[(r.annotator, r.page)]
        assert click["seconds"] - 2 <= r.seconds <= click["window"], (r.annotator, r.page, r.seconds, click)


def _leaderboard_ranks_it(browser, url: str) -> None:
    researcher = browser.new_context(viewport={"width": 1400, "height": 1000})
    rpage = researcher.new_page()
    rpage.set_default_timeout(60_000)
    rpage.goto(f"{url}/studies")
    rpage.get_by_role("heading", name="Studies").wait_for(timeout=120_000)
    rpage.get_by_text("6 / 6").wait_for()
    rpage.get_by_role("button", name="Open the judgments in the Data page").click()
    rpage.get_by_role("heading", name="Data").wait_for()
    rpage.get_by_text("Fleiss' kappa over a / b / tie").wait_for()
    rpage.locator("[data-testid='stSidebarNav']").get_by_role("link", name="Leaderboard", exact=True).click()
    rpage.get_by_role("heading", name="Leaderboard").wait_for()
    rpage.get_by_text("Skill per system: posterior mean and 95% interval").first.wait_for(timeout=180_000)
    assert rpage.get_by_text("3 systems").first.is_visible()
    assert not rpage.locator("[data-testid='stException']").count()
    researcher.close()


def test_demo_study_from_creation_to_leaderboard(browser, tmp_path, monkeypatch):
    url_db = f"sqlite:///{tmp_path / 'studies.sqlite'}"
    monkeypatch.setenv(study_db.DATABASE_ENV, url_db)  # the served app's database (serve copies the environment)
    cache = tmp_path / "cache"
    with serve(cache) as url:
        tokens = _create_demo_study(browser, url)
        assert list(tokens) == list(CHOICES)
        people = [Annotator(browser, label, token) for label, token in tokens.items()]
        for person in people:  # all three at once: each opens the link before anyone answers
            person.open(url)
            assert not person.page.locator("[data-testid='stSidebarNav']").count()  # no analysis page
        for person in people:
            person.start()
        for person in people:
            person.answer(1)
    # The server stopped between the pages (page 2 was already shown to everyone) and starts again.
    study_db.dispose(url_db)
    with serve(cache) as url:
        for i, person in enumerate(people):
            person.open(url)  # the same link after the restart: resumes on page 2
            person.wait_page(2)
            person.answer(2, reload_first=i == 1)
        for person in people:
            person.context.close()
        _check_export(people)
        _leaderboard_ranks_it(browser, url)
