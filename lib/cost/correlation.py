"""Spearman correlations between participant covariates and effort / loss terms (Fig. 3 of
Casares et al. 2022).

Times are far from normal, so the paper uses Spearman's rank correlation. Each participant gets
one value per term, averaged over tasks: per task the median time of each step (``D_H`` = first
prompt time minus the median of their later ones, as in :mod:`lib.cost.effort`) and the mean loss.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from lib.cost.effort import COMPONENT_ROLE, first_instance
from lib.cost.study import Study

SPEARMAN_COLUMNS = ["var_x", "var_y", "rho", "p_value", "n"]
TERMS = ("L_H", "L_E", "D_H", "W_H", "U_H", "V_H", "G_H")


def participant_terms(study: Study, task: str | None = None) -> pd.DataFrame:
    """One row per participant: covariates, then effort and loss terms averaged over tasks.

    Parameters
    ----------
    study : Study
    task : str, optional
        Only this task (default: all tasks, averaged).

    Returns
    -------
    pandas.DataFrame
        Index ``participant``; columns the covariates then those of ``TERMS`` that the study
        measured (float, NaN where a participant has no value, e.g. ``G_H`` with the model).
    """
    d = study.data.assign(first=first_instance(study))
    if task is not None:
        d = d[d.task == task]
    prompt_later = d.prompt_time_s.where(~d["first"])
    d = d.assign(
        L_H=d.loss,
        L_E=d.external_loss,
        W_H=prompt_later,
        first_prompt=d.prompt_time_s.where(d["first"]),
        U_H=d.unwrap_time_s,
        V_H=d.validate_time_s,
        G_H=d.solve_time_s,
    )
    g = d.groupby(["participant", "task"], sort=False)
    per_task = pd.DataFrame(
        {
            "L_H": g.L_H.mean(),
            "L_E": g.L_E.mean(),
            "W_H": g.W_H.median(),
            "D_H": g.first_prompt.median() - g.W_H.median(),
            "U_H": g.U_H.median(),
            "V_H": g.V_H.median(),
            "G_H": g.G_H.median(),
        }
    )
    terms = per_task.groupby(level="participant", sort=False).mean()
    roles = {"L_E": "external_loss", **COMPONENT_ROLE}
    keep = [t for t in TERMS if t not in roles or roles[t] in study.measured]
    covariates = study.data.groupby("participant", sort=False)[study.covariates].first()
    return covariates.join(terms[keep], how="right")


def spearman(study: Study, task: str | None = None) -> pd.DataFrame:
    """Spearman correlation with p-value for every pair of participant variables (Fig. 3).

    Each pair uses the participants that have both values (e.g. covariates with ``G_H`` use the
    group without the model); pairs with fewer than 3 such participants, or a constant variable,
    have NaN rho and p.

    Parameters
    ----------
    study : Study
    task : str, optional
        Only this task (default: all tasks, each participant's terms averaged over them as in Fig. 3).

    Returns
    -------
    pandas.DataFrame
        ``SPEARMAN_COLUMNS`` (``scipy.stats.spearmanr``, two-sided), every ordered pair of the
        variables of :func:`participant_terms` including the diagonal, in that order.
    """
    terms = participant_terms(study, task)
    names = list(terms.columns)
    records = []
    for x in names:
        for y in names:
            both = terms[[x, y]].dropna() if x != y else terms[[x]].dropna()
            a, b = both.iloc[:, 0].to_numpy(), both.iloc[:, -1].to_numpy()
            if len(a) < 3 or np.ptp(a) == 0 or np.ptp(b) == 0:
                rho, p = np.nan, np.nan
            else:
                res = stats.spearmanr(a, b)
                rho, p = float(res.statistic), float(res.pvalue)
            records.append((x, y, rho, p, len(a)))
    return pd.DataFrame(records, columns=SPEARMAN_COLUMNS)
