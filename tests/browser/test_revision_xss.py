"""Real browser: edit text with <script> and <img onerror> is shown as text on the Revision edits page."""

from __future__ import annotations

import json

import pytest

from ui.text import WORD_JOINER

pytestmark = pytest.mark.browser

EDIT = {
    "text_id": "lamp-01",
    "system": "gpt4o",
    "action_name": "rephrase",
    "revision_description": "<script>window.__xss_script = 1</script>",
    "revision_level": "phrase",
    "revision_intention": "Cliche",
    "original_snippet": "Maria's evenings with the orchestra",
    "revised_snippet": '<img src=x onerror="window.__xss_img = 1">',
}


def shown(locator) -> str:
    """The element's text as read: without the invisible word joiners that keep addresses from becoming links."""
    return locator.inner_text().replace(WORD_JOINER, "")


def test_uploaded_edit_markup_is_rendered_as_text(page, app_url):
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(f"{app_url}/revision")
    page.get_by_text("Uploaded edits").click()
    page.locator('input[type="file"]').set_input_files(
        files=[{"name": "edits.jsonl", "mimeType": "application/json", "buffer": json.dumps(EDIT).encode()}]
    )
    page.get_by_role("tab", name="Side by side").click()
    inserted = page.locator(".rev-text ins").filter(has_text="onerror")
    inserted.first.wait_for()
    assert inserted.first.inner_text() == EDIT["revised_snippet"]
    marked = page.locator(".rev-text mark").first
    assert marked.inner_text() == EDIT["original_snippet"]
    # the sanitiser may drop a title holding markup; the edit list shows the description as text
    assert marked.get_attribute("title") in (None, f"#1 rephrase · phrase · Cliche: {EDIT['revision_description']}")
    assert page.locator(".rev-edits .rev-description").first.inner_text() == EDIT["revision_description"]
    assert page.locator(".rev-text img, .rev-text script").count() == 0
    page.wait_for_timeout(500)  # give an injected onerror handler time to fire
    assert page.evaluate("[window.__xss_script, window.__xss_img]") == [None, None]
    assert dialogs == []


IMAGE = "![x](http://127.0.0.1:9/x.png)"


def test_markdown_in_system_names_and_file_names_is_not_rendered(page, app_url):
    page.goto(f"{app_url}/revision")
    page.get_by_text("Upload a drafts CSV").click()
    csv = f"text_id,system,draft,reference\n1,{IMAGE},a b c,a c\n2,B,d e f,d f\n1,B,g h,g\n"
    # the drafts' own uploader: once drafts are in, the edits' uploader may show too until Diff-based is drawn
    drafts_input = (
        page.locator('[data-testid="stFileUploader"]').filter(has_text="Drafts CSV").locator('input[type="file"]')
    )
    drafts_input.set_input_files(files=[{"name": "drafts.csv", "mimeType": "text/csv", "buffer": csv.encode()}])
    page.get_by_text("Diff-based (towards a reference)").click()
    metric = page.locator('[data-testid="stMetricLabel"]').first
    metric.wait_for()
    assert IMAGE in shown(metric)  # shown as the text it is
    bad = "text_id,system,draft\n1,A,x\n1,A,y\n"
    drafts_input.set_input_files(files=[{"name": f"{IMAGE}.csv", "mimeType": "text/csv", "buffer": bad.encode()}])
    error = page.locator('[data-testid="stAlertContentError"]').first
    error.wait_for()
    assert IMAGE in shown(error)
    assert page.locator('img[src*="127.0.0.1:9"]').count() == 0
