"""The study loop with a real crowd (issue 33), on SQLite and PostgreSQL: blinded texts, labelled questions,
every failing criterion named, crowd-platform links, attention checks, annotator quality, counterbalanced
order, and an adaptive step that places its work."""

from __future__ import annotations

import threading
from collections import Counter

import pandas as pd
import pytest
from sqlalchemy import text
from study_helpers import SYSTEMS, answer, items_table, labels, shown

from lib.ranking.active import NEXT_COLUMNS
from lib.study import db as study_db
from lib.study.adaptive import JUDGED_BY_ALL, extend
from lib.study.annotate import LABELS, open_page, submit
from lib.study.blinding import SystemNamesShown
from lib.study.checks import LEAD
from lib.study.create import create_study
from lib.study.crowd import FULL, crowd_links, join
from lib.study.demo import DEMO_LABELS, demo_items, demo_texts
from lib.study.errors import AnswerError, JoinError, StudyError, TokenError
from lib.study.export import export_study
from lib.study.items import read_items
from lib.study.summary import summarize

CRITERIA = ["consistency", "fluency"]


def _items(n=4, task="bestworst"):
    return read_items(items_table(n), task, CRITERIA, file="items.csv")


def _study(url, **kw):
    args = dict(task="bestworst", criteria=CRITERIA, annotators=3, per_item=3, name="A study", url=url)
    return create_study(_items(kw.pop("n", 4), kw.get("task", "bestworst")), **{**args, **kw})


# ------------------------------------------------------------------------------------------- blinding (2)


@pytest.mark.parametrize(
    ("field", "value", "where"),
    [
        ("name", "Writing study (alpha vs Beta)", "title"),
        ("instructions", "Passages were written by GAMMA and others.", "instructions"),
        ("example", "**A.** (beta) a fine passage", "example"),
    ],
)
def test_a_system_name_in_what_annotators_read_is_refused_unless_confirmed(db, field, value, where):
    with pytest.raises(SystemNamesShown, match=f"appears in the {where}") as refused:
        _study(db, **{field: value})
    assert {f.system for f in refused.value.found} <= set(SYSTEMS)
    created = _study(db, **{field: value}, allow_system_names=True)
    assert open_page(created.tokens[0][1], url=db).total > 0


def test_a_name_inside_another_word_is_not_a_system_name(db):
    created = _study(db, name="Alphabet soup: gammas and betas", instructions="Judge each passage.")
    assert open_page(created.tokens[0][1], url=db).study_name == "Alphabet soup: gammas and betas"


def test_the_demo_study_shows_annotators_no_system_name(db):
    """Seed 001's title once read "Counterfactual AI Writing Study (seed 001, ROME)", ROME being compared."""
    from lib.study.demo import DEMO_CRITERIA, DEMO_NAME

    items = demo_items(2)
    instructions, example = demo_texts()
    created = create_study(
        items,
        task="bestworst",
        criteria=DEMO_CRITERIA,
        labels=dict(zip(DEMO_CRITERIA, DEMO_LABELS, strict=True)),
        annotators=3,
        per_item=3,
        instructions=instructions,
        example=example,
        name=DEMO_NAME,
        url=db,
    )
    progress = open_page(created.tokens[0][1], url=db)
    seen = " ".join([progress.study_name, progress.instructions, progress.example, *progress.labels.values()])
    for system in {s for it in items for s in it.systems}:
        assert system.lower() not in seen.lower()


# ------------------------------------------------------------------------------- labels (3), every criterion (4)


def test_the_questions_use_each_criterions_label(db):
    created = _study(db, labels={"consistency": "consistent", "fluency": "fluent"})
    progress = open_page(created.tokens[0][1], url=db)
    assert progress.labels == {"consistency": "consistent", "fluency": "fluent"}
    from lib.study.tasks import question

    assert question("most", progress.label_of("consistency")) == "MOST CONSISTENT"
    assert question("least", progress.label_of("fluency")) == "LEAST FLUENT"
    with pytest.raises(StudyError, match="one label per criterion"):
        _study(db, labels={"consistency": "consistent", "fluency": ""})


def test_most_equal_to_least_names_every_criterion_that_fails(db):
    created = _study(db)
    token = created.tokens[0][1]
    page = open_page(token, url=db).page
    same = {c: {"most": "A", "least": "A"} for c in CRITERIA}
    with pytest.raises(AnswerError) as refused:
        submit(token, page.assignment_id, same, url=db)
    assert "consistency: the MOST and the LEAST passage must differ" in str(refused.value)
    assert "fluency: the MOST and the LEAST passage must differ" in str(refused.value)


# ------------------------------------------------------------------------------------ crowd platform (7)


def _crowd(db, **kw):
    return _study(db, crowd=True, completion_code="C0DE2024", redirect_url="https://example.org/done?cc=C0DE2024", **kw)


def test_the_crowd_link_takes_a_place_per_participant_up_to_the_study_s_need(db):
    created = _crowd(db)
    key = created.crowd_key
    first = join(key, {"PROLIFIC_PID": "5f1a2b3c4d5e6f7a8b9c0d1e", "STUDY_ID": "s", "SESSION_ID": "x"}, url=db)
    again = join(key, {"PROLIFIC_PID": "5f1a2b3c4d5e6f7a8b9c0d1e", "SESSION_ID": "another"}, url=db)
    second = join(key, {"worker_id": "W2"}, url=db)
    third = join(key, {"workerId": "W3"}, url=db)
    assert first == again and len({first, second, third}) == 3
    assert {first, second, third} == {token for _, token in created.tokens}
    with pytest.raises(JoinError, match="all the participants it needs"):
        join(key, {"worker_id": "W4"}, url=db)
    assert join(key, {"worker_id": "W2"}, url=db) == second  # a full study still lets its own resume
    assert FULL.startswith("This study has all the participants")


@pytest.mark.parametrize(
    ("params", "error", "message"),
    [
        ({}, JoinError, "does not say who you are"),
        ({"PROLIFIC_PID": "{{%PROLIFIC_PID%}}"}, JoinError, "not a participant id"),
        ({"worker_id": "x" * 500}, JoinError, "not a participant id"),
    ],
)
def test_a_crowd_link_without_a_participant_id_takes_no_place(db, params, error, message):
    created = _crowd(db)
    with pytest.raises(error, match=message):
        join(created.crowd_key, params, url=db)
    summary = summarize(created.study_id, url=db).annotators
    assert not summary["joined"].any()


def test_an_unknown_study_link_or_a_private_study_s_is_refused_as_a_bad_token(db):
    private = _study(db)
    with pytest.raises(TokenError, match="not valid"):
        join("nosuchlinknosuchlink", {"worker_id": "W1"}, url=db)
    with pytest.raises(TokenError, match="not valid"):
        join("<script>", {"worker_id": "W1"}, url=db)
    assert private.crowd_key is None


def test_the_platform_id_is_stored_only_as_a_keyed_hash_and_never_exported(db):
    created = _crowd(db)
    pid = "5f1a2b3c4d5e6f7a8b9c0d1e"
    token = join(created.crowd_key, {"PROLIFIC_PID": pid}, url=db)
    while (page := open_page(token, url=db).page) is not None:
        submit(token, page.assignment_id, answer(page), url=db)
    with study_db.engine(db).connect() as conn:
        tables = ["study", "item", "annotator", "assignment", "answer"]
        dump = " ".join(str(row) for t in tables for row in conn.execute(text(f"SELECT * FROM {t}")))
        stored = conn.execute(text("SELECT platform_hash FROM annotator WHERE token = :t"), {"t": token}).scalar_one()
    assert pid not in dump and len(stored) == 64
    table = export_study(created.study_id, url=db).table
    assert pid not in table.to_csv() and stored not in table.to_csv()
    assert stored not in summarize(created.study_id, url=db).annotators.to_csv()


def test_the_end_shows_the_completion_code_and_the_redirect(db):
    created = _crowd(db)
    token = join(created.crowd_key, {"worker_id": "W1"}, url=db)
    while (page := open_page(token, url=db).page) is not None:
        submit(token, page.assignment_id, answer(page), url=db)
    done = open_page(token, url=db)
    assert done.page is None and done.completion_code == "C0DE2024"
    assert done.redirect_url == "https://example.org/done?cc=C0DE2024"
    links = crowd_links("https://eval.example.org", created.crowd_key)
    assert links["prolific"].endswith(
        "&PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"
    )
    with pytest.raises(StudyError, match="redirect URL"):
        _study(db, crowd=True, redirect_url="javascript:alert(1)")
    assert len(open_page(_study(db, crowd=True).tokens[0][1], url=db).completion_code) == 8  # made up


def test_participants_arriving_at_once_take_distinct_places(db):
    created = _crowd(db)
    got, errors = [], []

    def arrive(i):
        try:
            got.append(join(created.crowd_key, {"worker_id": f"W{i}"}, url=db))
        except JoinError as err:
            errors.append(err)

    threads = [threading.Thread(target=arrive, args=(i,)) for i in range(5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 3 and len(set(got)) == 3 and len(errors) == 2


# ----------------------------------------------------------------------------------- attention checks (8)


def _answer_check(page, gold_choice, shown_order):
    """The choices a page's instruction asks for, as labels."""
    letter = dict(zip(shown_order, LABELS, strict=False))
    return {c: {k: letter[v] for k, v in g.items()} for c, g in gold_choice.items()}


def _gold_of(url, assignment_id):
    from lib.study.db import transaction
    from lib.study.models import Assignment

    with transaction(url) as session:
        asg = session.get(Assignment, assignment_id)
        return asg.item.gold, list(asg.shown_order), asg.item.check


def test_attention_checks_are_placed_at_their_rate_and_say_what_to_choose(db):
    created = _study(db, n=9, check_rate=0.25)  # 9 regular pages each: round(0.25 x 9 / 0.75) = 3 checks
    for _, token in created.tokens:
        seen = 0
        while (page := open_page(token, url=db).page) is not None:
            gold, order, check = _gold_of(db, page.assignment_id)
            if check:
                seen += 1
                asked = _answer_check(page, gold, order)
                for c, pick in asked.items():  # "choose passage B as MOST CONSISTENT and passage A as LEAST ..."
                    label = {"consistency": "CONSISTENCY", "fluency": "FLUENCY"}[c]
                    assert f"passage {pick['most']} as MOST {label}" in page.instruction
                assert page.instruction.startswith(LEAD)
            else:
                assert page.instruction == ""
            submit(token, page.assignment_id, answer(page), url=db)
        assert seen == 3


def test_an_annotator_who_fails_the_checks_is_flagged_and_left_out_of_the_export(db):
    created = _study(db, n=6, check_rate=0.25)
    careless = created.tokens[2][1]
    for _, token in created.tokens:
        while (page := open_page(token, url=db).page) is not None:
            gold, order, check = _gold_of(db, page.assignment_id)
            if check and token != careless:
                choices = _answer_check(page, gold, order)
            elif check:  # the opposite of what the page says
                choices = {
                    c: {"most": v["least"], "least": v["most"]} for c, v in _answer_check(page, gold, order).items()
                }
            else:
                choices = answer(page)
            submit(token, page.assignment_id, choices, url=db)
    people = summarize(created.study_id, url=db).annotators.set_index("annotator")
    assert people["failed_checks"].tolist() == [False, False, True]
    assert people.loc["annotator-3", "checks_passed"] == 0 and people.loc["annotator-1", "checks"] == 2
    done = export_study(created.study_id, url=db)
    assert done.left_out == ["annotator-3"] and set(done.table["annotator"]) == {"annotator-1", "annotator-2"}
    assert done.rows_left_out == 6 * 2 * 3  # 6 pages x 2 criteria x 3 passages
    assert "Left out 1 annotator(s) who failed the attention checks" in done.said()
    kept = export_study(created.study_id, keep_failed=True, url=db)
    assert set(kept.table["annotator"]) == {"annotator-1", "annotator-2", "annotator-3"} and not kept.left_out
    everything = export_study(created.study_id, keep_failed=True, include_gold=True, url=db).table
    assert not everything["prompt_id"].str.startswith("attention-check").any()  # checks are never judgments


# ------------------------------------------------------------------------------------ annotator quality (9)


def test_the_summary_shows_agreement_and_reliability_beside_gold_accuracy(db):
    created = _study(db, n=6, annotators=4, per_item=4)
    for a, (_, token) in enumerate(created.tokens):
        while (page := open_page(token, url=db).page) is not None:
            order = shown(db, page.assignment_id)
            # careful: alpha is the most, gamma the least, on every page; the fourth always picks the first and
            # the last passage shown (a position spammer)
            choice = labels(order, "alpha", "gamma") if a < 3 else {"most": "A", "least": "C"}
            submit(token, page.assignment_id, {c: choice for c in CRITERIA}, url=db)
    people = summarize(created.study_id, url=db).annotators.set_index("annotator")
    assert {"agreement", "reliability", "gold_accuracy", "checks"} <= set(people.columns)
    assert people.loc[["annotator-1", "annotator-2", "annotator-3"], "reliability"].min() > 0.9
    assert people.loc["annotator-4", "reliability"] < 0.5
    assert people.loc["annotator-4", "agreement"] < people.loc["annotator-1", "agreement"]


# -------------------------------------------------------------------------------- counterbalanced order (10)


@pytest.mark.parametrize("task", ["bestworst", "pairwise"])
def test_each_annotator_sees_every_system_in_every_position_equally_often(db, task):
    created = _study(db, n=6, task=task, annotators=2, per_item=2)
    for _, token in created.tokens:
        seen, pages = Counter(), 0
        while (page := open_page(token, url=db).page) is not None:
            order = shown(db, page.assignment_id)
            seen.update((s, p) for p, s in enumerate(order))
            pages += 1
            submit(token, page.assignment_id, _any_answer(task, page), url=db)
        for system in SYSTEMS:
            counts = [seen[(system, p)] for p in range(3 if task == "bestworst" else 2)]
            assert max(counts) - min(counts) <= 1, (system, counts)
    table = export_study(created.study_id, url=db).table
    assert "position" in table and table["position"].notna().all()


def _any_answer(task, page):
    if task == "pairwise":
        return {c: {"winner": "A"} for c in CRITERIA}
    return answer(page)


@pytest.mark.parametrize("db", ["sqlite"], indirect=True)  # a leaderboard fit: the storage is tested above
@pytest.mark.parametrize("task", ["bestworst", "pairwise"])
def test_the_leaderboards_position_bias_runs_on_the_study_export(db, task):
    """Annotators who always pick the first passage shown: the export says who was shown first (best-worst:
    the earlier of each pair), and the leaderboard's position bias gamma comes out above 0 (best-worst fitted;
    pairwise exports said it before and the browser test ranks one)."""
    from lib.inputs import analysis_input
    from lib.io.tables import read_csv
    from lib.ranking.data import shows_position
    from lib.ranking.fit import RankSettings
    from lib.ranking.run import rank_systems
    from lib.study.tasks import TASKS

    created = _study(db, n=8, task=task, annotators=3, per_item=3, labels=None)
    for _, token in created.tokens:
        while (page := open_page(token, url=db).page) is not None:
            pick = {"winner": "A"} if task == "pairwise" else {"most": "A", "least": "C"}
            submit(token, page.assignment_id, {c: pick for c in CRITERIA}, url=db)
    table = export_study(created.study_id, url=db).table
    data = analysis_input(
        read_csv(table.to_csv(index=False).encode(), "study.csv"),
        "pairwise" if task == "pairwise" else "bestworst",
        TASKS[task].roles,
        file="study.csv",
        criterion="fluency",
    )
    assert shows_position(data)
    if task == "bestworst":
        result = rank_systems(data, RankSettings(position_bias=True, seed=0))
        assert result.position is not None and result.position.iloc[0]["low"] > 0


# ------------------------------------------------------------------------------ the adaptive step places (6)


def test_with_the_defaults_the_next_batch_goes_to_new_annotators(db):
    """3 annotators, 3 per item: every annotator has every item, two have answered half their pages. The
    batch (every prompt) gets one new annotator, whose link opens on those pages."""
    created = _study(db, n=10)
    for _, token in created.tokens[:2]:
        for _ in range(5):
            page = open_page(token, url=db).page
            submit(token, page.assignment_id, answer(page), url=db)
    rows = [("alpha", "beta", f"p{i:02d}", 0.5) for i in range(10)]
    batch = pd.DataFrame(rows, columns=NEXT_COLUMNS)
    nothing = extend(created.study_id, batch, url=db)
    assert nothing.pages == {} and nothing.judged_by_all == [f"p{i:02d}" for i in range(10)]
    assert JUDGED_BY_ALL in nothing.problems()[0] and "new annotators" in nothing.problems()[0]
    done = extend(created.study_id, batch, url=db, new_annotators=True)
    assert [label for label, _ in done.new] == ["annotator-4"] and done.pages == {"annotator-4": 10}
    progress = open_page(done.new[0][1], url=db)
    assert progress.total == 10 and progress.page.number == 1
    again = extend(created.study_id, batch, per_prompt=2, url=db, new_annotators=True)
    assert [label for label, _ in again.new] == ["annotator-5", "annotator-6"]  # two more for two more each
    assert again.pages == {"annotator-5": 10, "annotator-6": 10}


def test_new_places_of_a_crowd_study_are_taken_through_its_link(db):
    created = _crowd(db, n=4)
    tokens = [join(created.crowd_key, {"worker_id": f"W{i}"}, url=db) for i in range(3)]
    batch = pd.DataFrame([("alpha", "beta", "p00", 0.5)], columns=NEXT_COLUMNS)
    done = extend(created.study_id, batch, url=db, new_annotators=True)
    assert len(done.new) == 1
    fourth = join(created.crowd_key, {"worker_id": "W3"}, url=db)
    assert fourth == done.new[0][1] and fourth not in tokens
    with pytest.raises(JoinError):
        join(created.crowd_key, {"worker_id": "W4"}, url=db)
