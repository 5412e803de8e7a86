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
from bisect import bisect_right

import pandas as pd

from lib.errors import FormatError
from lib.revision.schema import DIFF_EDITOR, EDIT_COLUMNS, MAX_TEXT_CHARS

MAX_WORD_PAIRS = 1_000_000_000
"""Largest (draft words x reference words) aligned: the alignment's time and memory (bits) grow
with it; about 31,000 words on each side (any 100,000-character prose) take ~150 MB and a second."""

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
    return text[toks[i][0] : toks[k - 1][1]] if k > i else ""


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

    Raises
    ------
    FormatError
        More than :data:`MAX_WORD_PAIRS` draft-by-reference word pairs (checked before aligning).
    """
    ta, tb = _tokens(draft), _tokens(reference)
    if len(ta) * len(tb) > MAX_WORD_PAIRS:
        raise FormatError(
            f"draft ({len(ta):,} words) and reference ({len(tb):,} words) are too long to align: "
            f"their product may be at most {MAX_WORD_PAIRS:,}"
        )
    wa = [draft[s:e] for s, e in ta]
    wb = [reference[s:e] for s, e in tb]
    groups = _changed_runs(wa, wb, gap)
    ranges = _draft_ranges(groups, *_sentences(wa), sentence_share)
    edits = []
    for i1, i2, j1, j2, sentence, removed, added in _with_context(draft, ta, groups, ranges):
        original, revised = _slice(draft, ta, i1, i2), _slice(reference, tb, j1, j2)
        action = "insert" if not removed else "delete" if not added else "replace"
        edits.append(
            {
                "action_name": action,
                "revision_description": f"Diff-based: {action} towards the reference (-{removed}/+{added} words)",
                "revision_level": "sentence" if sentence else revision_level(original),
                "revision_intention": "diff-based (no intention)",
                "original_snippet": original,
                "revised_snippet": revised,
            }
        )
    return edits


def _sentences(wa: list[str]) -> tuple[list[int], list[int], list[int]]:
    """Sentence index of every draft word, and the first and last word of each sentence."""
    sid, n = [], 0
    first, last = [0], []  # first and last draft token of each sentence
    for t, w in enumerate(wa):
        sid.append(n)
        if _SENTENCE_END.search(w):
            last.append(t)
            first.append(t + 1)
            n += 1
    last.append(len(wa) - 1)
    return sid, first, last


def _changed_runs(wa: list[str], wb: list[str], gap: int) -> list[list[int]]:
    """Changed runs ``[i1, i2, j1, j2]`` (draft, reference words) of the alignment, runs at most ``gap``
    equal words apart within one sentence joined."""
    from rapidfuzz.distance import Indel

    groups: list[list[int]] = []  # changed runs [i1, i2, j1, j2] (draft, reference tokens)
    for op in Indel.opcodes(wa, wb):
        if op.tag == "equal":
            continue
        prev = groups[-1] if groups else None
        if (
            prev
            and op.src_start - prev[1] <= gap
            and not any(_SENTENCE_END.search(wa[t]) for t in range(max(prev[1] - 1, 0), op.src_start))
        ):
            prev[1], prev[3] = op.src_end, op.dest_end
        else:
            groups.append([op.src_start, op.src_end, op.dest_start, op.dest_end])
    return groups


def _draft_ranges(
    groups: list[list[int]], sid: list[int], first: list[int], last: list[int], sentence_share: float
) -> list[list[int]]:
    """The draft words ``[lo, hi, is_sentence]`` each edit rewrites: a run widened to its sentences when it
    crosses a sentence end or rewrites ``sentence_share`` of them, overlapping ranges merged."""
    ranges: list[list[int]] = []  # [lo, hi, is_sentence] over draft tokens
    for i1, i2, *_ in groups:
        lo, hi, sentence = i1, i2, 0
        if i2 > i1:
            start, end = first[sid[i1]], last[sid[i2 - 1]] + 1  # the sentences the run touches
            if sid[i1] != sid[i2 - 1] or i2 - i1 >= sentence_share * (end - start):
                lo, hi, sentence = start, end, 1
        prev = ranges[-1] if ranges else None
        if prev and (lo < prev[1] or (lo == prev[1] and (lo == hi or prev[0] == prev[1]))):
            prev[1], prev[2] = max(prev[1], hi), prev[2] | sentence
        else:
            ranges.append([lo, hi, sentence])
    return ranges


def _with_context(
    draft: str, ta: list[tuple[int, int]], groups: list[list[int]], ranges: list[list[int]]
) -> list[list[int]]:
    """Each range with its reference words and the context that makes its snippet unique in the draft:
    ``[i1, i2, j1, j2, is_sentence, words removed, words added]``."""
    ends = [g[1] for g in groups]  # non-decreasing: a bisection finds the last run ending by p

    def to_ref(p: int, inclusive: bool) -> int:
        """Reference token index matching draft token boundary ``p`` (outside changed runs)."""
        k = bisect_right(ends, p) - 1
        if k >= 0 and not inclusive and groups[k][0] == p:  # a pure insertion at p comes after p
            k -= 1
        return groups[k][3] + p - groups[k][1] if k >= 0 else p

    # an insertion at a shared boundary belongs to the earlier range (see the merge in _draft_ranges)
    widened = [
        [lo, hi, to_ref(lo, k > 0 and ranges[k - 1][1] == lo), to_ref(hi, True), sentence]
        for k, (lo, hi, sentence) in enumerate(ranges)
    ]
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
    return final


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

    Raises
    ------
    FormatError
        A draft or reference longer than :data:`~lib.revision.schema.MAX_TEXT_CHARS`, or a pair
        too long to align (:func:`diff_edits`), naming the draft.
    """
    rows = []
    for text_id, system, draft, reference in (
        drafts[["text_id", "system", "draft", "reference"]].astype(str).itertuples(index=False)
    ):
        where = f"text_id '{text_id}', system '{system}'"
        for what, text in (("draft", draft), ("reference", reference)):
            if len(text) > MAX_TEXT_CHARS:
                raise FormatError(
                    f"{where}: the {what} is {len(text):,} characters long; at most {MAX_TEXT_CHARS:,} are accepted"
                )
        try:
            found = diff_edits(draft, reference)
        except FormatError as err:
            raise FormatError(f"{where}: {err.problem}") from None
        for k, edit in enumerate(found):
            rows.append({"text_id": text_id, "system": system, "editor": DIFF_EDITOR, "edit_index": k, **edit})
    return pd.DataFrame(rows, columns=list(EDIT_COLUMNS))
