"""Loss of the answers with and without the model (Casares et al. 2022, Table 1 and Fig. 5).

Usefulness on a 1-5 Likert scale becomes loss ``L = 1 - (s - 1)/4``; the paper reports its mean
per task and condition (means, not medians, for Likert-derived quality), tests each task with the
Table 1 procedure and Holm-corrects across tasks. Fig. 5 shows loss against difficulty h.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from lib.cost.compare import COMPARE_COLUMNS, compare_by_task
from lib.cost.study import Study
from lib.errors import SettingsError

LOSS_TABLE_COLUMNS = ["task", "condition", "mean_loss", "n", "test", "p_value", "p_holm"]
LOSS_TEST_COLUMNS = [c for c in COMPARE_COLUMNS if not c.startswith("median_")]  # loss is summarised by its mean
DIFFICULTY_COLUMNS = ["task", "condition", "instance", "mean_loss", "n", "easiest", "loss_source"]
LOSS_SOURCES = {"self": "loss", "external": "external_loss"}  # L_H (from Likert), L_E


def likert_to_loss(s: np.ndarray | pd.Series | float) -> np.ndarray:
    """Loss from a 1-5 Likert usefulness score, ``L = 1 - (s - 1)/4`` (Casares et al. 2022).

    Parameters
    ----------
    s : array-like of float
        Usefulness in [1, 5] (NaN stays NaN).

    Returns
    -------
    numpy.ndarray of float
        Loss in [0, 1]: 1 for "not useful" (s = 1), 0 for "most useful" (s = 5).
    """
    return 1.0 - (np.asarray(s, dtype=float) - 1.0) / 4.0


def loss_tests(study: Study, *, alpha: float = 0.05) -> pd.DataFrame:
    """Per task, compare the self-assessed loss with and without the model (Table 1).

    Parameters
    ----------
    study : Study
    alpha : float
        Level of the Shapiro-Wilk / Levene pre-tests that choose between t-test and Mann-Whitney U.

    Returns
    -------
    pandas.DataFrame
        ``LOSS_TEST_COLUMNS``, one row per task in study order; ``p_holm`` is Holm-corrected over
        the tasks that have a test. Blank usefulness cells are left out (``n_*`` count the rest).
    """
    return compare_by_task(study.data.dropna(subset=["loss"]), "loss", study.tasks, alpha=alpha)[LOSS_TEST_COLUMNS]


def loss_table(study: Study, *, alpha: float = 0.05) -> pd.DataFrame:
    """Mean loss per task and condition with the test of Table 1.

    Returns
    -------
    pandas.DataFrame
        ``LOSS_TABLE_COLUMNS``: per task two rows (with the model first), ``mean_loss`` the mean
        of L over the rows with a usefulness score, ``n`` their number, and the task's ``test``,
        ``p_value`` and Holm-corrected ``p_holm`` repeated on both rows.
    """
    tests = loss_tests(study, alpha=alpha).set_index("task")
    d = study.data.dropna(subset=["loss"])
    records = []
    for task in study.tasks:
        for label, flag in ((study.with_label, True), (study.without_label, False)):
            loss = d.loss[(d.task == task) & (d.with_model == flag)]
            mean = float(loss.mean()) if len(loss) else float("nan")
            row = tests.loc[task]
            records.append((task, label, mean, len(loss), row.test, row.p_value, row.p_holm))
    return pd.DataFrame(records, columns=LOSS_TABLE_COLUMNS)


def loss_by_difficulty(study: Study, *, source: str = "self") -> pd.DataFrame:
    """Mean loss per task, condition and difficulty h (Fig. 5: the "understanding gap").

    Parameters
    ----------
    study : Study
    source : {"self", "external"}
        Self-assessed L_H (from the Likert scores) or the external L_E column.

    Returns
    -------
    pandas.DataFrame
        ``DIFFICULTY_COLUMNS`` sorted by task (study order), condition (with the model first) and
        instance; ``easiest`` marks the smallest h of the task, where a high loss points to the
        model not understanding the command rather than lacking capability.

    Raises
    ------
    SettingsError
        Unknown ``source``, or ``external`` for a study without an ``external_loss`` column.
    """
    if source not in LOSS_SOURCES:
        raise SettingsError(f"source must be one of {', '.join(LOSS_SOURCES)} (got '{source}')")
    col = LOSS_SOURCES[source]
    if source == "external" and col not in study.measured:
        raise SettingsError(
            "the external loss L_E needs an external_loss column; map one or use the self-assessed loss"
        )
    d = study.data.dropna(subset=[col])
    g = d.groupby(["task", "with_model", "instance"], sort=False)[col].agg(["mean", "size"]).reset_index()
    g["easiest"] = g.instance == g.task.map(study.data.groupby("task").instance.min())
    g["condition"] = np.where(g.with_model, study.with_label, study.without_label)
    g["task_order"] = g.task.map({t: i for i, t in enumerate(study.tasks)})
    g = g.sort_values(["task_order", "with_model", "instance"], ascending=[True, False, True])
    g = g.rename(columns={"mean": "mean_loss", "size": "n"})
    g["loss_source"] = source
    return g[DIFFICULTY_COLUMNS].reset_index(drop=True)
