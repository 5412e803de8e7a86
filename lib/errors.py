"""Typed exceptions for bad input: each names the file, row(s) and column at fault and why."""

from __future__ import annotations

from collections.abc import Sequence


class InputError(ValueError):
    """A user's file or setting cannot be used as given.

    Parameters
    ----------
    problem : str
        What is wrong, in words a researcher understands.
    file : str, optional
        Name of the file at fault (as the user named it).
    rows : sequence of int, optional
        1-based data row numbers at fault (the header is row 0); at most 10 are shown.
    column : str, optional
        Column at fault, by the file's own name.
    """

    def __init__(
        self,
        problem: str,
        *,
        file: str | None = None,
        rows: Sequence[int] | None = None,
        column: str | None = None,
    ) -> None:
        self.problem = problem
        self.file = file
        self.rows = [int(r) for r in rows] if rows is not None else None
        self.column = column
        super().__init__(str(self))

    def __str__(self) -> str:
        """The problem, after where it is: ``file, rows 2, 5, column 'x': problem`` (parts that are known)."""
        where = []
        if self.file:
            where.append(self.file)
        if self.rows:
            shown = ", ".join(str(r) for r in self.rows[:10])
            more = f" (+{len(self.rows) - 10} more)" if len(self.rows) > 10 else ""
            where.append(f"row{'s' if len(self.rows) > 1 else ''} {shown}{more}")
        if self.column:
            where.append(f"column '{self.column}'")
        return f"{', '.join(where)}: {self.problem}" if where else self.problem


class FormatError(InputError):
    """A judgment file does not follow the chosen format (missing column, bad value, ...)."""


class SettingsError(InputError):
    """An analysis setting is invalid (unknown sampler, empty subset, bad weights, ...)."""


class DesignError(InputError):
    """The data cannot support the analysis asked of it (no shared prompts, all ties, ...)."""


class OutputError(InputError):
    """An output folder or file cannot be written as asked (a file, unwritable, not empty)."""


class PlanStopped(SettingsError):
    """A plan stopped before every design finished (e.g. its cluster lost every worker); ``finished``
    holds the design sizes' results already computed (and cached: a rerun resumes from them)."""

    def __init__(self, message: str, finished: list | None = None):
        super().__init__(message)
        self.finished = finished or []


class TooLargeError(SettingsError):
    """The work asked for is estimated, before it starts, to pass a stated memory or time limit; the
    message names the limit and the option that lifts it."""


class ClusterError(SettingsError):
    """The Dask cluster failed under a running task set: no worker left for longer than the stated
    bound, the scheduler lost, or a task killed its workers; the results already yielded stand."""


class ExactFitError(SettingsError):
    """A model's own exact fit (a likelihood's Laplace fit with its local variables integrated out,
    :attr:`lib.inference.settings.LaplaceSettings.exact_fit`) cannot finish on these data, e.g. the votes'
    quadrature nodes did not settle: the fit runs the full model's Laplace fit instead and says so, the
    message being how it was then made (its route, :attr:`lib.ranking.fit.RankingFit.route`)."""
