"""Judge files: LLM-judge verdicts read as pairwise votes and matched to the human items.

A judge file is a pairwise file (``lib.judgments.formats``' ``pairwise`` roles: prompt, system_a, system_b,
choice) whose ``judge`` column names the model that gave each verdict (without one, the annotator
column does). ``system_a`` is the response the judge was shown first (as ``python -m lib judge``
writes it; a ``position`` column is not read): the same pair judged in both orders measures
position bias. A
blank choice is an unusable verdict (a judge answer that could not be parsed): it is counted and
reported, never guessed; any other unknown choice is an error of the file. A judge that gave several
verdicts on the same prompt, pair and order (an arena conversation voted twice, judged once per vote) is
not refused: every verdict is kept (the item's judge score averages them), and they are counted.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from lib.errors import DesignError, FormatError
from lib.io.tables import row_numbers, text
from lib.judgments.formats import read_pairwise, resolve_columns
from lib.ranking.bradley_terry import OUTCOME

JUDGE_COLUMN = "judge"
"""Name of the column that names the judge model (any case); else the annotator column does."""

ITEM_KEY = ["prompt_id", "system_low", "system_high"]
"""An item: a prompt and an unordered system pair, written in sorted order (low < high)."""

_SEP = "\x1f"  # joins judge and first-shown system into one annotator name, so both orders are two votes


@dataclass
class JudgeVotes:
    """The usable verdicts of a judge file and what could not be used.

    Attributes
    ----------
    verdicts : DataFrame
        ``judge, prompt_id, system_a, system_b, first, winner`` (str): one row per usable verdict,
        ``first`` the system shown first, ``winner`` in {"a", "b", "tie"} for the row's pair.
    unusable : DataFrame
        ``judge, n_verdicts, n_unusable, rows, n_repeated, repeated_rows``: per judge, its verdicts and the
        blank ones, with the file's 1-based row numbers of the blank ones (a comma-separated text), and its
        usable verdicts that repeat an earlier one's prompt, pair and order (kept), with their rows.
    source : str
        The file name.
    """

    verdicts: pd.DataFrame
    unusable: pd.DataFrame
    source: str


def read_judge_file(df: pd.DataFrame, columns: dict[str, str] | None = None, *, file: str) -> JudgeVotes:
    """Read a judge file: its usable verdicts and the count of unusable (blank) ones per judge.

    Parameters
    ----------
    df : DataFrame
        The file as read by :func:`lib.io.tables.read_csv` (one row per verdict).
    columns : dict, optional
        ``{role: column}`` over the guessed pairwise roles (``lib.judgments.formats.resolve_columns``).
    file : str
        File name for messages.

    Returns
    -------
    JudgeVotes

    Raises
    ------
    FormatError
        A pairwise role without column, no column naming the judge, a blank judge name, every verdict
        unusable, or what :func:`lib.judgments.formats.read_pairwise` refuses in the usable rows (unknown choice, a
        system compared with itself).
    """
    named = next((c for c in df.columns if str(c).strip().lower() == JUDGE_COLUMN), None)
    mapping = resolve_columns(df, "pairwise", ({"annotator": named} if named else {}) | (columns or {}), file=file)
    if "annotator" not in mapping:
        raise FormatError(
            f"a judge file needs a '{JUDGE_COLUMN}' column naming the model of each verdict (or an annotator "
            f"column); the file's columns are {', '.join(map(str, df.columns))}",
            file=file,
        )
    judge_col = mapping["annotator"]
    judge = text(df[judge_col])
    rows = row_numbers(df)
    if (judge == "").any():
        raise FormatError("a verdict names no judge", file=file, rows=rows[judge == ""].tolist(), column=judge_col)
    blank = text(df[mapping["choice"]]) == ""
    counts = pd.DataFrame({"judge": judge, "blank": blank, "row": rows})
    unusable = counts.groupby("judge", sort=True)["blank"].agg(n_verdicts="size", n_unusable="sum")
    unusable["rows"] = counts[blank].groupby("judge")["row"].agg(lambda r: ", ".join(map(str, r)))
    unusable = unusable.fillna({"rows": ""}).reset_index()
    if blank.all():
        raise FormatError(
            "every verdict is unusable (the choice is blank in every row): there is nothing to compare with the "
            "human votes",
            file=file,
            column=mapping["choice"],
        )
    usable = df[~blank].copy()
    # Both orders of a pair by one judge are two verdicts, not a duplicate, and so is a repeated verdict on the
    # same order: the annotator name holds the order and the repeat's number.
    first = text(usable[mapping["system_a"]])
    same = pd.DataFrame(
        {r: text(usable[mapping[r]]) for r in ("prompt", "system_a", "system_b", "criterion") if r in mapping}
    ).assign(judge=judge[~blank])
    repeat = same.groupby(list(same.columns), sort=False).cumcount().to_numpy()
    usable["_judge_order"] = judge[~blank] + _SEP + first + _SEP + repeat.astype(str)
    repeats = pd.DataFrame({"judge": judge[~blank], "row": rows[~blank]})[repeat > 0]
    unusable = unusable.merge(
        repeats.groupby("judge")["row"].agg(n_repeated="size", repeated_rows=lambda r: ", ".join(map(str, r))),
        on="judge",
        how="left",
    ).fillna({"n_repeated": 0, "repeated_rows": ""})
    unusable["n_repeated"] = unusable["n_repeated"].astype(int)
    roles = mapping | {"annotator": "_judge_order", "position": ""}
    try:
        votes = read_pairwise(usable, roles, file=file).votes
    except FormatError as err:
        err.column = judge_col if err.column == "_judge_order" else err.column  # name the user's column
        raise
    name_order = votes["annotator_id"].str.split(_SEP, n=2, expand=True)
    verdicts = pd.DataFrame(
        {
            "judge": name_order[0],
            "prompt_id": votes["prompt_id"],
            "system_a": votes["system_a"],
            "system_b": votes["system_b"],
            "first": name_order[1],
            "winner": votes["winner"],
        }
    )
    return JudgeVotes(verdicts.reset_index(drop=True), unusable, file)


def oriented(votes: pd.DataFrame) -> pd.DataFrame:
    """Votes written on their item: ``prompt_id, system_low, system_high, score`` plus the other columns.

    ``score`` is the score of ``system_low`` (1 win, 0.5 tie, 0 loss; ``lib.ranking.bradley_terry.OUTCOME``),
    whichever side the file listed it on.
    """
    sa, sb = votes["system_a"].to_numpy(dtype=str), votes["system_b"].to_numpy(dtype=str)
    score = votes["winner"].map(OUTCOME).to_numpy(dtype=float)
    swap = sa > sb
    out = votes.drop(columns=["system_a", "system_b"]).assign(
        system_low=np.where(swap, sb, sa), system_high=np.where(swap, sa, sb), score=np.where(swap, 1 - score, score)
    )
    return out


def match_items(humans: pd.DataFrame, judges: JudgeVotes) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Match judge verdicts to human votes on (prompt, system pair).

    Parameters
    ----------
    humans : DataFrame
        Canonical human votes (``lib.judgments.formats.VOTE_COLUMNS``).
    judges : JudgeVotes
        From :func:`read_judge_file`.

    Returns
    -------
    (items, verdicts)
        ``items``: one row per item judged by humans or a judge, ``ITEM_KEY`` then ``human_score``
        (mean human score of ``system_low``, NaN where no human voted), ``n_human``, ``judge_score``
        (mean over every usable judge verdict, NaN where none) and ``n_judge``. ``verdicts``: the
        judge verdicts oriented (:func:`oriented`), with ``judge`` and ``first``.

    Raises
    ------
    FormatError
        A judge file's system that no human vote mentions (rows named).
    DesignError
        No item judged both by humans and by a judge.
    """
    known = set(humans["system_a"]) | set(humans["system_b"])
    v = judges.verdicts
    stray = ~(v["system_a"].isin(known) & v["system_b"].isin(known)).to_numpy()
    if stray.any():
        names = sorted((set(v["system_a"][stray]) | set(v["system_b"][stray])) - known)
        raise FormatError(
            f"system(s) {', '.join(repr(n) for n in names[:10])} are not in the human votes; the judge can only "
            f"help rank systems the humans compared (they compared {', '.join(sorted(known)[:10])})",
            file=judges.source,
        )
    h = oriented(humans).groupby(ITEM_KEY, sort=True)["score"].agg(human_score="mean", n_human="size")
    verdicts = oriented(v)
    j = verdicts.groupby(ITEM_KEY, sort=True)["score"].agg(judge_score="mean", n_judge="size")
    both = h.index.intersection(j.index)
    if both.empty:
        raise DesignError(
            "no item is in the human votes: a judge's verdicts are matched to the human votes on (prompt, system "
            "pair), and none match; check that both files use the same prompt ids and system names",
            file=judges.source,
        )
    items = h.join(j, how="outer").reset_index()
    items[["n_human", "n_judge"]] = items[["n_human", "n_judge"]].fillna(0).astype(int)
    return items, verdicts
