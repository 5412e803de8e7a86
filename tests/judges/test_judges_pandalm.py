"""PandaLM (issue 20, "Done when"): 15% of the items' human votes plus every judge verdict.

The repository copy of the data (data/pandalm_pairwise): three human votes on each of 999 items and
the verdicts of gpt-3.5-turbo (25 unusable) and PandaLM-7B. bench/bench_ppi_coverage.py repeats the
15% draw many times and prints how often every system is covered.
"""

from __future__ import annotations

import numpy as np
import pytest

from lib.inputs import analysis_input
from lib.io.paths import DATA_DIR
from lib.io.tables import read_csv
from lib.judges.read import read_judge_file
from lib.judges.run import judge_leaderboard, keep_share
from lib.judgments.datasets import DATASETS

JUDGES = DATA_DIR / "pandalm_pairwise" / "judge_votes_long.csv"

pytestmark = pytest.mark.validation  # a statistical check: deselected by -m 'not validation'


@pytest.fixture(scope="module")
def pandalm():
    ds = DATASETS["pandalm_pairwise"]
    humans = analysis_input(read_csv(ds.path, ds.path.name), ds.fmt, ds.columns, file=ds.path.name, matrix=False)
    judges = read_judge_file(read_csv(JUDGES, JUDGES.name), file=JUDGES.name)
    return humans.judgments.votes, judges


def test_judge_quality_on_pandalm(pandalm):
    result = judge_leaderboard(*pandalm)
    q = result.quality.table.set_index("judge")
    # the upstream verdicts against the human majority: 710 of 974 usable (71.07% of all 999, as PandaLM reports)
    assert q.loc["gpt-3.5-turbo", "n_items"] == 974
    assert q.loc["gpt-3.5-turbo", "agreement"] == pytest.approx(710 / 974)
    assert q.loc["pandalm-7b", "agreement"] == pytest.approx(675 / 999)
    assert 0.4 < q.loc["pandalm-7b", "kappa"] < q.loc["gpt-3.5-turbo", "kappa"] < 0.6
    assert result.diagnostics["unusable_verdicts"] == {"gpt-3.5-turbo": 25, "pandalm-7b": 0}
    assert any("25 of 999 verdicts are unusable" in note for note in result.notes)
    # every item has human votes: the judge adds nothing and the answer is the humans' own
    assert result.diagnostics["lambda"] == 0.0 and result.diagnostics["judge_only_items"] == 0
    np.testing.assert_allclose(result.leaderboard["ppi_skill"], result.leaderboard["human_skill"])


def test_fifteen_percent_of_human_votes_plus_judges(pandalm):
    votes, judges = pandalm
    everyone = judge_leaderboard(votes, judges).leaderboard.set_index("system")["human_skill"]
    result = judge_leaderboard(keep_share(votes, 0.15, seed=0), judges)
    board = result.leaderboard.set_index("system")
    truth = everyone.reindex(board.index)
    assert ((board["ppi_low"] <= truth) & (truth <= board["ppi_high"])).all()
    assert ((board["ppi_high"] - board["ppi_low"]) < (board["human_high"] - board["human_low"])).all()
    d = result.diagnostics
    assert d["labelled_items"] == 149 and d["judge_only_items"] == 850
    assert 0 < d["lambda"] < 1 and d["effective_human_n"] > 1.2 * d["human_votes"]
