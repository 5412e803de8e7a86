"""From a judgment table (uploaded or bundled) to the rating matrix every analysis starts from."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import pandas as pd

from lib.errors import SettingsError
from lib.io.tables import combine_columns
from lib.judgments.datasets import dataset, load_judgments, load_table
from lib.judgments.formats import Judgments, criterion_rows, drop_incomplete, filter_rows, format_spec, resolve_columns
from lib.judgments.ratings import RatingMatrix, net_ratings, select_criterion


@dataclass
class AnalysisInput:
    """A rating matrix with what it came from.

    judgments is set for formats that yield votes (``FormatSpec.votes``: pairwise, bestworst,
    ranking): votes for kappa and summaries, prompt and response texts; ratings is the reader's
    table for the others (``ratings``: prompt_id, system, criterion, score; ``responses``: person,
    item, score). criterion is None for formats without a criterion role. dropped_rows are the
    file's 1-based data rows left out because of a blank cell (``drop_incomplete=True``).
    """

    matrix: RatingMatrix | None  # None only when asked for (``analysis_input(..., matrix=False)``)
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
    matrix: bool = True,
    style_columns: Sequence[str] = (),
) -> AnalysisInput:
    """Read a table in any format and build its rating matrix.

    Rows are narrowed before they are checked: first ``filters``, then the chosen criterion's rows
    (so blanks under other criteria do not block it), then, if asked, rows with a blank in a role
    that must not be blank are left out and their row numbers returned. Row numbers in messages
    stay those of the user's file.

    Parameters
    ----------
    df : DataFrame
        The user's table (``lib.io.tables.read_csv``).
    fmt : str
        A key of ``lib.judgments.formats.FORMATS``; its spec reads the table and builds the matrix.
    columns : dict, optional
        ``{role: column}`` over the guesses; ``"A+B"`` combines columns (:func:`lib.io.tables.combine_columns`).
    file : str
        File name for messages.
    criterion : str, optional
        Needed when the data holds several criteria.
    merge_redundant : bool
        Average redundant prompts (:func:`lib.judgments.ratings.redundancy_groups`; where the format allows).
    judgments : Judgments, optional
        Already read votes (with texts) to use instead of reading ``df`` again (then ``filters``
        and ``drop_incomplete_rows`` do not apply).
    filters : mapping, optional
        ``{column: values to keep}`` (``lib.judgments.formats.filter_rows``).
    drop_incomplete_rows : bool
        Leave out rows with a blank required cell (``FormatSpec.not_blank``) instead of raising;
        the result's ``dropped_rows`` lists them.
    matrix : bool
        Build the net-rating matrix of vote formats. ``False`` leaves ``AnalysisInput.matrix``
        None: an arena's votes (e.g. 5,000 system pairs x 20,000 prompts) are ranked from the votes
        themselves (``lib.ranking``), and their pairs x prompts matrix would not fit in memory.
    style_columns : sequence of str
        Numeric columns of a pairwise file to use as style covariates (:func:`lib.ranking.style.named_features`):
        the votes get them as ``style:NAME`` columns.

    Raises
    ------
    lib.errors.FormatError, lib.errors.SettingsError
        Bad file, unknown format, bad mapping or filter, unknown or ambiguous criterion, nothing
        left.
    """
    spec = format_spec(fmt)
    dropped: list[int] = []
    if judgments is None:
        for column, values in (filters or {}).items():
            df = filter_rows(df, column, values, file=file)
        df = combine_columns(df, columns, file=file)
        # every role set or unset for the reader, which resolves the mapping again: a role unset here (by the user, or
        # not guessed in the rows left) is not guessed there
        columns = dict.fromkeys(spec.roles, "") | resolve_columns(df, fmt, columns, file=file)
        df = criterion_rows(df, columns, criterion, file=file)
        if drop_incomplete_rows:
            df, dropped = drop_incomplete(df, fmt, columns, file=file)
    if "criterion" not in spec.roles:
        criterion = None
    read = judgments if judgments is not None else spec.read(df, columns, file=file)
    if style_columns:
        if judgments is not None:
            raise SettingsError("style feature columns are read with the votes: pass the table, not read judgments")
        read = _with_style_columns(read, df, fmt, style_columns, file)
    if spec.votes:
        if not matrix:
            select_criterion(read.votes, criterion)  # an unknown or ambiguous criterion still stops here
            return AnalysisInput(None, fmt, file, criterion, judgments=read, dropped_rows=tuple(dropped))
        rm = net_ratings(read.votes, criterion, merge_redundant=merge_redundant)
        return AnalysisInput(rm, fmt, file, criterion, judgments=read, dropped_rows=tuple(dropped))
    assert spec.matrix is not None  # every format without votes builds its matrix
    rm = spec.matrix(read, criterion, merge_redundant)
    return AnalysisInput(rm, fmt, file, criterion, ratings=read, dropped_rows=tuple(dropped))


def _with_style_columns(read: Judgments, df: pd.DataFrame, fmt: str, names: Sequence[str], file: str) -> Judgments:
    """The votes with the named feature columns of the file (one vote per row of ``df``, as the pairwise reader
    reads them).

    Raises
    ------
    SettingsError
        A format other than pairwise (its votes are not the file's rows).
    """
    from lib.ranking.style import named_features

    if fmt != "pairwise":
        raise SettingsError(f"style feature columns need pairwise votes (one pair per row), not {fmt}")
    read.votes = pd.concat([read.votes, named_features(df, names, file=file)], axis=1)
    return read


def bundled_input(key: str, criterion: str | None = None, *, merge_redundant: bool = True) -> AnalysisInput:
    """The rating matrix of a bundled data set (``lib.judgments.datasets.DATASETS``), texts attached.

    Raises
    ------
    lib.errors.SettingsError
        Unknown key (the known keys are named) or criterion.
    """
    ds = dataset(key)
    judgments = load_judgments(key) if format_spec(ds.fmt).votes else None
    data = analysis_input(
        load_table(key),
        ds.fmt,
        ds.columns,
        file=ds.path.name,
        criterion=criterion,
        merge_redundant=merge_redundant,
        judgments=judgments,
    )
    return replace(data, source=ds.title)
