"""Small studies with known answers shared by the tests of lib/cost (Casares et al. 2022)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from lib.cost.schema import read_study
from lib.io.paths import DATA_DIR

HANNA = DATA_DIR / "hanna_means" / "mean_human_scores_long.csv"
EXAMPLE = DATA_DIR / "cost_example" / "study.csv"


def task_rows(task, with_s, without_s, n_inst=3, **times):
    """Rows of one task: participant k // n_inst does instances 1..n_inst in each condition."""
    out = []
    for cond, scores in (("gpt", with_s), ("human", without_s)):
        for k, s in enumerate(scores):
            row = dict(
                condition=cond, participant=f"{cond}{k // n_inst}", task=task, instance=k % n_inst + 1, usefulness=s
            )
            for role, (w_values, wo_values) in times.items():
                values = w_values if cond == "gpt" else wo_values
                row[role] = values[k] if values is not None else np.nan
            out.append(row)
    return out


def make_study(rows, **kw):
    return read_study(pd.DataFrame(rows), file="study.csv", **kw)


Z = stats.norm.ppf((np.arange(30) + 0.5) / 30)  # exactly normal-shaped samples


# Effort study: numeric has first prompts 130/150/170 and later prompts 10..60 (W_H = 35, D_H = 115);
# writing has first prompts faster than later ones (D_H clipped to 0).
NUMERIC = dict(
    prompt_time_s=([130, 10, 20, 150, 30, 40, 170, 50, 60], None),
    unwrap_time_s=([1, 2, 3, 4, 5, 6, 7, 8, 9], None),
    validate_time_s=([2, 4, 6, 8, 10, 12, 14, 16, 18], None),
    solve_time_s=(None, [100, 110, 120, 130, 140, 150, 160, 170, 180]),
)


WRITING = dict(
    prompt_time_s=([20, 40, 40, 20, 40, 40, 20, 40, 40], None),
    unwrap_time_s=([5] * 9, None),
    validate_time_s=([5] * 9, None),
    solve_time_s=(None, [300] * 9),
)


def base_table():
    return pd.DataFrame(task_rows("t", [3, 4, 5], [2, 3, 4], solve_time_s=(None, [5, 6, 7])))
