"""AppTests of issue 33 (the study loop with a real crowd): the Studies page's form resets with its source and
previews what annotators will see, warns of system names; the annotator's view asks with each criterion's
label, takes crowd participants through the study link, shows the completion code; the next batch places its
pages on new annotators, or says why it cannot; the Leaderboard says who was left out."""

from __future__ import annotations

import re
import types

import pandas as pd
from streamlit.testing.v1 import AppTest

from lib.io.paths import ROOT
from lib.ranking.active import NEXT_COLUMNS
from lib.study.annotate import open_page, submit
from lib.study.create import create_study
from lib.study.demo import DEMO_NAME, demo_items, demo_texts
from lib.study.items import ItemSpec

APP = str(ROOT / "app.py")


def researcher() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120).run()
    return at.switch_page("pages/studies.py").run()


def visitor(**params) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    for k, v in params.items():
        at.query_params[k] = v
    return at.run()


def texts(at: AppTest) -> str:
    return "\n".join(
        str(m.value) for m in [*at.markdown, *at.caption, *at.title, *at.error, *at.info, *at.warning, *at.success]
    )


def plain(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


def test_switching_the_source_resets_what_belongs_to_it(db):
    at = researcher()
    assert at.text_input(key="studies_name").value == DEMO_NAME
    assert at.text_input(key="studies_labels").value == "consistent,fluent"
    at.radio(key="studies_source").set_value("Your items CSV").run()
    fields = ("studies_name", "studies_criteria", "studies_labels")
    assert [at.text_input(key=k).value for k in fields] == ["", "", ""]
    assert at.text_area(key="studies_instructions").value == ""
    assert at.text_area(key="studies_example").value == ""
    assert at.number_input(key="studies_prompts").value == 0
    assert not at.selectbox(key="studies_task").disabled
    at.text_input(key="studies_name").set_value("My pairwise study").run()
    at.button(key="studies_create").click().run()
    assert "upload the items CSV first" in at.error[0].value  # nothing of the demo's was created
    at.radio(key="studies_source").set_value("Seed 001 demo: ROME counterfactual passages").run()
    assert at.text_input(key="studies_name").value == DEMO_NAME
    assert at.text_area(key="studies_instructions").value == demo_texts()[0]


def test_the_preview_shows_exactly_the_annotators_first_page_without_system_names(db):
    at = researcher()
    shown = plain(texts(at))
    assert DEMO_NAME in shown and "**A.**" in shown and "The fact / prompt:" in shown
    preview = [r for r in at.radio if r.key.startswith("choice_preview_")]
    assert [r.label for r in preview] == ["MOST CONSISTENT", "LEAST CONSISTENT", "MOST FLUENT", "LEAST FLUENT"]
    assert all(r.disabled for r in preview)
    assert not any(s in shown for s in ("ROME", "FT_L", "GPT-2 XL"))
    assert not at.warning  # the demo names no system


def test_a_system_name_in_the_title_is_warned_of_and_needs_a_confirmation(db):
    at = researcher()
    at.text_input(key="studies_name").set_value("Writing study (seed 001, ROME)").run()
    assert "'ROME' in the title" in plain(at.warning[0].value)
    at.number_input(key="studies_prompts").set_value(2).run()
    at.button(key="studies_create").click().run()
    assert "appears in the title" in plain(at.error[0].value)
    at.checkbox(key="studies_allow_names").check().run()
    at.button(key="studies_create").click().run()
    assert "Study 1 created" in at.success[0].value


def test_the_annotators_form_asks_with_each_criterions_label(db):
    at = researcher()
    at.number_input(key="studies_prompts").set_value(2).run()
    at.button(key="studies_create").click().run()
    from lib.study.summary import study_links

    link = study_links(1, "http://x").link[0]
    page = visitor(study_token=link.split("study_token=")[1])
    page.button[0].click().run()  # Start
    asked = [r.label for r in page.radio]
    assert asked == ["MOST CONSISTENT", "LEAST CONSISTENT", "MOST FLUENT", "LEAST FLUENT"]
    assert page.title[0].value == DEMO_NAME
    assert any(h.proto.body.startswith("<style>") and "stMainMenu" in h.proto.body for h in page.get("html"))


def test_a_pages_time_starts_when_it_is_shown_not_with_the_instructions(db):
    from sqlalchemy import select

    from lib.study.db import transaction
    from lib.study.models import Assignment

    items = [ItemSpec("p1", "fact", (("one", "a"), ("two", "b"), ("three", "c")), None)]
    study = create_study(items, task="bestworst", criteria=["fluency"], annotators=1, per_item=1, name="s")
    page = visitor(study_token=study.tokens[0][1])
    assert page.button[0].label == "Start"

    def shown_at():
        with transaction() as session:
            return session.scalars(select(Assignment.shown_at)).one()

    assert shown_at() is None  # reading the instructions is not time on page 1
    page.button[0].click().run()
    assert shown_at() is not None and page.get("progress")[0].proto.text == "Page 1 of 1"


def _crowd_study(url: str, n_pages: int = 1) -> str:
    items = [ItemSpec(f"p{i}", "fact", (("one", "a"), ("two", "b"), ("three", "c")), None) for i in range(n_pages)]
    created = create_study(
        items,
        task="bestworst",
        criteria=["fluency"],
        annotators=1,
        per_item=1,
        name="Crowd study",
        crowd=True,
        completion_code="XY12",
        redirect_url="https://app.prolific.com/submissions/complete?cc=XY12",
        url=url,
    )
    return created.crowd_key


def test_a_crowd_participant_joins_through_the_study_link_and_gets_the_completion_code(db):
    key = _crowd_study(db)
    page = visitor(study_link=key, PROLIFIC_PID="5f1a2b3c4d5e6f7a8b9c0d1e", STUDY_ID="s1", SESSION_ID="x1")
    assert not page.exception and page.title[0].value == "Crowd study"
    page.button[0].click().run()  # Start
    page.radio[0].set_value("A")
    page.radio[1].set_value("B")
    page.button[0].click().run()
    assert any("every page is answered" in s.value for s in page.success)
    assert page.code[0].value == "XY12"
    assert page.get("link_button")[0].proto.url.endswith("cc=XY12")
    other = visitor(study_link=key, PROLIFIC_PID="aaaaaaaaaaaaaaaaaaaaaaaa")
    assert "all the participants it needs" in other.error[0].value and not other.button
    again = visitor(study_link=key, PROLIFIC_PID="5f1a2b3c4d5e6f7a8b9c0d1e")
    assert again.code[0].value == "XY12"  # the same id resumes (here: at the end)
    assert "does not say who you are" in visitor(study_link=key).error[0].value


def test_the_studies_page_shows_a_crowd_study_s_one_link(db):
    key = _crowd_study(db)
    at = researcher()
    shown = at.code[0].value
    assert f"study_link={key}&PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}" in shown and "worker_id=WORKER_ID" in shown
    assert "study_token" not in shown
    people = next(d.value for d in at.dataframe if "joined" in d.value.columns)
    assert people["joined"].tolist() == [False]


def _ranked(at: AppTest, batch: pd.DataFrame) -> None:
    at.session_state["ranking"] = (("study_1.csv", None, None), types.SimpleNamespace(next_batch=batch))
    at.run()


def test_with_the_defaults_the_next_batch_creates_and_shows_new_annotator_links(db):
    """The issue's case: 3 annotators, 3 judgments per item, two halfway through: the batch was '0 new pages'."""
    items = [ItemSpec(f"p{i}", "fact", (("x", "1"), ("y", "2"), ("z", "3")), None) for i in range(10)]
    study = create_study(items, task="bestworst", criteria=["fluency"], annotators=3, per_item=3, name="s")
    for _, token in study.tokens[:2]:
        for _ in range(5):
            page = open_page(token).page
            submit(token, page.assignment_id, {"fluency": {"most": "A", "least": "B"}})
    batch = pd.DataFrame([("x", "y", f"p{i}", 1.0) for i in range(10)], columns=NEXT_COLUMNS)
    at = researcher()
    _ranked(at, batch)
    at.checkbox(key="studies_next_new").uncheck().run()
    at.button(key="studies_extend").click().run()
    assert not at.success and "No page was placed" in at.warning[0].value
    assert "every annotator has judged it" in at.warning[0].value and "new annotators" in at.warning[0].value
    at.checkbox(key="studies_next_new").check().run()
    at.button(key="studies_extend").click().run()
    assert at.success[0].value == "10 new pages for 1 annotators."
    new_link = next(c.value for c in at.code if c.value.startswith("annotator-4"))
    token = new_link.split("study_token=")[1]
    assert open_page(token).total == 10


def test_the_leaderboard_says_who_failed_the_attention_checks_and_was_left_out(db):
    items = demo_items(4)
    study = create_study(
        items, task="bestworst", criteria=["fluency"], annotators=2, per_item=2, name="s", check_rate=0.3
    )
    from lib.study.checks import LEAD

    for a, (_, token) in enumerate(study.tokens):
        while (page := open_page(token).page) is not None:
            asked = re.findall(r"passage ([A-C]) as (MOST|LEAST)", page.instruction) if page.instruction else []
            pick = {k.lower(): p for p, k in asked} if asked and a == 0 else {"most": "A", "least": "B"}
            if asked and a == 1:  # the second annotator does the opposite of what the check says
                pick = {k.lower(): p for p, k in asked}
                pick = {"most": pick["least"], "least": pick["most"]}
            submit(token, page.assignment_id, {"fluency": pick})
            assert not page.instruction or page.instruction.startswith(LEAD)
    at = researcher()
    assert any("Left out 1 annotator(s)" in plain(c.value) for c in at.caption)
    at.button(key="studies_open").click().run()
    assert at.session_state["study_left_out"][1].startswith("Left out 1 annotator(s)")
    upload = at.session_state["upload"][1].decode()
    assert "annotator-2" not in upload and "annotator-1" in upload
    at.session_state["lb_sampler"] = "numpyro"  # no fit: the page waits for Rank (the note comes before)
    at.switch_page("pages/leaderboard.py").run()
    assert any("Left out 1 annotator(s) who failed the attention checks" in plain(i.value) for i in at.info)
