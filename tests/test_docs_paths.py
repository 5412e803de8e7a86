"""Every path of this repository that README.md and docs/*.md name exists (issue 32, item 5: stale doc
paths). A path is a word starting with one of the top folders below (``lib/...``, ``data/...``); a ``*``
in it is a pattern that must match at least one file."""

from __future__ import annotations

import re

import pytest

from lib.paths import ROOT
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
    text = "See `lib/cache.py`, data/README.md. Run /usr/lib/postgresql/16/bin/initdb; tests/hostile/test_study_*.py"
    assert named_paths(text) == ["data/README.md", "lib/cache.py", "tests/hostile/test_study_*.py"]


@pytest.mark.parametrize("doc", DOCS, ids=lambda path: path.name)
def test_every_named_path_exists(doc):
    missing = [
        path for path in named_paths(doc.read_text(encoding="utf-8")) if path not in FORMER and not any(ROOT.glob(path))
    ]
    assert not missing, f"{doc.relative_to(ROOT)} names paths that do not exist: {missing}"
