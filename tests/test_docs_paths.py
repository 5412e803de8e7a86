"""Every path of this repository that README.md and docs/*.md name exists (issue 32, item 5: stale doc
paths). A path is a word starting with one of the top folders below (``lib/...``, ``data/...``); a ``*``
in it is a pattern that must match at least one file. Every relative Markdown link leads to a file and, with
``#``, to one of its headings (the README is a landing page whose links carry the reader into docs/)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from lib.io.paths import ROOT
from lib.study.db import LEGACY_PATH

FOLDERS = ("lib", "pages", "tests", "bench", "docs", "data")
PATH = re.compile(rf"(?<![\w/.~-])(?:{'|'.join(FOLDERS)})/[\w./*-]*")
"""Not preceded by a path character: ``/usr/lib/postgresql`` is no path of this repository."""

FORMER = {str(LEGACY_PATH.relative_to(ROOT)), str(LEGACY_PATH.parent.relative_to(ROOT))}
"""The study database's place in an earlier release: the docs name it as the file that is copied."""

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def named_paths(text: str) -> list[str]:
    """The repository paths ``text`` names, without a sentence's closing full stop or a folder's slash."""
    return sorted({match.rstrip(".").rstrip("/") for match in PATH.findall(text)})


def test_paths_are_found_in_prose_and_code():
    text = "See `lib/io/cache.py`, data/README.md. Run /usr/lib/postgresql/16/bin/initdb; tests/hostile/test_study_*.py"
    assert named_paths(text) == ["data/README.md", "lib/io/cache.py", "tests/hostile/test_study_*.py"]


@pytest.mark.parametrize("doc", DOCS, ids=lambda path: path.name)
def test_every_named_path_exists(doc):
    missing = [
        path for path in named_paths(doc.read_text(encoding="utf-8")) if path not in FORMER and not any(ROOT.glob(path))
    ]
    assert not missing, f"{doc.relative_to(ROOT)} names paths that do not exist: {missing}"


LINK = re.compile(r"\]\(([^)\s]+)\)")
"""The target of a Markdown link, ``[text](target)``."""


def anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped (hyphens kept), spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def broken_links(doc: Path, text: str) -> list[str]:
    """The relative links of ``text`` (a file beside ``doc``, optionally ``#anchor``) that lead nowhere."""
    broken = []
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target):  # http:, https:, mailto:
            continue
        path, _, fragment = target.partition("#")
        file = (doc.parent / path).resolve() if path else doc
        if not file.exists():
            broken.append(target)
        elif fragment and file.suffix == ".md":
            headings = re.findall(r"^#+ (.+)$", file.read_text(encoding="utf-8"), flags=re.MULTILINE)
            if fragment not in {anchor(h) for h in headings}:
                broken.append(target)
    return broken


def test_links_are_checked_by_file_and_heading(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "cli.md").write_text("# Command line\n\n## `rank --judge`: judges\n", encoding="utf-8")
    doc = tmp_path / "README.md"
    text = (
        "[a](docs/cli.md) [b](docs/cli.md#rank---judge-judges) [c](docs/cli.md#fit) [d](cli.md) "
        "[e](https://example.org/x) [f](#command-line)"
    )
    assert broken_links(doc, text) == ["docs/cli.md#fit", "cli.md", "#command-line"]


@pytest.mark.parametrize("doc", DOCS, ids=lambda path: path.name)
def test_every_link_leads_somewhere(doc):
    """The README is a landing page whose links carry the reader to docs/: each relative link (docs/*.md
    link to one another from docs/) names an existing file and, with ``#``, one of its headings."""
    broken = broken_links(doc, doc.read_text(encoding="utf-8"))
    assert not broken, f"{doc.relative_to(ROOT)} links to what does not exist: {broken}"
