"""AppTest of the Revision edits page's agreement tab (issue 16, item 16): after another source of edits
is chosen, the selector and the table show the same editor."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from lib.revision.lamp import WRITERS
from lib.revision.schema import DIFF_EDITOR

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "revision.py")
DIFF = "Diff-based (towards a reference)"


@pytest.fixture
def at(monkeypatch, tmp_path):
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("EVAL_CACHE_DIR", str(tmp_path))
    return AppTest.from_file(PAGE, default_timeout=120).run()


def agreement(at: AppTest):
    return next(d.value for d in at.dataframe if "f1" in d.value.columns)


def test_a_new_source_of_edits_selects_its_own_editor_in_selector_and_table(at):
    at.selectbox(key="revision_candidate").set_value(WRITERS[1]).run()
    assert "category_agreement" in agreement(at).columns  # a writer's edits carry categories
    at.radio(key="revision_source").set_value(DIFF).run()
    candidate = at.selectbox(key="revision_candidate")
    # The value is sent to the browser (set_value), and the table is the diff-based edits' (no categories).
    assert candidate.value == DIFF_EDITOR and candidate.proto.set_value
    assert not at.exception and "category_agreement" not in agreement(at).columns
    at.selectbox(key="revision_candidate").set_value(WRITERS[2]).run()  # a choice within one source stays
    at.selectbox(key="revision_model_a").set_value(at.selectbox(key="revision_model_a").options[1]).run()
    assert at.selectbox(key="revision_candidate").value == WRITERS[2]


def test_the_page_and_the_docs_count_the_lamp_paragraphs_alike(at):
    from lib.io.paths import ROOT

    caption = next(c.value for c in at.caption if "distinct LLM paragraphs" in c.value)
    assert caption.startswith("54 distinct LLM paragraphs from 3 models") and "revised 50/50/50 of them" in caption
    assert "(47 by all three" in caption
    docs = " ".join((ROOT / "docs" / "revision.md").read_text().split())
    assert "Each writer revised 50 paragraphs" in docs and "54 distinct paragraphs, 47 of them" in docs
