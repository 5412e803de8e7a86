"""Diff-based revision edits: align a draft with its reference at word level, no LLM.

rapidfuzz's Indel (longest common subsequence) opcodes over whitespace tokens give the changed
runs (difflib's autojunk would mark almost everything as changed on long texts). Runs separated by at most ``gap`` equal
words within one sentence form one phrase edit; an edit that rewrites at least half a sentence,
or crosses a sentence end, is widened to whole sentences (a sentence edit). Each edit's
``original_snippet`` then gets equal neighbouring words until it is unique in the draft, so it
can be located like an LLM edit; insertions and deletions always carry one word of context.
These edits are labelled ``diff-based`` (editor and description) everywhere.
"""

from __future__ import annotations

import re

import pandas as pd

from lib.revision.schema import DIFF_EDITOR, EDIT_COLUMNS

_SENTENCE_END = re.compile(r"[.!?][\"'\u201d\u2019)\]]*$")


def revision_level(snippet: str) -> str:
    """Granularity of an edit from its original text: ``word``, ``phrase`` or ``sentence``."""
    words = snippet.split()
    if len(words) <= 1:
        return "word"
    ends = sum(bool(_SENTENCE_END.search(w)) for w in words)
    return "sentence" if ends and len(words) >= 6 else "phrase"


def _tokens(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in re.finditer(r"\S+", text)]


def _repeated(text: str, snippet: str) -> bool:
    """True when ``snippet`` occurs more than once, overlapping occurrences included."""
    return text.find(snippet) != text.rfind(snippet)


def _slice(text: str, toks: list[tuple[int, int]], i: int, k: int) -> str:
    return text[toks[i][0]:toks[k - 1][1]] if k > i else ""


def diff_edits(draft: str, reference: str, *, gap: int = 1, sentence_share: float = 0.5) -> list[dict]:
    """Word-level edits that turn ``draft`` into ``reference``.

    Parameters
    ----------
    draft, reference : str
    gap : int
        Changed runs separated by at most this many equal words (same sentence) are one edit.
    sentence_share : float
        Share of a sentence's words an edit must change to be widened to the whole sentence.

    Returns
    -------
    list of dict
        Schema fields (:class:`~lib.revision.schema.RevisionEdit`) in draft order; applying
        them all with :func:`lib.revision.locate.apply_edits` gives the reference up to whitespace.
    """
    from rapidfuzz.distance import Indel

    ta, tb = _tokens(draft), _tokens(reference)
    wa = [draft[s:e] for s, e in ta]
    wb = [reference[s:e] for s, e in tb]
    sid, n = [], 0
    for w in wa:
        sid.append(n)
        n += bool(_SENTENCE_END.search(w))
    groups: list[list[int]] = []  # changed runs [i1, i2, j1, j2] (draft, reference tokens)
    for op in Indel.opcodes(wa, wb):
        if op.tag == "equal":
            continue
        prev = groups[-1] if groups else None
        if prev and op.src_start - prev[1] <= gap and not any(
                _SENTENCE_END.search(wa[t]) for t in range(max(prev[1] - 1, 0), op.src_start)):
            prev[1], prev[3] = op.src_end, op.dest_end
        else:
            groups.append([op.src_start, op.src_end, op.dest_start, op.dest_end])

    ranges: list[list[int]] = []  # [lo, hi, is_sentence] over draft tokens
    for i1, i2, *_ in groups:
        lo, hi, sentence = i1, i2, 0
        if i2 > i1:
            in_sentence = [t for t, s in enumerate(sid) if sid[i1] <= s <= sid[i2 - 1]]
            if sid[i1] != sid[i2 - 1] or i2 - i1 >= sentence_share * len(in_sentence):
                lo, hi, sentence = in_sentence[0], in_sentence[-1] + 1, 1
        prev = ranges[-1] if ranges else None
        if prev and (lo < prev[1] or (lo == prev[1] and (lo == hi or prev[0] == prev[1]))):
            prev[1], prev[2] = max(prev[1], hi), prev[2] | sentence
        else:
            ranges.append([lo, hi, sentence])

    def to_ref(p: int, inclusive: bool) -> int:
        """Reference token index matching draft token boundary ``p`` (outside changed runs)."""
        before = [g for g in groups if g[1] <= p and (g[0] < p or (inclusive and g[0] == g[1] == p))]
        return before[-1][3] + p - before[-1][1] if before else p

    # an insertion at a shared boundary belongs to the earlier range (see the merge above)
    widened = [[lo, hi, to_ref(lo, k > 0 and ranges[k - 1][1] == lo), to_ref(hi, True), sentence]
               for k, (lo, hi, sentence) in enumerate(ranges)]
    final: list[list[int]] = []
    lo_lim = 0  # context may not reach into the previous edit (as extended) or the next one
    for k, (i1, i2, j1, j2, sentence) in enumerate(widened):
        hi_lim = widened[k + 1][0] if k + 1 < len(widened) else len(ta)
        core = [i2 - i1, j2 - j1]  # words changed on each side, before context is added
        if i1 == i2 or j1 == j2:  # pure insertion or deletion: one word of context
            if i1 > lo_lim:
                i1, j1 = i1 - 1, j1 - 1
            elif i2 < hi_lim:
                i2, j2 = i2 + 1, j2 + 1
        while _repeated(draft, _slice(draft, ta, i1, i2)) and (i1 > lo_lim or i2 < hi_lim):
            if i1 > lo_lim:
                i1, j1 = i1 - 1, j1 - 1
            if i2 < hi_lim:
                i2, j2 = i2 + 1, j2 + 1
        lo_lim = i2
        if i1 == i2 and final:  # an insertion with no free word around joins the previous edit
            final[-1][1], final[-1][3], final[-1][6] = i2, j2, final[-1][6] + core[1]
        else:
            final.append([i1, i2, j1, j2, sentence, *core])
    edits = []
    for i1, i2, j1, j2, sentence, removed, added in final:
        original, revised = _slice(draft, ta, i1, i2), _slice(reference, tb, j1, j2)
        action = "insert" if not removed else "delete" if not added else "replace"
        edits.append({
            "action_name": action,
            "revision_description": f"Diff-based: {action} towards the reference (-{removed}/+{added} words)",
            "revision_level": "sentence" if sentence else revision_level(original),
            "revision_intention": "diff-based (no intention)",
            "original_snippet": original,
            "revised_snippet": revised,
        })
    return edits


def diff_edits_table(drafts: pd.DataFrame) -> pd.DataFrame:
    """Diff-based edits of every draft towards its reference.

    Parameters
    ----------
    drafts : DataFrame
        ``text_id, system, draft, reference`` (strings).

    Returns
    -------
    DataFrame
        :data:`~lib.revision.schema.EDIT_COLUMNS`, ``editor`` = ``diff-based``.
    """
    rows = []
    for text_id, system, draft, reference in drafts[["text_id", "system", "draft", "reference"]].itertuples(index=False):
        for k, edit in enumerate(diff_edits(str(draft), str(reference))):
            rows.append({"text_id": text_id, "system": system, "editor": DIFF_EDITOR, "edit_index": k, **edit})
    return pd.DataFrame(rows, columns=list(EDIT_COLUMNS))
