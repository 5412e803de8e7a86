"""A validated with/without-model study (Casares et al. 2022, Fig. 2), as every cost analysis
takes it; :func:`lib.cost.schema.read_study` builds it from the user's table."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

WITH_TIMES = ("prompt_time_s", "unwrap_time_s", "validate_time_s")  # D_H + W_H, U_H, V_H
WITHOUT_TIMES = ("solve_time_s",)  # G_H
TIMES = WITH_TIMES + WITHOUT_TIMES
# Columns of Study.data besides the covariates.
CANONICAL = (
    "row",
    "condition",
    "with_model",
    "participant",
    "task",
    "instance",
    "usefulness",
    "loss",
    *TIMES,
    "external_loss",
)


@dataclass
class Study:
    """A validated with/without-model study in canonical columns.

    Attributes
    ----------
    data : pandas.DataFrame
        One row per row of the file, in file order, with columns ``row`` (int, 1-based data row of
        the file), ``condition`` (str), ``with_model`` (bool), ``participant`` (str), ``task`` (str),
        ``instance`` (int >= 1), ``usefulness`` (float in [1, 5] or NaN), ``loss`` (float
        L_H = 1 - (s - 1)/4, NaN where s is), the four times in seconds ``TIMES`` (float >= 0 or
        NaN), ``external_loss`` (float in [0, 1] or NaN) and one float column per covariate (text
        covariates coded 0, 1, ... in their order).
    with_label, without_label : str
        The two condition labels.
    tasks : list of str
        Tasks in order of first appearance.
    covariates : list of str
        Covariate columns (the file's names) in ``data``.
    measured : list of str
        Optional roles that have a column in the file.
    file : str
        Name of the file, for messages.
    warnings : list of str
        Things a researcher should know that do not stop the analysis.
    """

    data: pd.DataFrame
    with_label: str
    without_label: str
    tasks: list[str]
    covariates: list[str]
    measured: list[str]
    file: str
    warnings: list[str] = field(default_factory=list)
