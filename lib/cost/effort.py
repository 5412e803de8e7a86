"""Human effort with and without the model (Casares et al. 2022, Sec. "Methodology" and Fig. 4).

Effort is time in seconds, summarised by medians because distracted participants leave heavy
outliers. With the model the paper splits the prompt time by its convention: the first instance a
participant does in a task carries devising plus wrapping the prompt, ``D_H + W_H``, later
instances wrapping only, ``W_H``. Hence ``W_H`` = median prompt time of later instances and
``D_H`` = median prompt time of first instances minus ``W_H``. ``U_H`` (unwrapping) and ``V_H``
(validating) are medians over all instances with the model, ``G_H`` (solving) over all instances
without it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from lib.cost.compare import compare_by_task
from lib.cost.study import Study

COMPONENTS = ("D_H", "W_H", "U_H", "V_H", "G_H")
COMPONENT_ROLE = {
    "D_H": "prompt_time_s",
    "W_H": "prompt_time_s",
    "U_H": "unwrap_time_s",
    "V_H": "validate_time_s",
    "G_H": "solve_time_s",
}
EFFORT_COLUMNS = ["task", "condition", "component", "median_s"]
EFFORT_TEST_COLUMNS = [
    "task",
    "n_with",
    "n_without",
    "median_total_with_s",
    "median_total_without_s",
    "shapiro_p_with",
    "shapiro_p_without",
    "test",
    "statistic",
    "p_value",
    "p_holm",
]


def first_instance(study: Study) -> pd.Series:
    """Rows that are a participant's first (smallest h) instance of a task in their condition.

    Returns
    -------
    pandas.Series of bool, aligned with ``study.data``
    """
    d = study.data
    return d.instance == d.groupby(["condition", "participant", "task"]).instance.transform("min")


def effort_medians(study: Study) -> tuple[pd.DataFrame, list[str]]:
    """Median of each effort component per task and condition, with the first-instance convention.

    Parameters
    ----------
    study : Study

    Returns
    -------
    table : pandas.DataFrame
        ``EFFORT_COLUMNS``, per task the with-model components ``D_H, W_H, U_H, V_H`` then the
        without-model ``G_H`` (only components whose time column the file has); ``median_s`` in
        seconds over the non-blank cells, NaN when there are none (``D_H``/``W_H`` are NaN for a
        task with a single instance: the two cannot be told apart).
    warnings : list of str
        Tasks where ``D_H`` came out negative (first prompts faster than later ones) and was set
        to 0, or where ``D_H``/``W_H`` cannot be separated.
    """
    d = study.data
    first = first_instance(study)
    warnings: list[str] = []
    records = []
    for task in study.tasks:
        w = d[(d.task == task) & d.with_model]
        wo = d[(d.task == task) & ~d.with_model]
        if "prompt_time_s" in study.measured:
            prompt_first = w.prompt_time_s[first[w.index]].dropna()
            prompt_later = w.prompt_time_s[~first[w.index]].dropna()
            wrap = float(prompt_later.median()) if len(prompt_later) else float("nan")
            devise = float(prompt_first.median()) - wrap if len(prompt_first) else float("nan")
            if np.isnan(wrap):
                warnings.append(
                    f"task '{task}': no prompt times after the first instance, so D_H and W_H cannot be separated"
                )
            elif devise < 0:
                warnings.append(
                    f"task '{task}': first-instance prompts (median {prompt_first.median():.1f} s) were faster than "
                    f"later ones (W_H = {wrap:.1f} s); D_H set to 0"
                )
                devise = 0.0
            records += [(task, study.with_label, "D_H", devise), (task, study.with_label, "W_H", wrap)]
        for comp in ("U_H", "V_H"):
            role = COMPONENT_ROLE[comp]
            if role in study.measured:
                records.append((task, study.with_label, comp, _median(w[role])))
        if "solve_time_s" in study.measured:
            records.append((task, study.without_label, "G_H", _median(wo.solve_time_s)))
    return pd.DataFrame(records, columns=EFFORT_COLUMNS), warnings


def _median(values: pd.Series) -> float:
    values = values.dropna()
    return float(values.median()) if len(values) else float("nan")


def effort_totals(study: Study) -> pd.DataFrame:
    """Total effort per row: prompt + unwrap + validate with the model, solve time without.

    Blank cells count as 0 s (a step that did not apply); rows with no time at all are left out.

    Returns
    -------
    pandas.DataFrame
        ``task, with_model, total_s``, one row per row of the study with a time.
    """
    d = study.data
    with_total = d[["prompt_time_s", "unwrap_time_s", "validate_time_s"]].sum(axis=1, min_count=1)
    total = np.where(d.with_model, with_total, d.solve_time_s)
    out = pd.DataFrame({"task": d.task, "with_model": d.with_model, "total_s": total})
    return out.dropna(subset=["total_s"]).reset_index(drop=True)


def effort_tests(study: Study) -> pd.DataFrame:
    """Per task, Mann-Whitney U on total effort with vs without the model, Holm-corrected (Fig. 4).

    Returns
    -------
    pandas.DataFrame
        ``EFFORT_TEST_COLUMNS``, one row per task; Shapiro-Wilk p-values of both groups are
        reported as in the paper's caption.
    """
    tests = compare_by_task(effort_totals(study), "total_s", study.tasks, mann_whitney_only=True)
    tests = tests.rename(columns={"median_with": "median_total_with_s", "median_without": "median_total_without_s"})
    return tests[EFFORT_TEST_COLUMNS]
