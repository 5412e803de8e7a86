"""Real browser: a pairwise study of the researcher's own items run on a crowd platform (issue 33).

The researcher switches the Studies page from the demo to their items CSV (nothing of the demo's stays),
writes their own title, question label and instructions, previews the first page, asks for attention checks
and a crowd platform's link. Three participants arrive through that link with Prolific's parameters: one
leaves after two pages and resumes with the same id, one answers the attention check against its
instruction; a fourth finds the study full. No annotator's page shows the demo's text, a system's name or
Streamlit's chrome. The export and the Leaderboard leave the careless participant out and say so, the
Leaderboard estimates the position bias on the export, and its next batch becomes pages that a participant
then answers through the same link.
"""

from __future__ import annotations

import csv
import importlib.util
import re
from pathlib import Path

from playwright.sync_api import TimeoutError as PlaywrightTimeout
from playwright.sync_api import expect

from lib.study import db as study_db
from lib.study.annotate import open_page
from lib.study.export import export_study
from lib.study.summary import study_links

_spec = importlib.util.spec_from_file_location("browser_fixtures", Path(__file__).with_name("conftest.py"))
_fixtures = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_fixtures)
serve = _fixtures.serve

TITLE = "Which answer helps more?"
INSTRUCTIONS = "Read the question and both answers, then choose the MORE HELPFUL answer (or a tie)."
CODE = "CROWD-2026"
STARS = {"model-north": "★★★", "model-south": "★★", "model-east": "★"}
"""Each system's answers carry its stars: a careful participant prefers more stars."""
QUESTIONS = {"q1": "How do I boil an egg?", "q2": "How do I keep basil fresh?"}
PAGES = 5  # 2 questions x 3 pairs x 2 per item / 3 participants = 4 pages, and round(0.2 x 4 / 0.8) = 1 check


def _items(path: Path) -> Path:
    with path.open("w", newline="", encoding="utf-8") as f:
        out = csv.writer(f)
        out.writerow(["prompt_id", "prompt_text", "system", "response"])
        for prompt, question in QUESTIONS.items():
            for system, stars in STARS.items():
                out.writerow([prompt, question, system, f"{stars} An answer to {prompt}, written with care."])
    return path


def _field(page, label: str, value: str, *, area: bool = False) -> None:
    box = page.get_by_label(label, exact=True)
    box.fill(value)
    box.press("Control+Enter" if area else "Enter")


def _create(browser, url: str, items: Path) -> str:
    """The researcher's study; the Prolific form of its one link."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(60_000)
    page.goto(f"{url}/studies")
    page.get_by_role("heading", name="Studies").wait_for(timeout=120_000)
    expect(page.get_by_label("Title (annotators read it)", exact=True)).to_have_value("Counterfactual AI Writing Study")
    page.get_by_text("Your items CSV").click()
    expect(page.get_by_label("Title (annotators read it)", exact=True)).to_have_value("")
    expect(page.get_by_label("Instructions (Markdown)", exact=True)).to_have_value("")
    uploader = page.locator("[data-testid='stFileUploader']").filter(has_text="Items CSV")
    uploader.locator("input[type='file']").set_input_files(str(items))
    page.locator("[data-testid='stSelectbox']").filter(has_text="Task").click()
    page.get_by_role("option", name="pairwise", exact=True).click()
    _field(page, "Criteria (comma-separated)", "helpfulness")
    _field(page, "Their labels in the questions", "helpful")
    _field(page, "Title (annotators read it)", TITLE)
    _field(page, "Annotators per item", "2")
    _field(page, "Attention checks", "0.2")
    page.get_by_text("One link for a crowd platform").click()
    _field(page, "Completion code (blank: a random one)", CODE)
    _field(page, "Instructions (Markdown)", INSTRUCTIONS, area=True)
    page.get_by_text("Preview: exactly what an annotator sees").click()
    preview = page.locator("[data-testid='stExpander']").filter(has_text="Preview: exactly what").last
    expect(preview.get_by_text("MORE HELPFUL", exact=True)).to_be_visible()
    expect(preview.get_by_text(INSTRUCTIONS)).to_be_visible()
    shown = preview.inner_text()
    assert "Counterfactual" not in shown and not any(s in shown for s in STARS)
    page.get_by_role("button", name="Create study").click()
    page.get_by_text("Study 1 created: 6 items, 3 places on its link.").wait_for()
    code = page.locator("[data-testid='stCode']").filter(has_text="prolific:").first.inner_text()
    context.close()
    return next(line.split(": ", 1)[1] for line in code.splitlines() if line.startswith("prolific:"))


def _instruction_pick(text: str) -> str | None:
    found = re.search(r"choose passage ([AB]) as MORE HELPFUL", text)
    return found.group(1) if found else None


class Participant:
    """One crowd participant's browser context."""

    def __init__(self, browser, link: str, pid: str, *, careless: bool = False):
        self.link = (
            link.replace("{{%PROLIFIC_PID%}}", pid)
            .replace("{{%STUDY_ID%}}", "prolific-study")
            .replace("{{%SESSION_ID%}}", f"session-{pid}")
        )
        self.careless = careless
        self.browser = browser
        self.context = self.page = None

    def arrive(self) -> None:
        self.context = self.browser.new_context(viewport={"width": 1300, "height": 1000})
        self.page = self.context.new_page()
        self.page.set_default_timeout(60_000)
        self.page.goto(self.link)
        self.page.get_by_role("heading", name=TITLE).first.wait_for(timeout=120_000)
        self.check_blind()

    def check_blind(self) -> None:
        """No demo text, no system name, no Streamlit chrome (deploy button, main menu)."""
        body = self.page.inner_text("body")
        assert "Counterfactual" not in body and "ROME" not in body
        assert not any(system in body for system in STARS)
        assert "Deploy" not in body and "Clear cache" not in body
        expect(self.page.locator("[data-testid='stMainMenu']")).to_be_hidden()
        expect(self.page.locator("[data-testid='stAppDeployButton']")).to_have_count(0)

    def answer(self, pages: int) -> None:
        page = self.page
        group = page.locator("[data-testid='stRadio']").filter(has_text="MORE HELPFUL")
        for _ in range(pages):
            # the page drawn before it is read: a half-drawn page (its check's instruction not shown yet, or the
            # last page's left stale) made the careless participant answer a check by the stars and pass it
            expect(page.locator("[data-stale='true']")).to_have_count(0)
            expect(group).to_have_count(1)
            number = int(page.get_by_text(re.compile(r"^Page \d+ of \d+$")).first.inner_text().split()[1])
            body = page.inner_text("body")
            asked = _instruction_pick(body)
            if asked is not None:
                pick = {"A": "B", "B": "A"}[asked] if self.careless else asked
            else:
                a, b = (page.locator("[data-testid='stMarkdownContainer']").filter(has_text=f"{x}. ★") for x in "AB")
                pick = "A" if a.first.inner_text().count("★") >= b.first.inner_text().count("★") else "B"
            group.get_by_text(pick, exact=True).click()
            page.get_by_role("button", name="Submit this page").click()
            after = page.get_by_text(re.compile(rf"^Page {number + 1} of \d+$|every page is answered")).first
            try:
                after.wait_for()
            except PlaywrightTimeout:
                shown = page.inner_text("body")[-3000:]
                raise AssertionError(f"page {number} was not taken; the page reads:\n{shown}") from None
            self.check_blind()

    def finish(self) -> None:
        self.page.get_by_text("every page is answered").wait_for()
        expect(self.page.locator("[data-testid='stCode']").filter(has_text=CODE)).to_be_visible()

    def leave(self) -> None:
        self.context.close()


def _rank_and_extend(browser, url: str) -> None:
    """The researcher opens the judgments, ranks them on the Leaderboard, adds its next batch as pages."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(60_000)
    page.goto(f"{url}/studies")
    page.get_by_role("heading", name="Studies").wait_for(timeout=120_000)
    page.get_by_text(f"{3 * PAGES} / {3 * PAGES}").wait_for()
    page.get_by_text("Left out 1 annotator(s) who failed the attention checks (annotator-2").wait_for()
    page.get_by_role("button", name="Open the judgments in the Data page").click()
    page.get_by_role("heading", name="Data").wait_for()
    nav = page.locator("[data-testid='stSidebarNav']")
    nav.get_by_role("link", name="Leaderboard", exact=True).click()
    page.get_by_role("heading", name="Leaderboard").wait_for()
    page.get_by_text("Left out 1 annotator(s) who failed the attention checks").first.wait_for()
    page.get_by_text("Skill per system: posterior mean and 95% interval").first.wait_for(timeout=180_000)
    page.get_by_role("heading", name="Position bias").wait_for()
    page.get_by_role("heading", name="What to annotate next").wait_for()
    assert not page.locator("[data-testid='stException']").count()
    nav.get_by_role("link", name="Studies", exact=True).click()
    page.get_by_role("button", name="Add the next batch as new pages").click()
    page.get_by_text(re.compile(r"^\d+ new pages for \d+ annotators\.$")).wait_for()
    context.close()


def test_a_crowd_pairwise_study_from_the_researchers_own_items(browser, tmp_path, monkeypatch):
    url_db = f"sqlite:///{tmp_path / 'studies.sqlite'}"
    monkeypatch.setenv(study_db.DATABASE_ENV, url_db)  # the served app's database (serve copies the environment)
    with serve(tmp_path / "cache") as url:
        link = _create(browser, url, _items(tmp_path / "items.csv"))
        first, careless, third = (
            Participant(browser, link, pid, careless=pid == "6a0000000000000000000002")
            for pid in ("6a0000000000000000000001", "6a0000000000000000000002", "6a0000000000000000000003")
        )
        first.arrive()
        first.page.get_by_role("button", name="Start").click()
        first.answer(2)
        first.leave()  # gone after two pages
        for person in (careless, third):
            person.arrive()
            person.page.get_by_role("button", name="Start").click()
            person.answer(PAGES)
            person.finish()
            person.leave()
        first.arrive()  # the same id: resumes on page 3, no instructions screen
        first.page.get_by_text(f"Page 3 of {PAGES}").wait_for()
        first.answer(PAGES - 2)
        first.finish()
        first.leave()
        late = Participant(browser, link, "6a0000000000000000000004")
        late.context = browser.new_context()
        late.page = late.context.new_page()
        late.page.goto(late.link)
        late.page.get_by_text("This study has all the participants it needs").wait_for(timeout=120_000)
        late.leave()

        done = export_study(1)
        assert done.left_out == ["annotator-2"] and set(done.table["annotator"]) == {"annotator-1", "annotator-3"}
        assert len(done.table) == 2 * (PAGES - 1)  # their regular pages, one criterion each; no check
        _rank_and_extend(browser, url)

        # whoever got a new page answers it through the same study link
        links = study_links(1, url)
        tokens = {a: link.split("study_token=")[1] for a, link in zip(links.annotator, links.link, strict=True)}
        waiting = [a for a, token in tokens.items() if open_page(token, show=False).page is not None]
        assert waiting and "annotator-2" not in waiting  # who failed the checks gets no more pages
        pid = {"annotator-1": "6a0000000000000000000001", "annotator-3": "6a0000000000000000000003"}
        label = next(w for w in waiting if w in pid)
        person = Participant(browser, link, pid[label])
        person.arrive()
        person.answer(1)
        person.leave()
        pages = export_study(1).table.query("annotator == @label")["page"]
        assert pages.max() > PAGES
