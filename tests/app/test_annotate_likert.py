"""AppTest of the annotator's view of a Likert study: a rating per passage per criterion on the study's
scale with its ends labelled (the researcher's labels shown inert), a missing rating refused on the
page, the answers stored as given and exported by label order."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from lib.io.paths import ROOT
from lib.study.create import create_study
from lib.study.export import export_judgments
from lib.study.items import ItemSpec
from lib.study.tasks import Scale
from ui.text import escape_markdown

APP = str(ROOT / "app.py")


def test_an_annotator_rates_every_passage_on_the_labelled_scale(db):
    items = [ItemSpec(f"p{i}", f"fact {i}", (("x", "one"), ("y", "two")), None) for i in range(2)]
    scale = Scale(4, "<b>bad</b>", ":red[great]")
    study = create_study(items, task="likert", criteria=["fluency", "style"], annotators=1, per_item=1, scale=scale)
    page = AppTest.from_file(APP, default_timeout=120)
    page.query_params["study_token"] = study.tokens[0][1]
    page.run()
    page.button[0].click().run()  # Start
    keys = [r.key for r in page.radio]
    assert len(keys) == 4 and all(k.startswith("rating_") for k in keys)  # 2 passages x 2 criteria
    options = page.radio(key=keys[0]).options
    # the ends labelled with the researcher's words, escaped: HTML and a colour directive shown as text
    assert options == [escape_markdown("1 · <b>bad</b>"), "2", "3", escape_markdown("4 · :red[great]")]
    assert options[0] == "1 · \\<b\\>bad\\</b\\>"
    page.radio(key=keys[0]).set_value(4)
    page.button[0].click().run()  # three passages' ratings missing
    assert "rate every passage" in page.error[0].value
    given = [[4, 1, 2, 3], [1, 1, 4, 4]]
    for n, values in enumerate(given):
        keys = [r.key for r in page.radio]
        for key, value in zip(keys, values, strict=True):
            page.radio(key=key).set_value(value)
        page.button[0].click().run()
        assert not page.exception and not page.error, n
    assert any("every page is answered" in s.value for s in page.success)
    table = export_judgments(study.study_id)
    # Radios come criterion by criterion, passage A then B: rows are by criterion then position.
    assert table.groupby("page", sort=True)["score"].apply(list).tolist() == given
    assert sorted(table.shown_position.unique()) == [1, 2]
