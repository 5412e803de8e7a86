r"""Style features of the two answers of a vote, as LMArena's style control computes them (issue 36 item 1).

LMArena reports its leaderboard with and without style control: a Bradley–Terry model with, as covariates,
the differences between the two answers in length and in markdown elements (Li et al. 2024, "Does style
matter? Disentangling style and substance in Chatbot Arena", LMSYS blog, 28 Aug 2024; arena-rank's
``ContextualBradleyTerry``). Per answer (FastChat ``fastchat/serve/monitor/add_markdown_info.py``,
``count_markdown_elements``, on the answer with the contents of its ```` ``` ```` code blocks removed first;
``clean_battle_data.py`` for the tokens):

- ``tokens``: the answer's length in tokens (LMArena: tiktoken's ``gpt-3.5-turbo`` encoding, cl100k_base),
- ``headers``: lines starting with 1 to 6 ``#`` and a space (``^#{1}\s`` ... ``^#{6}\s``),
- ``bold``: ``**...**`` and ``__...__`` spans within a line,
- ``lists``: ordered (``^\s*\d+\.\s``) and unordered (``^\s*[-*+]\s``) list items.

Per vote each feature is the normalised difference ``(a - b) / (a + b)`` (0 when both are 0), then
standardised over the votes, ``(f - mean) / sd`` with the population SD (arena-rank ``examples/example_utils.py``
``add_style_feature_cols`` and ``ContextualPairDataset.from_pandas(normalize_features=True)``; FastChat
``rating_systems.preprocess_for_style`` divides by ``a + b + 1`` instead).

Tokens here are the pieces of cl100k_base's pre-tokenizer (:data:`TOKEN_PIECES`: words with their leading
space or punctuation, runs of up to 3 digits, runs of other symbols, runs of white space): each piece is one
BPE token or more, and common English words are exactly one. tiktoken's own count needs its vocabulary
downloaded when first used, which a tool that runs offline cannot do; the feature is a ratio of two lengths,
so a count that differs from tiktoken's by a near-constant factor gives nearly the same feature.

A file can instead name numeric columns (``--style-columns``): a column ``NAME`` is used as it is (a's minus
b's, or any covariate), or, where the file has ``NAME_a`` and ``NAME_b`` instead, their normalised difference;
either is then standardised as above.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from lib.errors import FormatError, SettingsError

FEATURES = ("tokens", "headers", "bold", "lists")
"""The style features of answers' texts, in LMArena's order (sum_assistant_tokens, header_count, bold_count,
list_count)."""
COLUMN_PREFIX = "style:"
"""Votes carry a feature column the user named as ``style:NAME`` (:func:`named_features`)."""

TOKEN_PIECES = re.compile(
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|(?:[^\r\n\w]|_)?[^\W\d_]+|\d{1,3}| ?(?:[^\s\w]|_)+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
"""cl100k_base's pre-tokenizer (tiktoken ``openai_public.py``) with ``\\p{L}`` as ``[^\\W\\d_]`` and ``\\p{N}``
as ``\\d`` (Python's ``re`` has no Unicode classes)."""
_CODE = re.compile("```([^`]*)```")
_HEADER = re.compile(r"^#{1,6}\s", re.MULTILINE)
_LIST = re.compile(r"^\s*\d+\.\s|^\s*[-*+]\s", re.MULTILINE)
_BOLD = re.compile(r"\*\*[^*\n]+\*\*|__[^_\n]+__")

NO_TEXTS = (
    "style control needs the two answers of each vote: their texts (a pairwise file's response_a and response_b "
    "columns, a best-worst or ranking file's response column) or numeric feature columns (--style-columns)"
)
CONSTANT_NOTE = "style control leaves out {names}: the same in every vote (e.g. no answer has any)"


def counts(text: str) -> tuple[int, int, int, int]:
    """The answer's ``tokens, headers, bold, lists`` (module docstring; markdown counted without code blocks).

    Parameters
    ----------
    text : str
        One answer.

    Returns
    -------
    tuple of 4 int
    """
    prose = text
    for block in _CODE.findall(text):  # as FastChat's remove_pattern: the blocks' contents, fences kept
        prose = prose.replace(block, "")
    return (
        len(TOKEN_PIECES.findall(text)),
        len(_HEADER.findall(prose)),
        len(_BOLD.findall(prose)),
        len(_LIST.findall(prose)),
    )


def normalised_difference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``(a - b) / (a + b)``, 0 where ``a + b`` is 0 (arena-rank: a total of 0 replaced by 1)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    total = a + b
    return (a - b) / np.where(total == 0, 1.0, total)


def standardised(raw: np.ndarray) -> np.ndarray:
    """Each column ``(f - mean) / sd`` over the rows, population SD (an SD of 0 taken as 1), (N, p)."""
    sd = raw.std(axis=0)
    return (raw - raw.mean(axis=0)) / np.where(sd == 0, 1.0, sd)


@dataclass(frozen=True)
class StyleFeatures:
    """Standardised style covariates of votes (module docstring).

    Attributes
    ----------
    names : tuple of str
        The features kept.
    values : ndarray (N, p)
        One row per vote (as the votes), a's minus b's, standardised.
    scale : ndarray (p,)
        The SD each raw feature was divided by (its unit in the coefficients).
    notes : tuple of str
        Features left out (constant over the votes).
    """

    names: tuple[str, ...]
    values: np.ndarray
    scale: np.ndarray
    notes: tuple[str, ...] = ()


def vote_features(votes: pd.DataFrame, responses: pd.DataFrame | None = None) -> StyleFeatures:
    """The style covariates of each vote, from the columns the user named or from the answers' texts.

    Parameters
    ----------
    votes : DataFrame
        Canonical votes (``lib.judgments.formats.VOTE_COLUMNS``) with ``style:NAME`` columns (:func:`named_features`),
        or the two answers' texts in ``response_a`` and ``response_b`` (the pairwise reader keeps them).
    responses : DataFrame, optional
        ``prompt_id, system, response``: the answers' texts when the votes do not carry them (a bundled data
        set's ``responses.csv``).

    Returns
    -------
    StyleFeatures
        Constant features are left out (said in ``notes``).

    Raises
    ------
    SettingsError
        No feature columns and no texts, or a vote whose answer has no text in ``responses``.
    """
    named = [c for c in votes.columns if str(c).startswith(COLUMN_PREFIX)]
    if named:
        names = tuple(c[len(COLUMN_PREFIX) :] for c in named)
        raw = votes[named].to_numpy(dtype=float)
    else:
        a, b = _texts(votes, responses)
        per_answer = np.array([counts(t) for t in (*a, *b)], dtype=float).reshape(2, len(votes), len(FEATURES))
        names, raw = FEATURES, normalised_difference(per_answer[0], per_answer[1])
    varies = raw.std(axis=0) > 0 if len(raw) else np.zeros(len(names), dtype=bool)
    notes: tuple[str, ...] = ()
    if not varies.all():
        left = [n for n, v in zip(names, varies, strict=True) if not v]
        notes = (CONSTANT_NOTE.format(names=", ".join(left)),)
    raw = raw[:, varies]
    return StyleFeatures(
        tuple(n for n, v in zip(names, varies, strict=True) if v), standardised(raw), raw.std(axis=0), notes
    )


def has_style(votes: pd.DataFrame | None, responses: pd.DataFrame | None = None) -> bool:
    """Whether votes carry what style control needs: named feature columns, both answers' texts, or texts of
    their answers in ``responses``."""
    if votes is None:
        return False
    if any(str(c).startswith(COLUMN_PREFIX) for c in votes.columns) or {"response_a", "response_b"} <= set(votes):
        return True
    return responses is not None and not responses.empty


def _texts(votes: pd.DataFrame, responses: pd.DataFrame | None) -> tuple[np.ndarray, np.ndarray]:
    """Each vote's two answers (a blank cell: an empty answer)."""
    if {"response_a", "response_b"} <= set(votes.columns):
        a, b = (votes[c].fillna("").astype(str).to_numpy() for c in ("response_a", "response_b"))
        return a, b
    if responses is None or responses.empty:
        raise SettingsError(NO_TEXTS)
    text = responses.drop_duplicates(["prompt_id", "system"]).set_index(["prompt_id", "system"])["response"]
    sides = []
    for side in ("system_a", "system_b"):
        found = text.reindex(pd.MultiIndex.from_arrays([votes["prompt_id"].astype(str), votes[side].astype(str)]))
        sides.append(found.to_numpy())
    missing = pd.isna(sides[0]) | pd.isna(sides[1])
    if missing.any():
        i = int(np.flatnonzero(missing)[0])
        row = votes.iloc[i]
        raise SettingsError(
            f"style control: {int(missing.sum())} of {len(votes)} votes have no text for one of their two answers "
            f"(first: prompt '{row['prompt_id']}', {row['system_a']} against {row['system_b']}); "
            + NO_TEXTS.split(": ", 1)[1]
        )
    return sides[0].astype(str), sides[1].astype(str)


def named_features(df: pd.DataFrame, names: Sequence[str], *, file: str) -> pd.DataFrame:
    """The numeric feature columns a user named, per row of their file, as ``style:NAME`` columns.

    Parameters
    ----------
    df : DataFrame
        The user's table (one vote per row, the pairwise format), as read by :func:`lib.io.tables.read_csv`.
    names : sequence of str
        Column names: ``NAME`` used as it is, or, when the file has ``NAME_a`` and ``NAME_b`` instead, their
        normalised difference ``(a - b) / (a + b)``.
    file : str
        File name for messages.

    Returns
    -------
    DataFrame
        ``style:NAME`` columns (float), the rows of ``df``.

    Raises
    ------
    FormatError
        A named column the file does not have (neither NAME nor NAME_a and NAME_b), or a cell that is not a
        number (file, rows and column named).
    """
    out = {}
    for name in names:
        if name in df.columns:
            out[COLUMN_PREFIX + name] = _numbers(df, name, file)
        elif f"{name}_a" in df.columns and f"{name}_b" in df.columns:
            a, b = _numbers(df, f"{name}_a", file), _numbers(df, f"{name}_b", file)
            out[COLUMN_PREFIX + name] = normalised_difference(a, b)
        else:
            raise FormatError(
                f"no style feature column '{name}' (nor '{name}_a' and '{name}_b'); the columns are "
                f"{', '.join(map(str, df.columns))}",
                file=file,
                column=name,
            )
    return pd.DataFrame(out, index=pd.RangeIndex(len(df)))


def _numbers(df: pd.DataFrame, column: str, file: str) -> np.ndarray:
    """The column as floats (:func:`lib.io.tables.numbers`); FormatError naming the rows whose cell is blank or not a
    finite number."""
    from lib.io.tables import numbers, refuse, row_numbers, text

    rows = row_numbers(df)
    values = numbers(text(df[column]), rows, what="a style feature", column=column, file=file)
    refuse(np.isnan(values), "a style feature needs a number in every row (blank here)", rows, column, file)
    return values
