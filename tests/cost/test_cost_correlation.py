"""lib.cost.correlation: Spearman correlations of participant terms (Fig. 3)."""

from __future__ import annotations

import numpy as np
import pytest
from cost_studies import make_study
from scipy import stats

from lib.cost.correlation import participant_terms, spearman


def test_spearman_matches_scipy_per_participant():
    rows = []
    for k in range(6):
        for cond in ("gpt", "human"):
            for h in (1, 2):
                rows.append(
                    dict(
                        condition=cond,
                        participant=f"{cond}{k}",
                        task="t",
                        instance=h,
                        usefulness=1 + (k * 7 + h) % 5,
                        age=20 + 3 * k + (cond == "human"),
                        english=["B1", "B2", "C1", "C2", "B2", "C1"][k],
                        solve_time_s=np.nan if cond == "gpt" else 10.0 + ((k * 5) % 6) + h,
                    )
                )
    study = make_study(rows)
    assert study.covariates == ["age", "english"]  # numeric and CEFR levels guessed
    terms = participant_terms(study)
    sp = spearman(study).set_index(["var_x", "var_y"])
    human = terms.loc[[f"human{k}" for k in range(6)]]
    expected = stats.spearmanr(human.age, human.G_H)
    assert sp.loc[("age", "G_H"), "rho"] == pytest.approx(expected.statistic)
    assert sp.loc[("age", "G_H"), "p_value"] == pytest.approx(expected.pvalue)
    assert sp.loc[("age", "G_H"), "n"] == 6
    assert terms.loc[["gpt0", "gpt1", "gpt2", "gpt3"], "english"].tolist() == [2.0, 3.0, 4.0, 5.0]  # A1 = 0 .. C2 = 5
    assert list(sp.reset_index().columns) == ["var_x", "var_y", "rho", "p_value", "n"]
