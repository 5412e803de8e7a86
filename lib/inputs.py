"""From a judgment table (uploaded or bundled) to the rating matrix every analysis starts from."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import pandas as pd

from lib.datasets import dataset, load_judgments, load_table
from lib.errors import SettingsError
from lib.formats import (
    FORMATS,
    JUDGMENT_FORMATS,
    Judgments,
    criterion_rows,
    drop_incomplete,
    filter_rows,
    read_judgments,
    read_ratings,
    read_responses,
    resolve_columns,
)
from lib.ratings import RatingMatrix, from_absolute_ratings, from_responses, net_ratings


@dataclass
class AnalysisInput:
    """A rating matrix with what it came from.

    judgments is set for vote formats (pairwise, bestworst, ranking): votes for kappa and
    summaries, prompt and response texts; ratings for the ``ratings`` format. dropped_rows are the
    file's 1-based data rows left out because of a blank cell (``drop_incomplete=True``).
    """

    matrix: RatingMatrix
    fmt: str
    source: str
    criterion: str | None
    judgments: Judgments | None = None
    ratings: pd.DataFrame | None = None
    dropped_rows: tuple[int, ...] = ()


def analysis_input(
    df: pd.DataFrame,
    fmt: str,
    columns: dict[str, str] | None = None,
    *,
    file: str,
    criterion: str | None = None,
    merge_redundant: bool = True,
    judgments: Judgments | None = None,
    filters: Mapping[str, Sequence[str]] | None = None,
    drop_incomplete_rows: bool = False,
) -> AnalysisInput:
    """Read a table in any format and build its rating matrix.

    Rows are narrowed before they are checked: first ``filters``, then the chosen criterion's rows
    (so blanks under other criteria do not block it), then, if asked, rows with a blank in a role
    that must not be blank are left out and their row numbers returned. Row numbers in messages
    stay those of the user's file.

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
        Average redundant prompts (:func:`lib.ratings.redundancy_groups`; not for ``responses``).
    judgments : Judgments, optional
        Already read votes (with texts) to use instead of reading ``df`` again (then ``filters``
        and ``drop_incomplete_rows`` do not apply).
    filters : mapping, optional
        ``{column: values to keep}`` (``lib.formats.filter_rows``).
    drop_incomplete_rows : bool
        Leave out rows with a blank required cell (``lib.formats.NOT_BLANK``) instead of raising;
        the result's ``dropped_rows`` lists them.

    Raises
    ------
    lib.errors.FormatError, lib.errors.SettingsError
        Bad file, bad mapping or filter, unknown or ambiguous criterion, nothing left.
    """
    if fmt not in FORMATS:
        raise SettingsError(f"unknown format '{fmt}'; choose one of {', '.join(FORMATS)}")
    dropped: list[int] = []
    if judgments is None:
        for column, values in (filters or {}).items():
            df = filter_rows(df, column, values, file=file)
        columns = resolve_columns(df, fmt, columns, file=file)
        df = criterion_rows(df, columns, criterion, file=file)
        if drop_incomplete_rows:
            df, dropped = drop_incomplete(df, fmt, columns, file=file)
    if fmt == "responses":
        rm = from_responses(read_responses(df, columns, file=file))
        return AnalysisInput(rm, fmt, file, None, dropped_rows=tuple(dropped))
    if fmt == "ratings":
        ratings = read_ratings(df, columns, file=file)
        rm = from_absolute_ratings(ratings, criterion, merge_redundant=merge_redundant)
        return AnalysisInput(rm, fmt, file, criterion, ratings=ratings, dropped_rows=tuple(dropped))
    j = judgments or read_judgments(df, fmt, columns, file=file)
    rm = net_ratings(j.votes, criterion, merge_redundant=merge_redundant)
    return AnalysisInput(rm, fmt, file, criterion, judgments=j, dropped_rows=tuple(dropped))


def bundled_input(key: str, criterion: str | None = None, *, merge_redundant: bool = True) -> AnalysisInput:
    """The rating matrix of a bundled data set (``lib.datasets.DATASETS``), texts attached.

    Raises
    ------
    lib.errors.SettingsError
        Unknown key (the known keys are named) or criterion.
    """
    ds = dataset(key)
    judgments = load_judgments(key) if ds.fmt in JUDGMENT_FORMATS else None
    data = analysis_input(
        load_table(key), ds.fmt, ds.columns, file=ds.path.name, criterion=criterion,
        merge_redundant=merge_redundant, judgments=judgments,
    )
    return replace(data, source=ds.title)
