"""The whole human-cost analysis of a study in one call, shared by the page and the command."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from lib.cost.correlation import spearman
from lib.cost.costs import Weights, cost_curve, cost_terms
from lib.cost.effort import effort_medians, effort_tests
from lib.cost.loss import loss_by_difficulty, loss_table, loss_tests
from lib.cost.study import Study

FILES = {
    "loss_table": "loss_table.csv",
    "loss_tests": "loss_tests.csv",
    "effort_medians": "effort_medians.csv",
    "effort_tests": "effort_tests.csv",
    "cost_terms": "cost_terms.csv",
    "cost_curve": "cost_curve.csv",
    "difficulty": "loss_by_difficulty.csv",
    "spearman": "spearman.csv",
}
"""The CSV file of each table of :class:`CostResults`: the command's outputs and the page's downloads."""


@dataclass
class CostResults:
    """Every table of the analysis (see the producing functions for their columns).

    Attributes
    ----------
    loss_table, loss_tests : pandas.DataFrame
        :func:`lib.cost.loss.loss_table` / :func:`lib.cost.loss.loss_tests` (Table 1).
    effort_medians, effort_tests : pandas.DataFrame
        :func:`lib.cost.effort.effort_medians` / :func:`lib.cost.effort.effort_tests` (Fig. 4).
    cost_terms, cost_curve : pandas.DataFrame
        :func:`lib.cost.costs.cost_terms` / :func:`lib.cost.costs.cost_curve` (Eqs. 2-3).
    difficulty : pandas.DataFrame
        :func:`lib.cost.loss.loss_by_difficulty` (Fig. 5).
    spearman : pandas.DataFrame
        :func:`lib.cost.correlation.spearman` over all tasks (Fig. 3).
    warnings : list of str
        From reading the study and estimating the efforts and costs.
    """

    loss_table: pd.DataFrame
    loss_tests: pd.DataFrame
    effort_medians: pd.DataFrame
    effort_tests: pd.DataFrame
    cost_terms: pd.DataFrame
    cost_curve: pd.DataFrame
    difficulty: pd.DataFrame
    spearman: pd.DataFrame
    warnings: list[str]

    def files(self) -> dict[str, pd.DataFrame]:
        """``{file name: table}`` for every table, in :data:`FILES` order."""
        return {name: getattr(self, table) for table, name in FILES.items()}


def analyse(
    study: Study,
    *,
    weights: Weights | None = None,
    n_max: int = 20,
    loss_source: str = "self",
    alpha: float = 0.05,
    validation_zero: bool = False,
) -> CostResults:
    """Run Table 1, Fig. 4, Eqs. 2-3, Fig. 5 and Fig. 3 of Casares et al. 2022 on a study.

    Parameters
    ----------
    study : Study
        From :func:`lib.cost.schema.read_study`.
    weights : Weights, optional
        alpha, beta, gamma, delta of Eqs. 2-3 (default all ``DEFAULT_WEIGHT`` = 0.01 per second).
    n_max : int
        Cost curves for n = 1..n_max instances.
    loss_source : {"self", "external"}
        Loss plotted against difficulty: L_H from the Likert scores or the external L_E.
    alpha : float
        Level of the pre-tests choosing the test of Table 1.
    validation_zero : bool
        Take the validation time ``V_H`` as 0 s where it was not measured (see
        :func:`lib.cost.costs.cost_terms`).

    Raises
    ------
    SettingsError
        ``n_max`` < 1; unknown ``loss_source``, or ``external`` without an ``external_loss`` column.
    """
    weights = weights or Weights()
    table = loss_table(study, alpha=alpha)
    medians, effort_warnings = effort_medians(study)
    terms, cost_warnings = cost_terms(
        table, medians, study.with_label, study.without_label, weights, validation_zero=validation_zero
    )
    return CostResults(
        loss_table=table,
        loss_tests=loss_tests(study, alpha=alpha),
        effort_medians=medians,
        effort_tests=effort_tests(study),
        cost_terms=terms,
        cost_curve=cost_curve(terms, n_max, weights),
        difficulty=loss_by_difficulty(study, source=loss_source),
        spearman=spearman(study),
        warnings=[*study.warnings, *effort_warnings, *cost_warnings],
    )
