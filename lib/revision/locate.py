"""Find each edit's ``original_snippet`` in its draft, apply the edits, render them as escaped HTML.

Location tries, in order: the exact snippet (searching after the previous edit first, so repeated
phrases are taken in reading order), the snippet with whitespace, case and typographic quotes and
dashes normalised, then a fuzzy match (rapidfuzz ``partial_ratio_alignment`` >= a threshold,
widened to whole words). Snippets found by none are *unlocated*: counted and listed, never dropped.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from lib.errors import InputError

FUZZY_THRESHOLD = 85.0
"""Least rapidfuzz partial-ratio score (0-100) for a fuzzy location."""

_FOLD = str.maketrans(
    {"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2013": "-", "\u2014": "-", "\u00a0": " "}
)


@dataclass(frozen=True)
class Location:
    """Character span ``draft[start:end]`` of a snippet; ``match`` is exact, normalized or fuzzy."""

    start: int
    end: int
    match: str
    score: float


def _normalize(text: str) -> tuple[str, list[int]]:
    """Case-folded text with runs of whitespace collapsed, and each output char's source index."""
    out: list[str] = []
    index: list[int] = []
    space = True  # drops leading whitespace
    for i, ch in enumerate(text.translate(_FOLD)):
        if ch.isspace():
            if not space:
                out.append(" ")
                index.append(i)
            space = True
            continue
        space = False
        for c in ch.lower():
            out.append(c)
            index.append(i)
    if out and out[-1] == " ":
        out.pop()
        index.pop()
    return "".join(out), index


def locate(draft: str, snippet: str, *, after: int = 0, fuzzy_threshold: float = FUZZY_THRESHOLD) -> Location | None:
    """Locate ``snippet`` in ``draft``: exact, then normalised, then fuzzy.

    Parameters
    ----------
    draft, snippet : str
        The draft text and an edit's ``original_snippet``.
    after : int
        Character offset where the search starts first (end of the previous edit); the whole
        draft is searched when nothing is found after it.
    fuzzy_threshold : float
        Least partial-ratio score (0-100) for a fuzzy match.

    Returns
    -------
    Location or None
        None when the snippet is empty or cannot be found.
    """
    if not snippet.strip():
        return None
    for start in (draft.find(snippet, after), draft.find(snippet)):
        if start >= 0:
            return Location(start, start + len(snippet), "exact", 100.0)
    norm_draft, index = _normalize(draft)
    norm_snip, _ = _normalize(snippet)
    norm_after = next((k for k, i in enumerate(index) if i >= after), len(index))
    for s in (norm_draft.find(norm_snip, norm_after), norm_draft.find(norm_snip)):
        if s >= 0:
            return Location(index[s], index[s + len(norm_snip) - 1] + 1, "normalized", 100.0)
    if len(norm_snip) > len(norm_draft):
        return None
    from rapidfuzz import fuzz

    hit = fuzz.partial_ratio_alignment(norm_snip, norm_draft, score_cutoff=fuzzy_threshold)
    if hit is None:
        return None
    s, e = hit.dest_start, hit.dest_end
    while s > 0 and norm_draft[s - 1] != " ":  # widen to whole words
        s -= 1
    while e < len(norm_draft) and norm_draft[e] != " ":
        e += 1
    return Location(index[s], index[e - 1] + 1, "fuzzy", float(hit.score))


def locate_all(
    draft: str, snippets: Sequence[str], *, fuzzy_threshold: float = FUZZY_THRESHOLD
) -> list[Location | None]:
    """Locate every snippet of one draft in order (each search starts after the previous hit)."""
    found: list[Location | None] = []
    after = 0
    for snippet in snippets:
        loc = locate(draft, snippet, after=after, fuzzy_threshold=fuzzy_threshold)
        found.append(loc)
        if loc is not None:
            after = loc.end
    return found


def _overlap(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


@dataclass(frozen=True)
class Applied:
    """Result of :func:`apply_edits`: the revised text, which edits were applied, and where
    each applied edit's ``revised_snippet`` sits in the revised text."""

    text: str
    applied: list[bool]
    inserted: list[tuple[int, int] | None]


def apply_edits(draft: str, spans: Sequence[tuple[int, int, str] | None]) -> Applied:
    """Apply located edits right to left, so earlier offsets stay valid.

    Parameters
    ----------
    draft : str
    spans : sequence of (start, end, revised_snippet) or None
        One entry per edit; None for an unlocated edit.

    Returns
    -------
    Applied
        An edit overlapping an edit earlier in the sequence is not applied (``applied`` False)
        rather than mangling both; unlocated edits are not applied either.
    """
    located = {k: span for k, span in enumerate(spans) if span is not None}
    accepted: list[int] = []
    for k, span in located.items():
        if not any(_overlap(span[:2], located[j][:2]) for j in accepted):
            accepted.append(k)
    text = draft
    inserted: dict[int, tuple[int, int]] = {}
    for k in sorted(accepted, key=lambda k: (located[k][0], located[k][1], k), reverse=True):
        start, end, revised = located[k]
        text = text[:start] + revised + text[end:]
        shift = len(revised) - (end - start)
        inserted = {j: (a + shift, b + shift) for j, (a, b) in inserted.items()}
        inserted[k] = (start, start + len(revised))
    return Applied(text, [k in inserted for k in range(len(spans))], [inserted.get(k) for k in range(len(spans))])


def locate_edits(
    edits: pd.DataFrame, drafts: pd.DataFrame, *, fuzzy_threshold: float = FUZZY_THRESHOLD
) -> pd.DataFrame:
    """Add location columns to a tidy edits table.

    Parameters
    ----------
    edits : DataFrame
        :data:`lib.revision.schema.EDIT_COLUMNS`, ordered by ``edit_index`` within a draft.
    drafts : DataFrame
        ``text_id, system, draft``: one row per draft.

    Returns
    -------
    DataFrame
        ``edits`` plus ``start, end`` (Int64 character offsets, NA when unlocated), ``match``
        (exact, normalized, fuzzy, unlocated), ``score`` (float 0-100), ``located`` (bool),
        ``overlaps`` (bool: shares characters with another located edit of the same editor)
        and ``applied`` (bool: used by :func:`apply_edits`).

    Raises
    ------
    InputError
        If an edit names a draft (``text_id``, ``system``) that is not in ``drafts``.
    """
    text = {(str(t), str(s)): d for t, s, d in drafts[["text_id", "system", "draft"]].itertuples(index=False)}
    out = edits.reset_index(drop=True).copy()
    keys = list(zip(out["text_id"].astype(str), out["system"].astype(str), strict=True))
    missing = [i + 1 for i, k in enumerate(keys) if k not in text]
    if missing:
        raise InputError(
            "edit for a draft (text_id, system) that is not among the drafts", rows=missing, column="text_id"
        )
    start = pd.array([pd.NA] * len(out), dtype="Int64")
    end = start.copy()
    match = ["unlocated"] * len(out)
    score = [0.0] * len(out)
    overlaps = [False] * len(out)
    applied = [False] * len(out)
    for _, group in out.groupby(["text_id", "system", "editor"], sort=False):
        rows = group.sort_values("edit_index").index.to_list()
        draft = text[keys[rows[0]]]
        locs = locate_all(draft, out.loc[rows, "original_snippet"].tolist(), fuzzy_threshold=fuzzy_threshold)
        spans = [
            None if loc is None else (loc.start, loc.end, out.at[r, "revised_snippet"])
            for r, loc in zip(rows, locs, strict=True)
        ]
        result = apply_edits(draft, spans)
        for k, (r, loc) in enumerate(zip(rows, locs, strict=True)):
            if loc is None:
                continue
            start[r], end[r], match[r], score[r] = loc.start, loc.end, loc.match, loc.score
            applied[r] = result.applied[k]
            overlaps[r] = any(
                j != k and other is not None and _overlap((loc.start, loc.end), other[:2])
                for j, other in enumerate(spans)
            )
    out["start"], out["end"], out["match"], out["score"] = start, end, match, score
    out["located"] = out["match"] != "unlocated"
    out["overlaps"], out["applied"] = overlaps, applied
    return out


def revised_text(draft: str, located: pd.DataFrame) -> str:
    """The draft with the located edits of one editor applied (see :func:`apply_edits`)."""
    return apply_edits(draft, _spans(located)).text


def _spans(located: pd.DataFrame) -> list[tuple[int, int, str] | None]:
    return [
        None if not row.located else (int(row.start), int(row.end), row.revised_snippet)
        for row in located.itertuples(index=False)
    ]


def _tooltip(rows: Sequence) -> str:
    return "\n".join(
        f"#{r.edit_index + 1} {r.action_name} · {r.revision_level} · {r.revision_intention}: {r.revision_description}"
        for r in rows
    )


_MARK = "background:{bg};border-bottom:2px solid {line};padding:0 1px;"
_STYLE = {
    "edit": _MARK.format(bg="#fff1b8", line="#d4a017"),
    "overlap": _MARK.format(bg="#ffd1a8", line="#c05000"),
    "selected": _MARK.format(bg="#b8d8ff", line="#1f5fbf"),
    "ins": "background:#d4f7d4;text-decoration:none;border-bottom:2px solid #2e8b57;",
}


def _mark(text: str, rows: Sequence, selected: int | None, tag: str = "mark") -> str:
    kind = (
        "selected"
        if selected is not None and any(r.edit_index == selected for r in rows)
        else ("ins" if tag == "ins" else "overlap" if len(rows) > 1 else "edit")
    )
    ids = " ".join(str(r.edit_index + 1) for r in rows)
    return (
        f'<{tag} class="rev-{kind}" data-edits="{ids}" style="{_STYLE[kind]}" '
        f'title="{html.escape(_tooltip(rows), quote=True)}">{html.escape(text)}</{tag}>'
    )


def render_side_by_side(draft: str, located: pd.DataFrame, selected: int | None = None) -> tuple[str, str]:
    """HTML of the draft with located edits highlighted and of the revised text with insertions marked.

    Every piece of draft and edit text goes through :func:`html.escape`; hovering a highlight shows
    the edit's number, action, level, intention and description (``title``). Overlapping edits
    are shaded darker and list all their edits; zero-width (insertion) edits show a caret.

    Parameters
    ----------
    draft : str
    located : DataFrame
        One editor's edits of this draft, as returned by :func:`locate_edits`.
    selected : int, optional
        ``edit_index`` of an edit to emphasise.

    Returns
    -------
    (str, str)
        HTML fragments (no scripts) for the draft and for the revised text.
    """
    rows = [r for r in located.sort_values("edit_index").itertuples(index=False) if r.located]
    spans = [(int(r.start), int(r.end)) for r in rows]
    cuts = sorted({0, len(draft), *(p for s in spans for p in s)})
    left: list[str] = []
    for a, b in zip(cuts, [*cuts[1:], None], strict=True):
        for r, (s, e) in zip(rows, spans, strict=True):
            if s == e == a:
                left.append(_mark("‸", [r], selected))
        if b is None:
            break
        cover = [r for r, (s, e) in zip(rows, spans, strict=True) if s <= a and b <= e]
        piece = draft[a:b]
        left.append(_mark(piece, cover, selected) if cover else html.escape(piece))
    ordered = located.sort_values("edit_index")
    applied = apply_edits(draft, _spans(ordered))
    inserts = sorted(
        ((span, r) for span, r in zip(applied.inserted, ordered.itertuples(index=False), strict=True) if span),
        key=lambda pair: pair[0],
    )
    right: list[str] = []
    pos = 0
    for (s, e), r in inserts:
        right.append(html.escape(applied.text[pos:s]))
        right.append(_mark(applied.text[s:e] or "⌫", [r], selected, tag="ins"))
        pos = e
    right.append(html.escape(applied.text[pos:]))
    wrap = '<div class="rev-text" style="white-space:pre-wrap;line-height:1.7">{}</div>'
    return wrap.format("".join(left)), wrap.format("".join(right))


def render_edit_list(located: pd.DataFrame, selected: int | None = None) -> str:
    """HTML list of one editor's edits (number, action, level, intention, description, match), escaped.

    Hover titles may be dropped by the browser's sanitiser when they contain markup; this list
    always shows every edit's text, unlocated ones included.
    """
    items = []
    for r in located.sort_values("edit_index").itertuples(index=False):
        where = r.match if r.located else "unlocated"
        style = ' style="background:#b8d8ff"' if selected is not None and r.edit_index == selected else ""
        items.append(
            f'<li value="{int(r.edit_index) + 1}"{style}><b>{html.escape(str(r.action_name))}</b> · '
            f"{html.escape(str(r.revision_level))} · <i>{html.escape(str(r.revision_intention))}</i> "
            f'({where}): <span class="rev-description">{html.escape(str(r.revision_description))}</span></li>'
        )
    return f'<ol class="rev-edits">{"".join(items)}</ol>'
