"""From a judgment table (uploaded or bundled) to the rating matrix every analysis starts from."""

from __future__ import annotations

from dataclasses import dataclass, replace

import pandas as pd

from lib.datasets import DATASETS, load_judgments, load_table
from lib.errors import SettingsError
from lib.formats import JUDGMENT_FORMATS, Judgments, read_judgments, read_ratings, read_responses
from lib.ratings import RatingMatrix, from_absolute_ratings, from_responses, net_ratings


@dataclass
class AnalysisInput:
    """A rating matrix with what it came from.

    judgments is set for vote formats (pairwise, bestworst, ranking): votes for kappa and
    summaries, prompt and response texts; ratings for the ``ratings`` format.
    """

    matrix: RatingMatrix
    fmt: str
    source: str
    criterion: str | None
    judgments: Judgments | None = None
    ratings: pd.DataFrame | None = None


def analysis_input(
    df: pd.DataFrame,
    fmt: str,
    columns: dict[str, str] | None = None,
    *,
    file: str,
    criterion: str | None = None,
    merge_redundant: bool = True,
    judgments: Judgments | None = None,
) -> AnalysisInput:
    """Read a table in any format and build its rating matrix.

    Parameters
    ----------
    df : DataFrame
        The user's table (``lib.formats.read_csv``).
    fmt : {"pairwise", "bestworst", "ranking", "responses", "ratings"}
    columns : dict, optional
        ``{role: column}`` over the guesses.
    file : str
        File name for messages.
    criterion : str, optional
        Needed when the data holds several criteria.
    merge_redundant : bool
        Average prompts whose net ratings correlate above 0.6 (not for ``responses``).
    judgments : Judgments, optional
        Already read votes (with texts) to use instead of reading ``df`` again.

    Raises
    ------
    lib.errors.FormatError, lib.errors.SettingsError
        Bad file, bad mapping, unknown or ambiguous criterion.
    """
    if fmt == "responses":
        rm = from_responses(read_responses(df, columns, file=file))
        return AnalysisInput(rm, fmt, file, None)
    if fmt == "ratings":
        ratings = read_ratings(df, columns, file=file)
        rm = from_absolute_ratings(ratings, criterion, merge_redundant=merge_redundant)
        return AnalysisInput(rm, fmt, file, criterion, ratings=ratings)
    if fmt not in JUDGMENT_FORMATS:
        raise SettingsError(f"unknown format '{fmt}'")
    j = judgments or read_judgments(df, fmt, columns, file=file)
    rm = net_ratings(j.votes, criterion, merge_redundant=merge_redundant)
    return AnalysisInput(rm, fmt, file, criterion, judgments=j)


def bundled_input(key: str, criterion: str | None = None, *, merge_redundant: bool = True) -> AnalysisInput:
    """The rating matrix of a bundled data set (``lib.datasets.DATASETS``), texts attached."""
    ds = DATASETS[key]
    judgments = load_judgments(key) if ds.fmt in JUDGMENT_FORMATS else None
    data = analysis_input(
        load_table(key), ds.fmt, ds.columns, file=ds.path.name, criterion=criterion,
        merge_redundant=merge_redundant, judgments=judgments,
    )
    return replace(data, source=ds.title)
