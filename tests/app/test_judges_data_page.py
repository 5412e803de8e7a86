"""AppTest of LLM-judge votes given on the Data page (issue 20 item 1) and of the Study planner's "With an LLM
judge" section (item 5): the file is read and checked beside the human votes, kept in the session with them,
and used by the Judges page and the planner; a bad file gets a message naming file, row and column, and no
number anywhere."""

from __future__ import annotations

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from lib.io.paths import DATA_DIR

PANDALM = "pandalm_pairwise"
JUDGES_CSV = DATA_DIR / PANDALM / "judge_votes_long.csv"


def pandalm_7b() -> pd.DataFrame:
    """PandaLM-7B's 999 verdicts on PandaLM's items (one order each)."""
    votes = pd.read_csv(JUDGES_CSV, dtype=str, keep_default_na=False)
    return votes[votes["judge"] == "pandalm-7b"].reset_index(drop=True)


def give_judges(at: AppTest, name: str, table: pd.DataFrame) -> AppTest:
    """Upload a judge file in the Data page's optional uploader."""
    uploader = next(u for u in at.get("file_uploader") if u.proto.label.startswith("LLM-judge votes"))
    uploader.set_value((name, table.to_csv(index=False).encode(), "text/csv"))
    return at.run()


def texts(at: AppTest) -> str:
    kinds = (at.markdown, at.caption, at.error, at.warning, at.info)
    return " ".join(str(e.value) for kind in kinds for e in kind)


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def frame(at: AppTest, column: str) -> pd.DataFrame:
    """The first table shown with this column."""
    return next(d.value for d in at.dataframe if column in d.value.columns)


def on_pandalm(at: AppTest) -> AppTest:
    at.radio(key="dataset").set_value(PANDALM).run()
    assert not at.exception and not at.error
    return at


def test_a_judge_file_given_beside_the_human_votes_reaches_the_judges_page_and_the_planner(at):
    on_pandalm(at)
    assert "The bundled judges" in texts(at) and metrics(at)["judges"] == "2"  # the demo before any file
    mine = pandalm_7b()
    mine.loc[[0, 4, 9], "choice"] = ""  # unusable verdicts: data rows 1, 5 and 10 of the file
    give_judges(at, "mine.csv", mine)
    assert not at.exception and not at.error
    m = metrics(at)
    assert (m["judges"], m["usable verdicts"], m["unusable verdicts"]) == ("1", "996", "3")
    assert m["items with humans and the judge"] == "996"
    assert any("3 of 999 verdicts are unusable" in i.value and "rows 1, 5, 10 of mine" in i.value for i in at.info)
    assert at.session_state["judge_file"][1] == "mine.csv"

    at.switch_page("pages/judges.py").run()
    assert not at.exception and not at.error
    assert r"mine\.csv** (given on the Data page)" in texts(at)
    assert frame(at, "kappa")["judge"].tolist() == ["pandalm-7b"]

    at.switch_page("pages/planner.py").run()
    assert not at.exception and not at.error
    assert [e.label for e in at.expander] == ["With an LLM judge: how many human votes and judge verdicts to buy"]
    assert "**pandalm\\-7b** agrees with the human majority on" in texts(at)
    plan = frame(at, "judge_only_items")
    assert plan["design"].tolist() == ["humans only", "humans + judge (PPI++)"]
    assert plan["cost"].iloc[1] < plan["cost"].iloc[0]  # cheap verdicts that agree with the humans save money
    systems = frame(at, "ppi_corr")
    assert len(systems) == 5 and (systems["ppi_corr"] > 0).all()  # a judge better than chance helps every system
    at.number_input(key="planner_judge_cost_judge").set_value(10.0).run()  # verdicts dearer than votes
    assert frame(at, "judge_only_items")["judge_only_items"].iloc[1] == 0

    at.switch_page("pages/data.py").run()  # the uploader forgot the file, the session did not
    assert r"Using mine\.csv" in texts(at) and metrics(at)["judges"] == "1"
    at.button(key="data_judge_forget").click().run()
    assert not at.exception and at.session_state["judge_file"] is None
    assert "The bundled judges" in texts(at) and metrics(at)["judges"] == "2"


def test_a_judge_file_is_kept_when_the_click_on_another_page_comes_before_the_data_page_kept_it(at):
    """The uploader's new file and the click on Judges reach the server in one rerun: the Data page does not
    run, and the Judges page keeps and uses the file."""
    on_pandalm(at)
    uploader = next(u for u in at.get("file_uploader") if u.proto.label.startswith("LLM-judge votes"))
    uploader.set_value(("mine.csv", pandalm_7b().to_csv(index=False).encode(), "text/csv"))
    at.switch_page("pages/judges.py").run()
    assert not at.exception and not at.error
    assert r"mine\.csv** (given on the Data page)" in texts(at)
    assert frame(at, "kappa")["judge"].tolist() == ["pandalm-7b"]
    assert at.session_state["judge_file"][1] == "mine.csv"


def test_an_uploaded_human_file_with_a_judge_on_every_item_gains_from_it(at):
    """A study that bought human votes on a seventh of PandaLM's items, and judge verdicts on all of them."""
    humans = pd.read_csv(DATA_DIR / PANDALM / "pairwise_long.csv", dtype=str)
    humans = humans[humans["item_id"].astype(int) % 7 == 0]
    at.radio(key="dataset").set_value("upload").run()
    at.file_uploader(key="data_upload").set_value(("humans.csv", humans.to_csv(index=False).encode(), "text/csv"))
    at.run()
    assert at.selectbox(key="up_format").value == "pairwise"
    give_judges(at, "judges.csv", pd.read_csv(JUDGES_CSV, dtype=str, keep_default_na=False))
    assert not at.exception and not at.error
    m = metrics(at)
    assert (m["items with humans and the judge"], m["items with the judge only"]) == ("143", "856")
    at.switch_page("pages/judges.py").run()
    assert not at.exception and not at.error
    m = metrics(at)
    assert float(m["lambda (PPI++ weight of the judges)"]) > 0
    assert float(m["Effective human sample size"]) > len(humans)  # the judge's verdicts are worth human votes


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (lambda t: t.assign(choice=t["choice"].where(t.index != 6, "maybe")), "row 7, column 'choice'"),
        (lambda t: t.assign(choice=""), "every verdict is unusable"),
        (lambda t: t.assign(item_id="other " + t["item_id"]), "no item is in the human votes"),
        (lambda t: t.assign(system_b=t["system_b"].where(t.index != 2, "gpt-9")), "'gpt-9' are not in the human"),
    ],
    ids=["unknown choice", "every verdict unusable", "no overlap", "unknown system"],
)
def test_a_bad_judge_file_gets_a_message_and_no_number(at, change, said):
    on_pandalm(at)
    give_judges(at, "bad.csv", change(pandalm_7b()))
    assert not at.exception
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "Cannot use the judge file: bad\\.csv" in errors[0]
    assert said in errors[0].replace("\\", "")
    assert "judges" not in metrics(at) and not at.get("page_link")


def test_a_bad_judge_file_gives_no_number_on_the_judges_page_or_the_planner(at):
    on_pandalm(at)
    give_judges(at, "bad.csv", pandalm_7b().assign(choice=""))
    at.switch_page("pages/judges.py").run()
    assert not at.exception and any("every verdict is unusable" in e.value for e in at.error)
    assert not at.metric and not at.dataframe
    at.switch_page("pages/planner.py").run()
    assert not at.exception
    assert any("every verdict is unusable" in e.value and "Data page" in e.value for e in at.error)
    assert not any("judge_only_items" in d.value.columns for d in at.dataframe)


def test_the_judge_file_belongs_to_its_human_votes(at):
    on_pandalm(at)
    give_judges(at, "mine.csv", pandalm_7b())
    at.radio(key="dataset").set_value("lamp_rankings").run()  # rankings: votes on pairs, judges allowed
    assert not at.exception and not at.error
    assert "None given" in texts(at) and "judges" not in metrics(at)
    at.switch_page("pages/judges.py").run()
    assert "No judge file" in texts(at) and [link.proto.page for link in at.get("page_link")] == ["data"]
    at.switch_page("pages/planner.py").run()
    assert not at.exception and not at.expander  # no judge: the planner as it was
    at.switch_page("pages/data.py").run()
    on_pandalm(at)
    assert r"Using mine\.csv" in texts(at) and metrics(at)["judges"] == "1"


def test_scores_cannot_have_judges_and_the_page_says_why(at):
    at.radio(key="dataset").set_value("hanna_means").run()
    assert not at.exception
    assert "an LLM judge is compared with pairwise human votes" in texts(at)
    assert not any(u.proto.label.startswith("LLM-judge votes") for u in at.get("file_uploader"))


def test_arena_files_as_they_are_on_the_data_judges_and_planner_pages(at):
    """Issue 34: an arena's votes (no annotator column, sides randomised, a conversation voted twice) and its three
    judges' verdicts (one per vote, so two on a conversation voted twice), uploaded as they are."""
    import numpy as np

    from lib.judges.simulate import simulate_arena

    humans, verdicts, _ = simulate_arena(np.random.default_rng(5), n_systems=5, n_votes=2000, n_twice=3)
    kept = humans.iloc[::8]  # the human votes of an eighth of the conversations were bought
    at.radio(key="dataset").set_value("upload").run()
    at.file_uploader(key="data_upload").set_value(("arena.csv", kept.to_csv(index=False).encode(), "text/csv")).run()
    assert not at.exception and not at.error
    assert at.selectbox(key="up_format").value == "pairwise"
    assert metrics(at)["annotators"] == "anonymous" and "annotator effects cannot be estimated" in texts(at)
    give_judges(at, "arena_judges.csv", verdicts)
    assert not at.exception and not at.error
    assert metrics(at)["judges"] == "3" and "3 verdicts repeat" in texts(at)

    at.switch_page("pages/judges.py").run()
    assert not at.exception and not at.error
    assert at.slider(key="judge_share").value == 100  # judge-only items already: every human vote is used
    quality = frame(at, "kappa").set_index("judge")
    assert (quality["position_bias_from"] == "randomised sides").all()
    assert float(quality.loc["judge-first", "position_bias"]) > 0.3  # answers "first" unread in 72%
    assert not quality.isna().any().any()

    at.switch_page("pages/planner.py").run()
    assert not at.exception and not at.error
    at.radio(key="planner_judge_target_kind").set_value("power").run()
    assert not at.exception and not at.error
    plan = frame(at, "judge_only_items")
    assert all(
        float(v).is_integer()
        for v in plan[["human_items", "judge_only_items", "human_votes", "judge_verdicts"]].to_numpy().ravel()
    )
    assert len(frame(at, "ppi_corr")) == 10  # every pair of 5 systems
    worth = frame(at, "effective_human_n").set_index("judges")
    assert list(worth.index) == ["all judges", "judge-first", "judge-good", "judge-noisy"]
    assert worth.loc["all judges", "effective_human_n"] >= worth["effective_human_n"].max() - 1e-6
