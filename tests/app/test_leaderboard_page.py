"""AppTest of the Leaderboard page: opens on HANNA, every bundled data set, uploads, escaped names.

The page script runs on its own (it reads the Data page's choice from session state); Laplace fits
take seconds.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from lib.inputs import analysis_input
from lib.judgments.datasets import DATASETS, DEFAULT_DATASET
from lib.ranking.fit import DEFAULT_SAMPLER, rank_settings
from lib.ranking.leaderboard import P_BEST_HELP
from lib.ranking.marginal import NODES, NOTE
from ui.text import escape_markdown

SIDE_BY_SIDE = ["system", "skill_mean", "skill_low", "skill_high", "p_best", "bt_rating"]
"""The columns of the page's leaderboards without and with style control (``pages/leaderboard.py``)."""

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "leaderboard.py")


@pytest.fixture
def at(monkeypatch, tmp_path):
    monkeypatch.setenv("EVAL_CACHE_DIR", str(tmp_path))
    return AppTest.from_file(PAGE, default_timeout=180)


def table(at: AppTest) -> pd.DataFrame:
    return next(d.value for d in at.dataframe if "skill_mean" in d.value.columns)


def test_page_opens_on_hanna_with_table_and_plots(at):
    at.run()
    assert not at.exception and not at.error
    assert at.radio(key="lb_source").value == "hanna_means"
    board = table(at)
    assert len(board) == 11 and board["p_best"].sum() == pytest.approx(1.0)
    assert board["bt_rating"].isna().all()  # shown empty; ratings: no votes for Bradley–Terry, and the page says so
    infos = " ".join(i.value for i in at.info)
    assert "Bradley–Terry baseline needs pairwise votes" in infos
    assert "What to annotate next scores pairwise judgments" in infos
    assert "Null calibration of the ratings likelihood" in infos  # its null calibration (issue 16), on the page too
    assert "Annotator severity is not modelled" in infos  # HANNA's means name no annotator (issue 30)
    assert at.radio(key="lb_annotators").options[0] == "auto (off for these scores)"
    lb = next(d for d in at.dataframe if "skill_mean" in d.value.columns)
    assert json.loads(lb.proto.columns)["p_best"]["help"] == P_BEST_HELP  # P(best) is not robustness
    assert any("every prompt has the same discrimination" in w.value for w in at.warning)  # HANNA's means
    assert len(at.get("plotly_chart")) == 3  # forest, ranks, heatmap; no BT panel without votes
    assert at.selectbox(key="lb_sampler").value == DEFAULT_SAMPLER  # one default, stated with the result
    assert any(f"the default sampler: {DEFAULT_SAMPLER}" in c.value for c in at.caption)


def test_page_offers_the_rank_commands_defaults(at):
    """The page's settings are the command's when nothing is chosen (lib.ranking.fit.rank_settings), and the
    sizes follow the sampler the fit runs: MAP + Laplace and its draws, then the NUTS it falls back to."""

    def sizes() -> list:
        return [at.number_input(key=k).value for k in ("lb_chains", "lb_draws", "lb_tune", "lb_target")]

    def expected(settings) -> list:
        return [settings.chains, settings.draws, settings.tune, settings.target_ess or 0]

    at.run()
    defaults = rank_settings()
    assert at.selectbox(key="lb_sampler").value == defaults.sampler and sizes() == expected(defaults)
    at.checkbox(key="lb_intransitivity").check().run()  # Laplace falls back to numpyro: to the target ESS
    assert sizes() == expected(rank_settings(intransitivity=True))
    at.checkbox(key="lb_intransitivity").uncheck().run()
    assert sizes() == expected(defaults)


@pytest.mark.parametrize("key", list(DATASETS))
def test_page_works_on_every_bundled_data_set(at, key):
    at.session_state["view_dataset"] = key
    at.run()
    if key == DEFAULT_DATASET:  # the page opens on HANNA instead (test above); rank the default itself
        at.radio(key="lb_source").set_value(key).run()
    assert not at.exception
    if DATASETS[key].fmt == "responses":
        assert any("no systems to rank" in e.value for e in at.error)
        return
    assert not at.error
    data = at.session_state["analysis_input"]
    assert set(table(at)["system"]) == set(data.matrix.comparisons[["system_a", "system_b"]].stack())
    if data.judgments is not None:  # votes: Bradley–Terry beside IRT, and what to annotate next
        assert table(at)["bt_rating"].notna().all() and len(at.get("plotly_chart")) == 4
        route = escape_markdown(NOTE.format(nodes=NODES))  # alpha_j by quadrature: said with the method, not warned
        assert any(route in c.value for c in at.caption) and not any(route in w.value for w in at.warning)
        nxt = [d.value for d in at.dataframe if "prompt_id" in d.value.columns]
        if nxt:  # texts follow the four columns when the data set has them (prompt, both responses)
            assert list(nxt[0].columns[:4]) == ["system_a", "system_b", "prompt_id", "score"]
            assert 0 < len(nxt[0]) <= 20 and (nxt[0]["score"] > 0).all()
        else:  # a settled ranking says so instead of rows of zeros (LAMP's three conditions)
            assert any("The ranking is settled" in i.value for i in at.info)


def test_page_ranks_an_upload_and_escapes_its_system_names(at):
    rows = [
        {"prompt": f"q{p}", "system_a": a, "system_b": b, "annotator": f"r{r}", "choice": "B" if (p + r) % 3 else "A"}
        for p in range(8)
        for r in range(3)
        for a, b in [("*star*", "[x](http://e.com)"), ("*star*", "plain"), ("[x](http://e.com)", "plain")]
    ]
    data = analysis_input(pd.DataFrame(rows), "pairwise", file="<b>t</b>.csv", merge_redundant=False)
    at.session_state["view_dataset"] = "upload"
    at.session_state["analysis_input"] = data
    at.run()
    assert not at.exception and not at.error
    assert set(table(at)["system"]) == {"*star*", "[x](http://e.com)", "plain"}
    shown = " ".join(m.value for m in at.markdown)
    assert "\\<b\\>t\\</b\\>\\.csv" in shown and "<b>t</b>" not in shown
    assert at.selectbox(key="lb_baseline").options[1:] == ["*star*", "[x](http://e.com)", "plain"]


def test_page_reports_an_impossible_likelihood_as_an_error_without_a_traceback(at):
    at.run()
    at.selectbox(key="lb_likelihood").set_value("votes").run()
    assert not at.exception
    assert any("votes likelihood needs pairwise votes" in e.value for e in at.error)


def test_nuts_waits_for_the_button(at):
    at.run()
    at.selectbox(key="lb_sampler").set_value("numpyro").run()
    assert not at.exception and not at.error
    assert any("Press" in i.value for i in at.info)


def test_page_estimates_the_position_bias_when_the_votes_say_what_was_shown_first(at):
    from lib.ranking.simulate import simulate_arena

    votes, _ = simulate_arena(5, 30, 500, position_bias=1.0, seed=3)
    table = pd.DataFrame(
        {
            "prompt": votes["prompt_id"],
            "system_a": votes["system_a"],
            "system_b": votes["system_b"],
            "annotator": votes["annotator_id"],
            "choice": votes["winner"],
            "left": votes["first"],
        }
    )
    at.session_state["view_dataset"] = "upload"
    at.session_state["analysis_input"] = analysis_input(
        table, "pairwise", {"position": "left"}, file="arena.csv", merge_redundant=False
    )
    at.run()
    assert not at.exception and not at.error
    assert at.checkbox(key="lb_position").value
    gamma = next(d.value for d in at.dataframe if "parameter" in d.value.columns).iloc[0]
    assert 0 < gamma["low"] < gamma["mean"] < gamma["high"] < 2.0  # the planted gamma = 1 reaches the model
    at.checkbox(key="lb_position").uncheck().run()
    assert any("Position bias: not estimated" in c.value for c in at.caption)


def test_page_runs_the_active_vs_uniform_simulation(at):
    at.session_state["view_dataset"] = "science_mirt"  # no leaderboard (no systems): the simulation still runs
    at.run()
    at.button(key="lb_sim").click().run()
    assert not at.exception
    metrics = {m.label: m.value for m in at.metric}
    assert int(metrics["votes needed: active"]) < int(metrics["votes needed: uniform"])  # seed 0: 1130 < 1430


def test_annotator_severity_is_on_by_default_for_ratings_whose_annotators_link_the_systems(at):
    from lib.ranking.simulate import simulate_ratings

    scores, truth = simulate_ratings(4, 10, 5, raters_per_cell=2, seed=4)
    table = scores.rename(columns={"prompt_id": "prompt", "annotator_id": "annotator"})
    at.session_state["view_dataset"] = "upload"
    at.session_state["analysis_input"] = analysis_input(table, "ratings", file="scores.csv", merge_redundant=False)
    for key, value in {"lb_chains": 2, "lb_draws": 200, "lb_tune": 200}.items():  # short chains keep it quick
        at.session_state[key] = value
    at.run()
    assert not at.exception and not at.error
    switch = at.radio(key="lb_annotators")  # the default, auto, says what it decided for these scores
    assert switch.value == "auto" and not switch.disabled
    assert "auto (on for these scores)" in switch.options and "link all 4 systems" in switch.help
    # Laplace falls back to NUTS for the severities, which waits for the button
    assert any("Press **Rank**" in i.value and "not trustworthy" in i.value for i in at.info)
    at.button(key="lb_rank").click().run()
    assert not at.exception and not at.error
    assert any("Annotator severity is modelled" in i.value for i in at.info)  # said with the result
    severity = next(d.value for d in at.dataframe if "severity_mean" in d.value.columns)
    assert list(severity.columns) == ["annotator_id", "severity_mean", "severity_low", "severity_high", "n_scores"]
    assert sorted(severity["annotator_id"]) == truth["annotators"]
    assert any("sigma_zeta =" in c.value for c in at.caption)  # NUTS reports the severities' scale
    assert any("fitted with NUTS" in w.value for w in at.warning)


def test_unpaired_ratings_uploaded_on_the_data_page_reach_the_leaderboard(new_session):
    from lib.ranking.simulate import simulate_ratings

    scores, truth = simulate_ratings(4, 40, 6, raters_per_cell=2, unpaired=True, seed=1)  # one system per prompt
    text = scores.rename(columns={"prompt_id": "prompt", "annotator_id": "annotator"}).to_csv(index=False)
    at = new_session().run()
    at.radio(key="dataset").set_value("upload").run()
    at.file_uploader(key="data_upload").set_value(("dialogs.csv", text.encode(), "text/csv")).run()
    assert at.selectbox(key="up_format").value == "ratings"
    assert any("no prompt was rated for two systems" in e.value and "Leaderboard" in e.value for e in at.error)
    at.switch_page("pages/abilities.py").run()  # a paired page says why it cannot, and links to the one that can
    assert not at.exception
    said = " ".join(m.value for m in [*at.warning, *at.error, *at.info])
    assert "unpaired ratings" in said and "Leaderboard ranks" in said and "could not be used" not in said
    link = at.get("page_link")[0].proto
    assert link.page == "leaderboard" and "Leaderboard" in link.label
    at.switch_page("pages/leaderboard.py").run()
    assert not at.exception and not at.error
    # the 6 annotators rated dialogs of every system: their severities are modelled (NUTS, on the button)
    assert (
        at.radio(key="lb_annotators").value == "auto"
        and "auto (on for these scores)" in at.radio(key="lb_annotators").options
    )
    for key, value in {"lb_chains": 2, "lb_draws": 200, "lb_tune": 200}.items():  # short chains keep it quick
        at.session_state[key] = value
    at.button(key="lb_rank").click().run()
    assert not at.exception and not at.error
    board = table(at)
    assert sorted(board["system"]) == truth["systems"] and board["p_best"].sum() == pytest.approx(1.0)
    assert "ratings likelihood" in " ".join(c.value for c in at.caption)
    assert not any("could not be used" in w.value for w in at.warning)


def test_target_ess_is_offered_when_the_fit_samples_with_nuts_and_the_fit_stops_at_it(at):
    from lib.ranking.simulate import simulate_arena

    votes, _ = simulate_arena(5, 30, 300, seed=3)
    columns = {"prompt_id": "prompt", "annotator_id": "annotator", "winner": "choice"}
    at.session_state["view_dataset"] = "upload"
    at.session_state["analysis_input"] = analysis_input(
        votes.rename(columns=columns), "pairwise", file="arena.csv", merge_redundant=False
    )
    at.session_state["lb_sampler"] = "pymc"  # NUTS waits for the button: nothing is fitted until then
    at.run()
    assert not at.exception and not at.error
    assert at.number_input(key="lb_target").disabled  # PyMC's NUTS draws a fixed number
    at.selectbox(key="lb_sampler").set_value("laplace")
    at.checkbox(key="lb_intransitivity").check().run()  # MAP + Laplace falls back to numpyro, which takes one
    assert any("not trustworthy" in i.value for i in at.info) and not at.number_input(key="lb_target").disabled
    at.checkbox(key="lb_intransitivity").uncheck()
    at.selectbox(key="lb_sampler").set_value("numpyro").run()  # its sizes fill in: then the user's own
    for key, value in {"lb_chains": 2, "lb_draws": 800, "lb_tune": 200, "lb_target": 100}.items():
        at.number_input(key=key).set_value(value)
    at.run()
    assert any("Press" in i.value for i in at.info)  # NUTS waits for the button
    at.button(key="lb_rank").click().run()
    assert not at.exception and not at.error
    caption = next(c.value for c in at.caption if "chains x" in c.value)
    assert "numpyro, 2 chains x" in caption and "sampled to the target ESS 100 (the target was reached)" in caption
    assert table(at)["p_best"].sum() == pytest.approx(1.0)


def rome_pilot() -> pd.DataFrame:
    """A 20-page pilot of the Studies page's demo (seed 001's ROME study, best-worst): 10 facts, each judged by
    two annotators, in the Studies export's columns (:attr:`lib.study.tasks.TaskSpec.columns`); the answers are
    the published study's own."""
    from lib.io.paths import DATA_DIR
    from lib.study.tasks import TASKS

    d = pd.read_csv(DATA_DIR / "rome_bestworst" / "bestworst_long.csv")
    pages = d[["participant", "page", "case"]].drop_duplicates()
    judged_twice = pages.groupby("case")["participant"].nunique().loc[lambda n: n >= 2].index[:10]
    p = d.merge(pages[pages["case"].isin(judged_twice)].groupby("case").head(2))
    table = pd.DataFrame(
        {
            "annotator": "a" + p["participant"].astype(str),
            "page": p["page"],
            "prompt_id": p["case"],
            "prompt_text": p["counterfactual"],
            "criterion": p["criterion"],
            "system": p["system"],
            "response": "the passage of " + p["system"],
            "judgment": p["judgment"],
            "position": p["slot"].map({"a": 1, "b": 2, "c": 3}),
            "seconds": 12.5,
        }
    )
    return table[list(TASKS["bestworst"].columns)]


def test_a_small_pilot_withholds_the_design_effect_and_ranks_the_next_batch_readably(at):
    # issue 29, item 3: a 20-page pilot read "37572.18 times what independent votes give" and its next
    # batch showed 2 rows at 0.185 / 0.026 and 18 at 0
    from lib.ranking.active import NEGLIGIBLE
    from lib.ranking.clusters import MIN_PROMPTS

    pilot = rome_pilot()
    assert pilot["prompt_id"].nunique() == 10 and len(pilot[["annotator", "page"]].drop_duplicates()) == 20
    at.session_state["view_dataset"] = "upload"
    at.session_state["analysis_input"] = analysis_input(pilot, "bestworst", file="study_1.csv", criterion="consistency")
    at.run()
    assert not at.exception and not at.error
    warned = " ".join(w.value for w in at.warning)
    assert "cannot be told from 10 prompts" in warned and f"at least {MIN_PROMPTS}" in warned
    assert "times what independent votes give" not in warned

    def shown_batch() -> tuple[pd.DataFrame, int]:
        """The next batch as shown, and the first of its rows that matter little (len + 1: none)."""
        nxt = next(d.value for d in at.dataframe if "prompt_id" in d.value.columns)
        assert (nxt["score"] > 0).all()  # not rounded away
        assert nxt["relative_score"].iloc[0] == 1.0 and (nxt["relative_score"] > 0).all()
        assert (np.diff(nxt["relative_score"]) <= 0).all()  # ranked
        return nxt, int(np.flatnonzero(nxt["relative_score"] >= NEGLIGIBLE)[-1]) + 2

    # The Studies export names the side each system was shown on: the default fit estimates the position bias,
    # and every row of this batch matters (no note)
    assert at.checkbox(key="lb_position").value
    nxt, first = shown_batch()
    assert first == len(nxt) + 1 and not any("of the next batch are each expected" in i.value for i in at.info)
    # Without it too: each prompt's alpha is integrated out (lib.ranking.marginal), its posterior means 0.88-1.28
    # as NUTS's 0.89-1.32; the full model's Laplace draws put them at up to 68 (lognormal draws of a flat alpha),
    # whose sharp prompts made rows of the batch matter little (the note: tests/ranking/test_rank_next_settled.py)
    at.checkbox(key="lb_position").uncheck().run()
    nxt, first = shown_batch()
    assert first == len(nxt) + 1 and not any("of the next batch are each expected" in i.value for i in at.info)


def test_style_control_shows_both_leaderboards_and_each_systems_shift(at):
    from lib.ranking.simulate import simulate_style_arena

    votes, _ = simulate_style_arena(600, n_prompts=60, seed=2)
    upload = votes.rename(columns={"prompt_id": "prompt", "annotator_id": "annotator", "winner": "choice"})
    at.session_state["view_dataset"] = "upload"
    at.session_state["analysis_input"] = analysis_input(
        upload.drop(columns="criterion"), "pairwise", file="style.csv", merge_redundant=False
    )
    at.run()
    assert not at.exception and not at.error
    assert not at.checkbox(key="lb_style").disabled and not at.checkbox(key="lb_style").value
    at.checkbox(key="lb_style").check().run()
    assert not at.exception and not at.error
    style = next(d.value for d in at.dataframe if "feature" in d.value.columns)
    assert list(style["feature"]) == ["tokens"] and {"mean", "low", "high", "bt_mean"} <= set(style.columns)
    without, with_ = [d.value for d in at.dataframe if list(d.value.columns) == SIDE_BY_SIDE]  # side by side
    assert without["system"].iloc[0] == "verbose"  # without style control the verbose system leads
    assert set(with_["system"]) == set(without["system"])
    assert len(at.get("plotly_chart")) == 5  # forest, ranks, heatmap, Bradley–Terry and each system's shift
    assert "skill_uncontrolled" in table(at).columns


def test_style_control_is_offered_only_where_the_votes_carry_the_answers(at):
    from lib.ranking.simulate import simulate_arena

    votes, _ = simulate_arena(4, 20, 200, seed=1)  # votes without the answers' texts
    columns = {"prompt_id": "prompt", "annotator_id": "annotator", "winner": "choice"}
    at.session_state["view_dataset"] = "upload"
    at.session_state["analysis_input"] = analysis_input(
        votes.rename(columns=columns), "pairwise", file="arena.csv", merge_redundant=False
    )
    at.session_state["lb_sampler"] = "numpyro"  # NUTS waits for the button: nothing is fitted
    at.run()
    assert not at.exception and at.checkbox(key="lb_style").disabled
    assert at.checkbox(key="lb_by_category").disabled  # no category column


def test_by_category_shows_a_chosen_categorys_leaderboard_and_the_heatmap(at):
    from lib.io.tables import read_csv
    from lib.ranking.categories import BY_CATEGORY_COLUMNS
    from lib.ranking.simulate import simulate_category_arena

    votes, truth = simulate_category_arena(n_votes=(240, 80, 60), n_systems=4, seed=2)
    upload = votes.rename(columns={"prompt_id": "prompt", "annotator_id": "annotator", "winner": "choice"})
    text = upload.drop(columns="criterion").to_csv(index=False)  # the file a user uploads, its category column
    at.session_state["view_dataset"] = "upload"
    at.session_state["analysis_input"] = analysis_input(
        read_csv(text.encode(), "categories.csv"), "pairwise", file="categories.csv"
    )
    at.run()
    assert not at.exception and not at.error
    assert not at.checkbox(key="lb_by_category").disabled and not at.checkbox(key="lb_by_category").value
    at.checkbox(key="lb_by_category").check().run()
    assert not at.exception and "NUTS" in at.info[-1].value  # MAP + Laplace is not trustworthy by category
    at.button(key="lb_rank").click().run()
    assert not at.exception and not at.error
    assert at.selectbox(key="lb_category").options == sorted(truth["categories"])
    at.selectbox(key="lb_category").set_value("maths").run()
    shown = next(d.value for d in at.dataframe if list(d.value.columns) == BY_CATEGORY_COLUMNS[1:])
    assert len(shown) == 4
    maths = votes[votes["category"] == "maths"]
    n = pd.concat([maths["system_a"], maths["system_b"]]).value_counts()
    assert shown.set_index("system")["n_votes"].astype(int).to_dict() == n.to_dict()  # the chosen category's rows
    assert len(at.get("plotly_chart")) == 5  # forest, ranks, win heatmap, Bradley–Terry and systems x categories


def test_weighting_annotators_by_reliability_shows_their_quality_and_the_true_order(at):
    """Issue 33: votes that name their annotators (a crowd study's export), two of them spammers who always pick
    the first system: the switch weights each vote by its annotator's reliability, and the page shows the
    reliabilities and the leaderboard in its true order (unweighted, the spammers invert it)."""
    from tests.ranking.test_annotator_weights import TRUE_ORDER, spammed_votes

    upload = spammed_votes().rename(columns={"prompt_id": "prompt", "annotator_id": "annotator", "winner": "choice"})
    at.session_state["view_dataset"] = "upload"
    at.session_state["analysis_input"] = analysis_input(
        upload.drop(columns="criterion"), "pairwise", file="crowd.csv", merge_redundant=False
    )
    at.run()
    assert not at.exception and not at.error
    assert not at.checkbox(key="lb_weights").disabled and not at.checkbox(key="lb_weights").value
    assert table(at)["system"].tolist() != TRUE_ORDER
    at.checkbox(key="lb_weights").check().run()
    assert not at.exception and not at.error
    assert table(at)["system"].tolist() == TRUE_ORDER
    quality = next(d.value for d in at.dataframe if "reliability" in d.value.columns).set_index("annotator")
    assert quality.loc[["spammer-0", "spammer-1"], "reliability"].max() < 0.05
    assert quality.loc[["careful-0", "careful-1", "careful-2"], "reliability"].min() > 0.4
