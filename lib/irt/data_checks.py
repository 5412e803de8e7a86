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
from lib.irt.settings import default_cutpoints
from lib.judgments.ratings import RatingMatrix

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
    per cell everywhere, so annotator agreement (Fleiss' kappa) cannot be measured; or, for absolute
    ratings, how many scores each cell averages (``RatingMatrix.scores_averaged``) when it is more
    than one per system.

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
            f"{_names(empty)}" + ("; the two systems of each were never judged on the same prompt" if paired else "")
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
        report.errors.append(f"every response has the same score ({values[0]:g}): the data cannot tell persons apart")
    averaged = rm.scores_averaged[obs] if rm.scores_averaged is not None else np.zeros(0, np.int64)
    if paired and averaged.size and averaged.max() > 2:
        low, median, high = np.percentile(averaged, [0, 50, 100])
        spread = f"{median:g}" if low == high else f"{median:g} (median; {low:g} to {high:g})"
        report.warnings.append(
            f"each (comparison, prompt) cell averages {spread} scores (both systems' scores on the prompt): "
            "the mean score of each system, over every annotator and repeated row, is compared, so "
            "disagreement between annotators is averaged away (map an annotator column to tell annotators apart)"
        )
    elif paired and rm.n_votes[obs].max() <= 1:
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


def cells_per_prompt(rm: RatingMatrix) -> float:
    """Mean number of rated comparisons (observed cells) per prompt that has any, 0 for none."""
    per_prompt = (~np.isnan(rm.u)).sum(axis=0)
    return float(per_prompt[per_prompt > 0].mean()) if (per_prompt > 0).any() else 0.0


def thresholds_informed(rm: RatingMatrix) -> bool:
    """Whether the prompts have enough rated comparisons to inform thresholds of their own.

    Rule: with antisymmetric cutpoints each prompt has 1 + H parameters of its own (alpha and H =
    (K-1)/2 thresholds, K categories); they are informed only when the prompts hold on average more
    rated comparisons than that, ``cells_per_prompt(rm) > 1 + H``. Two systems give one comparison,
    so never: the thresholds then restate their N(0, 2) prior, which implies far more ties than
    votes show, and the model reads the missing ties as a large |theta|: with 40 prompts, one tie-free
    vote each and no true difference, 26.8% of studies "detect" one with per-prompt thresholds (P(B
    better) outside [0.025, 0.975]); with shared ones 8.07%, and 3.85% at the decision level the
    Abilities page states (:data:`lib.irt.settings.DECISION_LEVEL`; exact,
    ``tests/irt/test_irt_null_calibration.py``).
    """
    return informs_own_thresholds(cells_per_prompt(rm), len(rm.categories))


def informs_own_thresholds(cells_per_prompt: float, n_categories: int) -> bool:
    """The rule of :func:`thresholds_informed` on its two numbers: more rated comparisons per prompt than
    the prompt's own parameters under antisymmetric cutpoints (1 + (K-1)/2). The planner's ``grm_map``
    applies it to its simulated studies, so it analyses them as ``fit`` would."""
    return cells_per_prompt > 1 + (n_categories - 1) // 2


def auto_cutpoints(rm: RatingMatrix, fmt: str) -> str:
    """The cutpoints a fit of this data uses unless the user chooses: the format's default
    (:func:`lib.irt.settings.default_cutpoints`), except ``shared`` instead of ``antisymmetric`` when
    :func:`thresholds_informed` is False.

    Raises
    ------
    SettingsError
        Unknown format.
    """
    cutpoints = default_cutpoints(fmt)
    return "shared" if cutpoints == "antisymmetric" and not thresholds_informed(rm) else cutpoints


def cutpoints_note(rm: RatingMatrix, cutpoints: str) -> str | None:
    """What a fit with these cutpoints should say about its thresholds (None: nothing to say)."""
    per_prompt, own = cells_per_prompt(rm), 1 + (len(rm.categories) - 1) // 2
    if cutpoints == "shared":
        return (
            f"shared thresholds: one set of thresholds for all prompts, since the prompts hold "
            f"{per_prompt:.1f} rated comparisons on average, too few for their own {own} parameters "
            "(discrimination and thresholds)."
        )
    if cutpoints == "antisymmetric" and not thresholds_informed(rm):
        return (
            f"per-prompt thresholds that the data cannot inform ({per_prompt:.1f} rated comparisons per "
            f"prompt on average, {own} parameters each): their prior implies many ties, and missing "
            "ties then read as a clear difference (false detections); use shared cutpoints."
        )
    return None
