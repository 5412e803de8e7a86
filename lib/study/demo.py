"""Seed 001's own study: the ROME passages with their counterfactual facts, best-worst on two criteria.

The "Counterfactual AI Writing Study" (Meng et al. 2022, "Locating and Editing Factual Associations
in GPT", Figure 30) showed a made-up fact and three shuffled passages (ROME, FT_L, GPT-2 XL) per page
and asked for the MOST / LEAST consistent and the MOST / LEAST fluent. The bundled
``data/rome_bestworst`` holds its 60 facts (``prompts.csv``) and passages (``responses.csv``); the
instructions and the worked example are the form's own (``study_instructions.md``,
``study_example.md``, shortened).
"""

from __future__ import annotations

from lib.io.paths import DATA_DIR
from lib.study.items import ItemSpec, read_items

DEMO_DIR = DATA_DIR / "rome_bestworst"
DEMO_TASK = "bestworst"
DEMO_CRITERIA = ("consistency", "fluency")
DEMO_LABELS = ("consistent", "fluent")
"""The form's own words: "WHICH is the MOST CONSISTENT with the taught fact?", "... the MOST FLUENT use of
language?" (seed 001)."""
DEMO_NAME = "Counterfactual AI Writing Study"
"""The form's title. Annotators read it: it names no system (it once said "(seed 001, ROME)", ROME being one
of the three systems compared)."""


def demo_items(max_prompts: int | None = None, *, task: str = DEMO_TASK) -> list[ItemSpec]:
    """The ROME items: one page per counterfactual fact with its three passages (best-worst, Likert),
    or per pair of them (pairwise).

    Parameters
    ----------
    max_prompts : int, optional
        Keep the first this many facts (in ``prompts.csv`` order); all 60 by default.
    task : str
        A key of :data:`lib.study.tasks.TASKS`.
    """
    from lib.io.tables import read_csv

    prompts = read_csv(DEMO_DIR / "prompts.csv", "prompts.csv")
    responses = read_csv(DEMO_DIR / "responses.csv", "responses.csv")
    table = responses.merge(prompts, on="prompt_id", how="inner", sort=False)
    order = {p: i for i, p in enumerate(prompts["prompt_id"])}
    table = table.sort_values("prompt_id", key=lambda s: s.map(order), kind="stable").reset_index(drop=True)
    return read_items(table, task, DEMO_CRITERIA, file="rome_bestworst", max_prompts=max_prompts)


def demo_texts() -> tuple[str, str]:
    """The demo study's instructions and example (Markdown)."""
    return (
        (DEMO_DIR / "study_instructions.md").read_text(encoding="utf-8"),
        (DEMO_DIR / "study_example.md").read_text(encoding="utf-8"),
    )
