"""What the data can support: checks of a rating matrix's design before any model is fitted.

The graded response model of Sedoc & Ungar (2020) explains the net rating u_ij of comparison i on
prompt j; it needs cells where two systems were judged on the same prompt, more than one prompt, and
judgments that are not all ties. A design that lacks these fits "successfully" to the prior, so the
fit and the selection calibration call :func:`check_design` first and the Data page shows
:func:`design_report`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from lib.errors import DesignError
from lib.ratings import RatingMatrix

_SHOWN = 10
"""At most this many names are listed in one message."""

UNPAIRED = (
    "no prompt was rated for two systems, so no pair of systems can be compared on the same prompt; "
    "the paired graded response model needs each prompt rated for at least two systems. Unpaired "
    "ratings need a ratings likelihood with a prompt effect: rank the systems on the Leaderboard page "
    "or with `python -m lib rank --likelihood ratings`"
)


@dataclass
class DesignReport:
    """Problems of a rating matrix's design.

    Attributes
    ----------
    errors : list of str
        What the data lacks for the graded response model; any error means no fit.
    warnings : list of str
        What weakens the analysis without preventing it (comparisons or prompts with no data,
        agreement that cannot be measured).
    """

    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when there is no error (warnings allowed)."""
        return not self.errors


def _names(names) -> str:
    names = [str(n) for n in names]
    more = f" (+{len(names) - _SHOWN} more)" if len(names) > _SHOWN else ""
    return ", ".join(names[:_SHOWN]) + more


def design_report(rm: RatingMatrix) -> DesignReport:
    """Check that a rating matrix can support the graded response model.

    Errors: an empty matrix; no observed cell (for pairwise data: no prompt judged for two systems);
    fewer than two prompts with data; every judgment a tie (u == 0 everywhere, or for item-response
    data a single score). Warnings: comparisons (persons) or prompts (items) without any observed
    cell, listed by name (they are kept, not dropped: their estimates are the prior); a single vote
    per cell everywhere, so annotator agreement (Fleiss' kappa) cannot be measured.

    Parameters
    ----------
    rm : RatingMatrix
        u of shape (I, J), NaN where missing.

    Returns
    -------
    DesignReport
    """
    report = DesignReport()
    paired = bool((rm.comparisons["system_a"] != "").any()) if len(rm.comparisons) else True
    rows, cols = ("comparisons", "prompts") if paired else ("persons", "items")
    n_rows, n_cols = rm.u.shape
    if n_rows == 0 or n_cols == 0:
        report.errors.append(f"the rating matrix is empty ({n_rows} {rows} x {n_cols} {cols})")
        return report
    obs = ~np.isnan(rm.u)
    if not obs.any():
        report.errors.append(UNPAIRED if paired else "no item has a response")
        return report
    row_has, col_has = obs.any(axis=1), obs.any(axis=0)
    if not row_has.all():
        empty = rm.comparisons["comparison"].to_numpy()[~row_has]
        report.warnings.append(
            f"{len(empty)} of {n_rows} {rows} have no data (kept; their estimates are the prior): "
            f"{_names(empty)}"
            + ("; the two systems of each were never judged on the same prompt" if paired else "")
        )
    if not col_has.all():
        empty = rm.prompt_ids[~col_has]
        report.warnings.append(
            f"{len(empty)} of {n_cols} {cols} have no data (kept; they carry no information): {_names(empty)}"
        )
    if col_has.sum() < 2:
        report.errors.append(
            f"only {int(col_has.sum())} {cols[:-1]} has data; the graded response model needs at least "
            f"two {cols} judged, to tell a {cols[:-1]}'s discrimination from the abilities"
        )
    values = np.unique(rm.u[obs])
    if paired and np.array_equal(values, [0.0]):
        report.errors.append("every judgment is a tie: the data cannot tell any system apart")
    elif not paired and len(values) < 2:
        report.errors.append(
            f"every response has the same score ({values[0]:g}): the data cannot tell persons apart"
        )
    if paired and rm.n_votes[obs].max() <= 1:
        report.warnings.append(
            "every (comparison, prompt) cell holds a single judgment: agreement between annotators "
            "(Fleiss' kappa) cannot be measured"
        )
    return report


def check_design(rm: RatingMatrix) -> DesignReport:
    """Raise unless the rating matrix can support the graded response model.

    Parameters
    ----------
    rm : RatingMatrix

    Returns
    -------
    DesignReport
        The report (warnings only) when the design is usable.

    Raises
    ------
    DesignError
        With every error of :func:`design_report` joined by "; ".
    """
    report = design_report(rm)
    if not report.ok:
        raise DesignError("; ".join(report.errors))
    return report
