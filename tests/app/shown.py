"""Page text as a reader sees it, for assertions on escaped Markdown (one home for the three page tests)."""

from __future__ import annotations

import re

from ui.text import WORD_JOINER


def unescaped(text: str) -> str:
    """Markdown as the reader sees it: backslash escapes and the word joiners of
    :func:`ui.text.escape_markdown` removed."""
    return re.sub(r"\\(.)", r"\1", text).replace(WORD_JOINER, "")
