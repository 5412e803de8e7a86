"""AppTests of the Studies page and the annotator's view: create the seed-001 demo study, answer it
through a link, follow its progress, open the judgments in the Data page; hostile item text and
instructions shown inert; a forged link; the operator's secret."""

from __future__ import annotations

import re
import urllib.parse

from streamlit.testing.v1 import AppTest

from lib.io.paths import ROOT
from lib.study.access import SECRET_ENV
from lib.study.create import create_study
from lib.study.items import ItemSpec

APP = str(ROOT / "app.py")
HOSTILE = "<script>alert(1)</script> ![x](http://evil.example/x.png) [click](javascript:alert(1)) :red[big] $x$"


def researcher() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120).run()
    return at.switch_page("pages/studies.py").run()


def annotator(token: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["study_token"] = token
    return at.run()


def links(at: AppTest) -> dict[str, str]:
    text = at.code[0].value
    return {
        label: urllib.parse.parse_qs(urllib.parse.urlparse(link).query)["study_token"][0]
        for label, link in (line.split() for line in text.splitlines())
    }


def all_text(at: AppTest) -> str:
    return "\n".join(str(m.value) for m in [*at.markdown, *at.caption, *at.title, *at.error, *at.info])


def test_create_the_demo_study_answer_it_and_open_it_in_the_data_page(db):
    at = researcher()
    assert not at.exception
    assert any("No study yet" in i.value for i in at.info)
    at.number_input(key="studies_prompts").set_value(2)
    at.button(key="studies_create").click().run()
    assert not at.exception and not at.error
    tokens = links(at)
    assert list(tokens) == ["annotator-1", "annotator-2", "annotator-3"]
    assert [m.value for m in at.metric][:1] == ["0 / 6"]

    for token in tokens.values():
        page = annotator(token)
        assert not page.exception
        assert "Counterfactual AI Writing Study" in all_text(page)
        assert not page.sidebar.get("page_link") and not page.get("navigation")  # no other page reachable
        page.button[0].click().run()  # Start, after the instructions and the example
        for _ in range(2):
            assert "Page" in page.get("progress")[0].proto.text
            for criterion in ("consistency", "fluency"):
                keys = [r.key for r in page.radio if r.key.startswith("choice_") and criterion in r.key]
                page.radio(key=next(k for k in keys if k.endswith("most"))).set_value("A")
                page.radio(key=next(k for k in keys if k.endswith("least"))).set_value("C")
            page.button[0].click().run()
            assert not page.exception and not page.error
        assert any("every page is answered" in s.value for s in page.success)

    at = researcher()
    assert [m.value for m in at.metric][:1] == ["6 / 6"]
    people = next(d.value for d in at.dataframe if "speeder" in d.value.columns)
    assert people["done"].tolist() == [2, 2, 2]
    at.button(key="studies_open").click().run()
    assert not at.exception and not at.error
    assert at.session_state["upload_format"] == "bestworst"
    votes = next(m.value for m in at.metric if m.label == "votes")
    assert votes == str(6 * 3)  # 6 answered pages, criterion consistency, 3 votes a trial


def test_choices_are_checked_on_the_page(db):
    study = create_study(_items("fact", "text"), task="bestworst", criteria=["fluency"], annotators=1, per_item=1)
    page = annotator(study.tokens[0][1])
    page.button[0].click().run()
    page.button[0].click().run()  # nothing chosen
    assert "choose the MOST passage" in page.error[0].value
    page.radio[0].set_value("B")
    page.radio[1].set_value("B")
    page.button[0].click().run()
    assert "must differ" in page.error[0].value
    page.radio[1].set_value("A")
    page.button[0].click().run()
    assert not page.error and any("every page is answered" in s.value for s in page.success)


def _items(prompt_text: str, response: str) -> list[ItemSpec]:
    return [ItemSpec("p1", prompt_text, (("one", response), ("two", "plain"), ("three", "plain too")), None)]


def test_script_and_image_payloads_in_items_and_instructions_are_inert(db):
    study = create_study(
        _items(HOSTILE, HOSTILE),
        task="bestworst",
        criteria=["fluency"],
        annotators=1,
        per_item=1,
        instructions=f"# Title\n\n{HOSTILE}",
        example=HOSTILE,
        name=HOSTILE,
    )
    page = annotator(study.tokens[0][1])
    text = all_text(page)
    page.button[0].click().run()
    text += all_text(page)
    for live in (r"<script", r"\]\(http", r"\]\(javascript", r":red\[", r"\$x"):
        assert not re.search(r"(?<!\\)" + live, text), f"{live} would be read as markup"
    readable = re.sub(r"\\(.)", r"\1", text).replace("\u2060", "")
    assert "<script>alert(1)</script>" in readable  # shown literally, not dropped
    assert "[image: x]" in readable and "click (javascript:alert(1))" in readable
    assert "# Title" in next(m.value for m in page.markdown if "Title" in m.value)  # the researcher's heading stays


def test_a_forged_link_shows_a_message_and_nothing_else(db):
    create_study(_items("fact", "text"), task="bestworst", criteria=["fluency"], annotators=1, per_item=1)
    page = annotator("forgedforgedforgedforged")
    assert "this link is not valid" in page.error[0].value
    assert not page.button and not page.radio and not page.get("navigation")


def test_researcher_pages_need_the_operators_secret_when_one_is_set(db, monkeypatch):
    monkeypatch.setenv(SECRET_ENV, "s3cret-operator")
    study = create_study(_items("fact", "text"), task="bestworst", criteria=["fluency"], annotators=1, per_item=1)
    at = AppTest.from_file(APP, default_timeout=120).run()
    assert at.title[0].value == "Operator's secret" and not at.dataframe
    at.text_input[0].set_value("wrong")
    at.button[0].click().run()
    assert "not the operator's secret" in at.error[0].value
    at.text_input[0].set_value("s3cret-operator")
    at.button[0].click().run()
    assert at.title[0].value == "Data"
    # the annotator's link needs no secret
    assert annotator(study.tokens[0][1]).button[0].label == "Start"


def test_served_beyond_loopback_without_a_secret_the_researcher_pages_stay_closed(db):
    from streamlit import config

    old = config.get_option("server.address")
    config.set_option("server.address", "0.0.0.0")
    try:
        at = AppTest.from_file(APP, default_timeout=120).run()
    finally:
        config.set_option("server.address", old)
    assert "served beyond this machine" in at.error[0].value and "EVAL_OPERATOR_SECRET" in at.error[0].value
    assert at.title[0].value == "Operator's secret" and len(at.title) == 1


def test_the_leaderboards_next_batch_becomes_new_pages(db):
    import types

    import pandas as pd

    from lib.ranking.active import NEXT_COLUMNS
    from lib.study.annotate import open_page

    items = [ItemSpec(f"p{i}", "fact", (("x", "1"), ("y", "2"), ("z", "3")), None) for i in range(3)]
    study = create_study(items, task="bestworst", criteria=["fluency"], annotators=3, per_item=1)
    at = researcher()
    assert any("rank them on the Leaderboard" in c.value for c in at.caption)
    batch = pd.DataFrame([("x", "y", "p0", 0.9), ("y", "z", "p1", 0.5)], columns=NEXT_COLUMNS)
    at.session_state["ranking"] = (("study_1.csv", None, None), types.SimpleNamespace(next_batch=batch))
    at.run()
    at.button(key="studies_extend").click().run()
    assert not at.exception and at.success[0].value == "2 new pages for 2 annotators."
    totals = sorted(open_page(token).total for _, token in study.tokens)
    assert sum(totals) == 3 + 2  # one more annotator for each of the two items of the batch


def test_annotators_per_item_default_to_the_planners_cheapest_design(db):
    import pandas as pd

    at = researcher()
    assert at.number_input(key="studies_per_item").value == 3
    assert any("run the Study planner" in c.value for c in at.caption)
    cheapest = pd.DataFrame(
        {
            "strategy": ["random", "irt"],
            "analysis": ["grm_bank", "grm_bank"],
            "reached": [True, True],
            "prompts": [50, 25],
            "annotators": [2, 5],
            "power": [0.9, 0.82],
            "cost": [400.0, 310.0],
        }
    )
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["planner_best"] = cheapest  # what the Study planner's page keeps
    at.run()
    at = at.switch_page("pages/studies.py").run()
    assert not at.exception
    assert at.number_input(key="studies_per_item").value == 5
    assert at.number_input(key="studies_annotators").value == 5
    said = re.sub(r"\\(.)", r"\1", next(c.value for c in at.caption if "Annotators per item" in c.value))
    assert "Study planner's cheapest design" in said and "25 prompts x 5 annotators per item" in said


def test_a_likert_study_on_the_studies_page_opens_as_ratings_in_the_data_page(db):
    from lib.study.annotate import open_page, submit
    from lib.study.tasks import Scale

    items = [ItemSpec(f"p{i}", "fact", (("x", "one"), ("y", "two")), None) for i in range(2)]
    study = create_study(items, task="likert", criteria=["fluency"], annotators=2, per_item=2, scale=Scale(5))
    for a, (_, token) in enumerate(study.tokens):
        while (page := open_page(token).page) is not None:
            submit(token, page.assignment_id, {"fluency": {"A": 5 - a, "B": 2}})
    at = researcher()
    assert not at.exception and not at.error
    agreement = next(d.value for d in at.dataframe if "krippendorff_alpha" in d.value.columns)
    assert agreement["units"].tolist() == [4]
    assert any("Krippendorff's alpha" in c.value for c in at.caption)
    at.radio(key="studies_source").set_value("Your items CSV").run()
    at.selectbox(key="studies_task").set_value("likert").run()  # the create form offers the scale
    assert at.number_input(key="studies_points").value == 5
    at.text_input(key="studies_low").set_value(" ").run()
    assert "label both ends of the scale" in at.error[0].value and not at.exception
    at.button(key="studies_open").click().run()
    assert not at.exception and not at.error
    assert at.session_state["upload_format"] == "ratings"
