"""Render user text (file names, system names, prompt ids, values quoted in errors) as text.

Not a page itself; imported as ``ui.text``. Streamlit renders Markdown (and LaTeX between
``$``) in ``st.markdown``, ``st.caption``, ``st.error`` and the like, so a name such as
``![x](http://host/x.png)`` would load an image; escaping makes it show literally. Streamlit's
Markdown also turns bare addresses (``http://host``, ``www.host``, ``name@host``) into links after
escapes are read, so a word joiner (U+2060, invisible) is put inside each.
"""

from __future__ import annotations

import re

# CommonMark's ASCII punctuation that can start or end Markdown syntax, plus "$" (LaTeX in
# Streamlit), "~" (strikethrough) and ":" (Streamlit's :material/icon: and :color[text] syntax).
_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#+\-.!|$~:=&\"'])")
# Where remark-gfm's autolink literals start: a scheme's "://", "www." and an address's "@".
_AUTOLINK = re.compile(r"(?i)(?<=[a-z])(?=://)|(?<=\bwww)(?=\.)|(?=@)")
WORD_JOINER = "\u2060"


def escape_markdown(text: object) -> str:
    """Backslash-escape every Markdown special character so ``text`` renders literally.

    Parameters
    ----------
    text : any value; ``str(text)`` is escaped.

    Returns
    -------
    str
        Safe to pass to ``st.markdown``, ``st.caption``, ``st.error``, ``st.warning``, ``st.info``.
        Newlines are kept (they are not Markdown syntax by themselves); bare addresses hold an
        invisible word joiner so they are not made links.
    """
    return _SPECIAL.sub(r"\\\1", _AUTOLINK.sub(WORD_JOINER, str(text)))
