"""AppTest of the Judges page: PandaLM's bundled judges, a share of the human votes, bad judge files, escaped names.

The judge file is given on the Data page (tests/app/test_judges_data_page.py goes through it); here it is
put in the session as the Data page keeps it."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

PAGE = "pages/judges.py"


PANDALM = "pandalm_pairwise"


@pytest.fixture
def at(new_session) -> AppTest:
    """A session of the app (the page links to other pages need its navigation), not yet run."""
    return new_session()


def on_judges(at: AppTest, dataset: str = PANDALM, judges: tuple[str, bytes] | None = None) -> AppTest:
    """The Judges page on a bundled data set's human votes, with this judge file (name, bytes) kept as the
    Data page keeps it."""
    from lib.judgments.datasets import DATASETS

    at.session_state["view_dataset"] = dataset
    if judges is not None:
        at.session_state["judge_file"] = (DATASETS[dataset].title, *judges)
    at.run()
    return at.switch_page(PAGE).run()


def frame(at: AppTest, column: str) -> pd.DataFrame:
    """The first table shown with this column."""
    return next(d.value for d in at.dataframe if column in d.value.columns)


def texts(at: AppTest) -> str:
    return " ".join(str(e.value) for kind in (at.markdown, at.caption, at.error, at.warning, at.info) for e in kind)


def test_pandalm_opens_on_a_share_of_the_human_votes_where_the_judges_pay(at):
    # every PandaLM item has human votes: at 100% the judges add nothing, so the page opens at the demo share
    from lib.judges.run import DEMO_SHARE

    on_judges(at)
    assert not at.exception and not at.error
    assert at.slider(key="judge_share").value == round(100 * DEMO_SHARE) == 15
    assert "judge\\_votes\\_long\\.csv** (bundled demo" in texts(at)
    assert "The human votes of 15% of the items are kept" in texts(at)
    metrics = {m.label: m.value for m in at.metric}
    assert float(metrics["Effective human sample size"]) > 447 and metrics["Items rated by the judges only"] == "850"
    assert 0 < float(metrics["lambda (PPI++ weight of the judges)"]) <= 1
    quality = frame(at, "kappa")
    assert quality["judge"].tolist() == ["gpt-3.5-turbo", "pandalm-7b"]
    assert {"ppi_weight", "effective_human_n_alone", "effective_human_n_without"} <= set(quality.columns)
    # PandaLM shows every pair in one order: no position bias, an empty cell and the reason, never "None"
    assert quality["position_bias"].isna().all()
    assert quality["position_bias_from"].str.startswith("not estimable").all()
    assert "None" not in quality.astype(str).to_numpy()
    board = frame(at, "ppi_rank")
    assert len(board) == 5 and (board["ppi_low"] < board["ppi_high"]).all()
    assert {"human_rank", "judge_rank", "ppi_rank", "rank_set_low", "rank_set_high"} <= set(board.columns)
    assert len(at.get("plotly_chart")) == 2
    assert {b.proto.label for b in at.get("download_button")} == {
        "leaderboard.csv",
        "judge_quality.csv",
        "diagnostics.json",
    }
    links = [link.proto for link in at.get("page_link")]
    assert [link.page for link in links] == ["planner"]  # what to buy next is the Study planner's
    assert not any("Cost of a" in n.label for n in at.number_input)


def test_pandalm_with_every_human_vote_says_the_judges_add_nothing(at):
    on_judges(at)
    at.slider(key="judge_share").set_value(100).run()
    assert not at.exception and not at.error
    assert "25 of 999 verdicts are unusable" in texts(at)
    assert "add no information" in texts(at)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["lambda (PPI++ weight of the judges)"] == "0.00"


def test_a_judge_file_on_other_items_gets_a_message_and_no_number(at):
    bad = "prompt,system_a,system_b,judge,choice\nnope,bloom-7b,opt-7b,m,A\n"
    on_judges(at, judges=("other.csv", bad.encode()))
    assert not at.exception
    assert any("Cannot use the judge file" in e.value and "no item is in the human votes" in e.value for e in at.error)
    assert not at.metric and not at.get("plotly_chart")


def test_judge_names_with_markdown_are_shown_as_text(at):
    votes = pd.read_csv(
        Path(__file__).resolve().parents[2] / "data" / "pandalm_pairwise" / "judge_votes_long.csv", dtype=str
    )
    votes = votes[votes["judge"] == "pandalm-7b"].assign(judge="**bold** [x](http://127.0.0.1:9/x)")
    on_judges(at, judges=("j.csv", votes.to_csv(index=False).encode()))
    assert not at.exception and not at.error
    captions = " ".join(c.value for c in at.caption)
    assert r"\*\*bold\*\*" in captions and "[x](http" not in captions
    assert r"j\.csv** (given on the Data page)" in texts(at)


def test_scores_without_votes_are_refused_with_a_reason(at):
    on_judges(at, "hanna_means")
    assert not at.exception
    assert any("an LLM judge is compared with pairwise human votes" in w.value for w in at.warning)


def test_the_app_serves_the_page_after_the_leaderboard(new_session):
    from ui.navigation import SECTIONS

    paths = [path for pages in SECTIONS.values() for path, _, _ in pages]
    assert paths.index("pages/judges.py") == paths.index("pages/leaderboard.py") + 1
    at = new_session().run()
    at.switch_page("pages/judges.py").run()
    assert not at.exception and at.title[0].value == "Judges"
    assert "No judge file" in texts(at)  # the default data (LAMP rankings) has no bundled judge file
    assert [link.proto.page for link in at.get("page_link")] == ["data"]
