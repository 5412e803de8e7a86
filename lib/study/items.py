"""The researcher's items CSV: one row per (prompt, system) with the response, optional gold answers.

Columns (names as written here; ``prompt`` and ``context`` are read as ``prompt_id`` and
``prompt_text``):

- ``prompt_id``, ``system``, ``response`` (required): the prompt, the system and the text it wrote;
- ``prompt_text`` (optional): what the page shows above the passages (seed 001: the made-up fact);
- ``gold_<criterion>`` (optional, one per criterion): the known answer of an attention check, on the
  system's row: ``most``, ``least`` or blank (best-worst: one MOST and one LEAST per prompt), for
  pairwise ``most`` on the better system, ``tie`` on both, for Likert a rating (1 to the scale's
  points) on the systems whose rating is known. A prompt with any gold cell is a gold item.

A best-worst page shows all the systems of a prompt (at least 3), so does a Likert page (at least
1); a pairwise page shows two, so a prompt with n systems gives n (n - 1) / 2 pairwise items.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from lib.errors import FormatError
from lib.io.tables import check_names, row_numbers, text
from lib.study.errors import AnswerError
from lib.study.tasks import Scale, TaskSpec, task_spec

if TYPE_CHECKING:
    import pandas as pd

ALIASES = {"prompt": "prompt_id", "context": "prompt_text"}
REQUIRED = ("prompt_id", "system", "response")
GOLD_PREFIX = "gold_"


@dataclass(frozen=True)
class ItemSpec:
    """One item before it is stored: a prompt, its text, the systems' responses and the gold answer.

    ``responses``: ``[(system, text), ...]`` in the file's order; ``gold``: None, or
    ``{criterion: choice}`` in the task's shape (:mod:`lib.study.tasks`).
    """

    prompt_id: str
    prompt_text: str
    responses: tuple[tuple[str, str], ...]
    gold: dict[str, dict[str, object]] | None

    @property
    def systems(self) -> list[str]:
        """The systems of the item, in the file's order."""
        return [s for s, _ in self.responses]


def read_items(
    df: pd.DataFrame,
    task: str,
    criteria: Sequence[str],
    *,
    file: str,
    max_prompts: int | None = None,
    scale: Scale | None = None,
) -> list[ItemSpec]:
    """The items of a study from the researcher's table.

    Parameters
    ----------
    df : pandas.DataFrame
        The table as :func:`lib.io.tables.read_csv` read it (text cells).
    task : str
        A key of :data:`lib.study.tasks.TASKS`.
    criteria : sequence of str
        The study's criteria (a ``gold_<criterion>`` column must name one).
    file : str
        File name for messages.
    max_prompts : int, optional
        Keep the first this many prompts (in the file's order); all by default.
    scale : Scale, optional
        A Likert study's scale (its gold ratings are checked against it; default :class:`Scale`).

    Returns
    -------
    list of ItemSpec
        In the order prompts first appear in the file.

    Raises
    ------
    FormatError
        A required column missing, a blank cell, a system listed twice for a prompt, a prompt with
        fewer systems than the task shows, a gold column of an unknown criterion, a gold value the
        task does not allow (:attr:`lib.study.tasks.TaskSpec.gold_help`), or a best-worst gold answer
        without exactly one MOST and one LEAST.
    """
    spec = task_spec(task)
    df = df.rename(columns={k: v for k, v in ALIASES.items() if k in df.columns and v not in df.columns})
    missing = [c for c in REQUIRED if c not in df.columns]
    if missing:
        raise FormatError(
            f"missing column{'s' if len(missing) > 1 else ''} {', '.join(missing)}; the items need "
            "prompt_id, system, response (prompt_text and gold_<criterion> are optional)",
            file=file,
        )
    rows = row_numbers(df)
    cells = {c: text(df[c]) for c in df.columns}
    for column in ("prompt_id", "system"):
        check_names(cells[column], rows, what=column, column=column, file=file)
    for column in REQUIRED:
        blank = cells[column] == ""
        if blank.any():
            raise FormatError("blank cell", file=file, rows=[int(r) for r in rows[blank]], column=column)
    gold_columns = _gold_columns(list(df.columns), criteria, cells, file)
    prompt_text = cells.get("prompt_text", np.full(len(df), "", dtype=object))

    items: list[ItemSpec] = []
    for prompt in list(dict.fromkeys(cells["prompt_id"]))[:max_prompts]:
        idx = np.flatnonzero(cells["prompt_id"] == prompt)
        systems = cells["system"][idx]
        if len(set(systems)) < len(systems):
            raise FormatError(
                f"prompt '{prompt}' lists a system more than once",
                file=file,
                rows=[int(r) for r in rows[idx]],
                column="system",
            )
        if len(systems) < spec.min_systems:
            raise FormatError(
                f"prompt '{prompt}' has {len(systems)} system(s); a {task} page shows at least {spec.min_systems}",
                file=file,
                rows=[int(r) for r in rows[idx]],
                column="system",
            )
        text_here = next((t for t in prompt_text[idx] if t), "")
        gold = {c: {s: cells[col][i] for s, i in zip(systems, idx, strict=True)} for c, col in gold_columns.items()}
        pages = [list(systems)] if spec.max_systems == 0 else list(itertools.combinations(systems, 2))
        for shown in pages:
            responses = tuple((s, cells["response"][i]) for s, i in zip(systems, idx, strict=True) if s in shown)
            items.append(
                ItemSpec(prompt, text_here, responses, _gold(spec, gold, list(shown), scale, prompt, file, rows[idx]))
            )
    return items


def _gold_columns(
    columns: list[str], criteria: Sequence[str], cells: dict[str, np.ndarray], file: str
) -> dict[str, str]:
    """``{criterion: its gold column}``, the cells put in lower case."""
    found = {}
    for column in columns:
        if not column.startswith(GOLD_PREFIX):
            continue
        criterion = column[len(GOLD_PREFIX) :]
        if criterion not in criteria:
            raise FormatError(
                f"gold column of an unknown criterion '{criterion}' (the study's criteria: {', '.join(criteria)})",
                file=file,
                column=column,
            )
        cells[column] = np.char.lower(cells[column].astype(str)).astype(object)
        found[criterion] = column
    return found


def _gold(
    spec: TaskSpec,
    gold: dict[str, dict[str, str]],
    shown: list[str],
    scale: Scale | None,
    prompt: str,
    file: str,
    rows: np.ndarray,
) -> dict[str, dict[str, object]] | None:
    """The gold answer of one item in the task's shape (None when the prompt has none)."""
    out = {}
    for criterion, cells in gold.items():
        try:
            answer = spec.gold(cells, shown, scale)
        except AnswerError as err:
            raise FormatError(
                f"gold answer of prompt '{prompt}': {err} (allowed: {spec.gold_help})",
                file=file,
                rows=[int(r) for r in rows],
                column=GOLD_PREFIX + criterion,
            ) from None
        if answer is not None:
            out[criterion] = answer
    return out or None
