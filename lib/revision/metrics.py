"""Revision Distance and the tables around it (Ma et al. 2024, Sec. 3, Tables 2 and 3).

The Revision Distance of a draft is the number of revision edits proposed for it (lower is
better); a model's score is the mean over its drafts. Edits that cannot be located in the draft
still count (they were proposed) and are reported as ``unlocated``.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import TypedDict

import numpy as np
import pandas as pd

from lib.errors import SettingsError
from lib.revision.locate import revised_text

RUN_KEYS = ["text_id", "system", "editor"]


def token_edit_distance(a: str, b: str) -> int:
    """Word-level Levenshtein distance (insertions, deletions, substitutions of whitespace tokens)."""
    from rapidfuzz.distance import Levenshtein

    return int(Levenshtein.distance(a.split(), b.split()))


def revision_distance(located: pd.DataFrame, evaluated: pd.DataFrame) -> pd.DataFrame:
    """Revision Distance of every evaluated draft.

    Parameters
    ----------
    located : DataFrame
        Edits with location columns (:func:`lib.revision.locate.locate_edits`).
    evaluated : DataFrame
        ``text_id, system, editor, draft``: one row per draft an editor revised (a draft with no
        edits scores 0; drafts an editor never saw must not be listed).

    Returns
    -------
    DataFrame
        ``text_id, system, editor, revision_distance, unlocated`` (int64 edit counts),
        ``token_edit_distance`` (int64, words between the draft and the draft with all
        located edits applied) and ``draft_words`` (int64).
    """
    groups = {key: g for key, g in located.groupby(RUN_KEYS, sort=False)}
    rows = []
    for text_id, system, editor, draft in evaluated[[*RUN_KEYS, "draft"]].itertuples(index=False):
        g = groups.get((text_id, system, editor))
        if g is None:
            rows.append((text_id, system, editor, 0, 0, 0, len(draft.split())))
            continue
        revised = revised_text(draft, g.sort_values("edit_index"))
        rows.append(
            (
                text_id,
                system,
                editor,
                len(g),
                int((~g["located"]).sum()),
                token_edit_distance(draft, revised),
                len(draft.split()),
            )
        )
    return pd.DataFrame(
        rows, columns=[*RUN_KEYS, "revision_distance", "unlocated", "token_edit_distance", "draft_words"]
    )


def summarize(
    per_draft: pd.DataFrame, by: Sequence[str], value: str = "revision_distance", level: float = 0.95
) -> pd.DataFrame:
    """Mean of ``value`` per group with a Student-t confidence interval over drafts.

    Returns
    -------
    DataFrame
        ``*by, n, mean, sd, ci_low, ci_high`` (interval NaN when a group has one draft).
    """
    from scipy import stats

    g = per_draft.groupby(list(by), sort=True)[value]
    out = g.agg(n="count", mean="mean", sd="std").reset_index()
    half = stats.t.ppf(0.5 + level / 2, out["n"] - 1) * out["sd"] / np.sqrt(out["n"])
    out["ci_low"], out["ci_high"] = out["mean"] - half, out["mean"] + half
    return out


def per_model(per_draft: pd.DataFrame) -> pd.DataFrame:
    """Revision Distance per model (:func:`summarize` by ``system``) with the model's mean token-level edit
    distance beside it (the words changed by applying the located edits, :func:`token_edit_distance`).

    Parameters
    ----------
    per_draft : DataFrame
        One row per (draft, editor): ``system, revision_distance, token_edit_distance``.

    Returns
    -------
    DataFrame
        ``system, n, mean, sd, ci_low, ci_high, token_edit_distance``, one row per model, sorted.
    """
    by_model = summarize(per_draft, ["system"])
    token = summarize(per_draft, ["system"], value="token_edit_distance")[["system", "mean"]]
    return by_model.merge(token.rename(columns={"mean": "token_edit_distance"}), on="system")


def relative_change(a: float, b: float, lower_is_better: bool = True) -> float:
    """Relative change from model A to model B in percent, as in Ma et al.'s Table 2.

    The difference is taken relative to B's score and signed so that a positive value is an
    improvement: ``(a - b) / b * 100`` for Revision Distance (lower is better), e.g.
    3.20 -> 2.79 gives +14.7 %; ``(b - a) / b * 100`` for higher-is-better metrics
    (ROUGE-2 19.52 -> 22.06 gives +11.5 %).
    """
    diff = (a - b) if lower_is_better else (b - a)
    return float(diff / b * 100.0) if b else float("nan")


def _change_of_means(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
    """:func:`relative_change` of the means along ``axis`` (vectorised for ``scipy.stats.bootstrap``)."""
    mb = b.mean(axis)
    return (a.mean(axis) - mb) / mb * 100.0


class ModelComparison(TypedDict):
    """A Table 2 row of :func:`compare_models`: the means in edits per draft, ``change_pct`` (B to A,
    percent) with its bootstrap interval ``ci_low`` to ``ci_high`` (NaN without one), the draft counts."""

    model_a: str
    model_b: str
    mean_a: float
    mean_b: float
    change_pct: float
    ci_low: float
    ci_high: float
    n_a: int
    n_b: int


def compare_models(
    per_draft: pd.DataFrame, model_a: str, model_b: str, *, n_boot: int = 2000, level: float = 0.95, seed: int = 0
) -> ModelComparison:
    """Table 2 row for Revision Distance: both means and the relative change with a bootstrap interval.

    Drafts are resampled with replacement within each model: the percentile interval of
    ``scipy.stats.bootstrap`` (``n_boot`` resamples, ``numpy.random.default_rng(seed)``). A model
    with fewer than two drafts has no interval (NaN); resamples in which B's mean is 0 have no
    relative change and are left out.

    Raises
    ------
    SettingsError
        If either model has no drafts in ``per_draft``.
    """
    from scipy import stats

    values = {}
    for m in (model_a, model_b):
        v = per_draft.loc[per_draft["system"] == m, "revision_distance"].to_numpy(float)
        if v.size == 0:
            raise SettingsError(f"model '{m}' has no evaluated drafts")
        values[m] = v
    a, b = values[model_a], values[model_b]
    low = high = np.nan
    if min(a.size, b.size) >= 2:
        with np.errstate(divide="ignore", invalid="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", stats.DegenerateDataWarning)  # non-finite resamples: handled below
            res = stats.bootstrap(
                (a, b),
                _change_of_means,
                n_resamples=n_boot,
                confidence_level=level,
                method="percentile",
                rng=np.random.default_rng(seed),
                vectorized=True,
            )
        low, high = res.confidence_interval
        if not np.isfinite(res.bootstrap_distribution).all():
            boot = res.bootstrap_distribution[np.isfinite(res.bootstrap_distribution)]
            tail = (1 - level) / 2 * 100
            low, high = np.percentile(boot, [tail, 100 - tail]) if boot.size else (np.nan, np.nan)
    return {
        "model_a": model_a,
        "model_b": model_b,
        "mean_a": float(a.mean()),
        "mean_b": float(b.mean()),
        "change_pct": relative_change(float(a.mean()), float(b.mean())),
        "ci_low": float(low),
        "ci_high": float(high),
        "n_a": int(a.size),
        "n_b": int(b.size),
    }


def category_table(
    located: pd.DataFrame, per_draft: pd.DataFrame, by: str = "system", category: str = "revision_intention"
) -> pd.DataFrame:
    """Mean number of edits per draft in each category, per group, as in Ma et al.'s Table 3.

    Parameters
    ----------
    located : DataFrame
        Edits (any edit table with ``text_id, system, editor`` and ``category``).
    per_draft : DataFrame
        :func:`revision_distance` output: fixes the drafts per group (zero-edit drafts count).
    by : str
        Grouping column (``system`` for models, ``editor`` for writers/engines).

    Returns
    -------
    DataFrame
        Index ``by``; one column per category and ``Total`` (= mean Revision Distance).
    """
    keyed = located.merge(per_draft[RUN_KEYS], on=RUN_KEYS)
    counts = keyed.groupby([by, category]).size().unstack(fill_value=0)
    drafts = per_draft.groupby(by).size()
    table = counts.reindex(drafts.index, fill_value=0).div(drafts, axis=0)
    table = table[table.sum().sort_values(ascending=False).index]
    table["Total"] = table.sum(axis=1)
    table.columns.name = None
    return table


def _spans(g: pd.DataFrame) -> list[tuple[int, int, str]]:
    # zero-width (insertion) spans cover one character so that they can overlap
    return [
        (int(s), max(int(e), int(s) + 1), str(c).casefold())
        for s, e, c in g.loc[g["located"], ["start", "end", "revision_intention"]].itertuples(index=False)
    ]


def span_agreement(
    located: pd.DataFrame, evaluated: pd.DataFrame, candidate: str, references: Sequence[str]
) -> pd.DataFrame:
    """Span-overlap precision, recall, F1 and category agreement of one editor against others.

    A candidate edit is correct when its located span overlaps a reference edit's span
    (precision); a reference edit is found when a candidate span overlaps it (recall). For each
    matched candidate edit, the reference edit with the largest character overlap gives the
    category comparison (``revision_intention``, case-insensitive). Counts are pooled over the
    drafts both editors revised, so a draft one of them left unedited still counts (its edits
    by the other are all misses); unlocated edits are left out (they have no span).

    Parameters
    ----------
    located : DataFrame
        :func:`lib.revision.locate.locate_edits` output holding both editors' edits.
    evaluated : DataFrame
        ``text_id, system, editor``: every draft each editor revised, with or without edits.
    candidate : str
        ``editor`` of the edits under test (an LLM, the diff-based engine, or a writer).
    references : sequence of str
        ``editor`` values of the human references (e.g. LAMP writers).

    Returns
    -------
    DataFrame
        ``reference, system, drafts, candidate_edits, reference_edits, precision, recall, f1,
        matched, category_agreement`` (floats in 0-1, NaN when undefined), one row per
        reference and model plus an ``all`` row per reference.
    """
    spans = {key: _spans(g) for key, g in located.groupby(RUN_KEYS)}
    revised = set(evaluated[RUN_KEYS].itertuples(index=False, name=None))
    rows = []
    for ref in references:
        if ref == candidate:
            continue
        counts: dict[str, np.ndarray] = {}
        for text_id, system, editor in sorted(revised):
            if editor != ref or (text_id, system, candidate) not in revised:
                continue
            c, r = spans.get((text_id, system, candidate), []), spans.get((text_id, system, ref), [])
            hit_c = [[(min(ce, re) - max(cs, rs), rc) for rs, re, rc in r if cs < re and rs < ce] for cs, ce, _ in c]
            found_r = sum(any(cs < re and rs < ce for cs, ce, _ in c) for rs, re, _ in r)
            matched = [(max(h)[1] == cc) for h, (_, _, cc) in zip(hit_c, c, strict=True) if h]
            row = np.array([1, len(c), len(r), len(matched), found_r, sum(matched)])
            for key in (system, "all"):
                counts[key] = counts.get(key, 0) + row
        for system in sorted(counts, key=lambda k: (k == "all", k)):
            n, nc, nr, mc, fr, agree = counts[system]
            p = mc / nc if nc else np.nan
            rec = fr / nr if nr else np.nan
            f1 = 2 * p * rec / (p + rec) if p + rec > 0 else 0.0 if p == rec == 0 else np.nan
            rows.append((ref, system, n, nc, nr, p, rec, f1, mc, agree / mc if mc else np.nan))
    return pd.DataFrame(
        rows,
        columns=[
            "reference",
            "system",
            "drafts",
            "candidate_edits",
            "reference_edits",
            "precision",
            "recall",
            "f1",
            "matched",
            "category_agreement",
        ],
    )


def postedit_reproduction(located: pd.DataFrame, evaluated: pd.DataFrame) -> pd.DataFrame:
    """How closely the draft with all an editor's edits applied reproduces that editor's own text.

    Parameters
    ----------
    evaluated : DataFrame
        ``text_id, system, editor, draft, postedit``.

    Returns
    -------
    DataFrame
        ``text_id, system, editor, similarity`` (rapidfuzz normalised Indel similarity 0-1 of
        the whitespace-normalised texts), ``exact`` (bool) and ``baseline`` (similarity of the
        unedited draft to the postedit).
    """
    from rapidfuzz import fuzz

    groups = {key: g for key, g in located.groupby(RUN_KEYS, sort=False)}
    rows = []
    for text_id, system, editor, draft, post in evaluated[[*RUN_KEYS, "draft", "postedit"]].itertuples(index=False):
        g = groups.get((text_id, system, editor))
        revised = draft if g is None else revised_text(draft, g.sort_values("edit_index"))
        rev, post_n, draft_n = (" ".join(t.split()) for t in (revised, post, draft))
        rows.append(
            (text_id, system, editor, fuzz.ratio(rev, post_n) / 100, rev == post_n, fuzz.ratio(draft_n, post_n) / 100)
        )
    return pd.DataFrame(rows, columns=[*RUN_KEYS, "similarity", "exact", "baseline"])
