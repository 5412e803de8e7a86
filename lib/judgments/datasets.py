"""Registry of the real data sets bundled in ``data/`` (sources and licences: data/README.md)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from lib.errors import SettingsError
from lib.io.paths import DATA_DIR, ROOT
from lib.io.tables import read_csv
from lib.judgments.formats import Judgments, format_spec, read_judgments


@dataclass(frozen=True)
class Dataset:
    """One bundled data set.

    Attributes
    ----------
    key : str
        Registry key (also its folder under ``data/``, except the two irt_reference tables).
    title, description : str
        For the app's data-set chooser.
    fmt : str
        A key of ``lib.judgments.formats.FORMATS``.
    path : Path
        The long CSV.
    columns : dict
        ``{role: column}`` for the format's roles.
    criteria : tuple of str
        Criteria in the data ("overall" when the file has no criterion column; empty for
        ``responses`` data).
    licence, citation : str
        Licence of the upstream data and the source to cite.
    judges : Path, optional
        A judge file of the same items (:mod:`lib.judges.read`): LLM-judge verdicts the Judges page and the
        Study planner offer beside the human votes.
    """

    key: str
    title: str
    fmt: str
    path: Path
    columns: dict[str, str] = field(hash=False)
    criteria: tuple[str, ...]
    description: str
    licence: str
    citation: str
    judges: Path | None = None


DATASETS: dict[str, Dataset] = {
    d.key: d
    for d in (
        Dataset(
            key="lamp_rankings",
            title="LAMP writing rankings (3 conditions x 200 instructions)",
            fmt="ranking",
            path=DATA_DIR / "lamp_rankings" / "rankings_long.csv",
            # One writer ranked item gene_batch1_10 twice (two instruction_ids in batch 6): the
            # instruction_id tells those two rankings apart.
            columns={
                "prompt": "item",
                "annotator": "annotator",
                "system": "condition",
                "rank": "rank",
                "trial": "instruction_id",
            },
            criteria=("overall",),
            description=(
                "603 rankings by 13 professional writers (3 per instruction) of three versions of a "
                "paragraph written for each of 200 creative-writing instructions: AI-generated, "
                "AI-edited and Human-edited (ranked 1 = best). 1,809 pairwise votes."
            ),
            licence="BSD-3-Clause",
            citation=(
                "Chakrabarty, Laban & Wu (2025), Can AI writing be salvaged? Mitigating idiosyncrasies and "
                "improving human-AI alignment in the writing process through edits (LAMP). "
                "salesforce/creativity_eval @ fced0ab2d3068244152d1302a8bd8e9f538440f5, "
                "Writing_Alignment/preference_ranking/"
            ),
        ),
        Dataset(
            key="rome_bestworst",
            title="ROME counterfactual writing study (best-worst, 2 criteria)",
            fmt="bestworst",
            path=DATA_DIR / "rome_bestworst" / "bestworst_long.csv",
            columns={
                "prompt": "case",
                "annotator": "participant",
                "system": "system",
                "judgment": "judgment",
                "trial": "page",
                "criterion": "criterion",
            },
            criteria=("consistency", "fluency"),
            description=(
                "16 participants each judged 10 pages of passages by ROME, FT_L and GPT-2 XL written after "
                "a counterfactual statement, marking the MOST and LEAST consistent and the MOST and LEAST "
                "fluent: 320 trials over 60 cases, 960 pairwise votes."
            ),
            licence="MIT",
            citation=(
                "Meng, Bau, Andonian & Belinkov (2022), Locating and editing factual associations in GPT "
                "(ROME). kmeng01/rome @ 4902ab0a03a6beb034307d678f638ecba6412055, human/"
            ),
        ),
        Dataset(
            key="pandalm_pairwise",
            title="PandaLM test set (pairwise A/B/tie, 5 LLMs)",
            fmt="pairwise",
            path=DATA_DIR / "pandalm_pairwise" / "pairwise_long.csv",
            columns={
                "prompt": "item_id",
                "system_a": "system_a",
                "system_b": "system_b",
                "annotator": "annotator",
                "choice": "choice",
            },
            criteria=("overall",),
            description=(
                "3 annotators' A/B/tie votes on responses of llama-7b, bloom-7b, cerebras-gpt-6.7B, opt-7b "
                "and pythia-6.9b to 999 instructions; each instruction is judged for one system pair: "
                "2,997 votes."
            ),
            licence="Apache-2.0",
            citation=(
                "Wang et al. (2024), PandaLM: An automatic evaluation benchmark for LLM instruction tuning "
                "optimization. WeOpenML/PandaLM @ 3871806e72b4832f815ecafd24d3503c73403f48, data/testset-v1.json"
            ),
            judges=DATA_DIR / "pandalm_pairwise" / "judge_votes_long.csv",
        ),
        Dataset(
            key="hanna_means",
            title="HANNA story ratings (11 systems x 96 prompts, 6 criteria)",
            fmt="ratings",
            path=DATA_DIR / "hanna_means" / "mean_human_scores_long.csv",
            columns={"prompt": "prompt_idx", "system": "system", "score": "mean_human_score", "criterion": "criterion"},
            criteria=("Relevance", "Coherence", "Empathy", "Surprise", "Engagement", "Complexity"),
            description=(
                "Mean of 3 raters' 1-5 scores for stories written by 11 systems (humans included) for "
                "the same 96 prompts, on 6 criteria: 6,336 means (55 system pairs per prompt)."
            ),
            licence="MIT",
            citation=(
                "Chhun, Colombo, Suchanek & Clavel (2022), Of human criteria and automatic metrics: a benchmark "
                "of the evaluation of story generation (HANNA, COLING 2022); Chhun, Suchanek & Clavel (2024, TACL). "
                "dig-team/hanna-benchmark-asg @ 282f27536a5d05ad4ce14298abcd70c45668fed2"
            ),
        ),
        Dataset(
            key="science_mirt",
            title="Science attitudes (392 persons x 4 items, 4 categories; mirt reference)",
            fmt="responses",
            path=DATA_DIR / "irt_reference" / "Science_mirt4_long.csv",
            columns={"person": "person", "item": "item", "score": "score"},
            criteria=(),
            description=(
                "Classic graded-response data with published mirt 1.47 estimates "
                "(data/irt_reference/reference_estimates.json), for checking the IRT model."
            ),
            licence="GPL (>= 3) (data table from the R package mirt)",
            citation=(
                "Karlheinz & Melich (1992), via the R package mirt 1.47 (Chalmers 2012). "
                "philchalmers/mirt @ 2fc2b236569fa55839c7acaf396fd595cf4e8b52"
            ),
        ),
        Dataset(
            key="lsat7",
            title="LSAT section 7 (1000 persons x 5 binary items; mirt reference)",
            fmt="responses",
            path=DATA_DIR / "irt_reference" / "LSAT7_long.csv",
            columns={"person": "person", "item": "item", "score": "score"},
            criteria=(),
            description=(
                "Classic binary item-response data with published mirt 1.47 2PL estimates "
                "(data/irt_reference/reference_estimates.json)."
            ),
            licence="GPL (>= 3) (data table from the R package mirt)",
            citation=(
                "Bock & Lieberman (1970), via the R package mirt 1.47 (Chalmers 2012). "
                "philchalmers/mirt @ 2fc2b236569fa55839c7acaf396fd595cf4e8b52"
            ),
        ),
    )
}

DEFAULT_DATASET = "lamp_rankings"


def dataset(key: str) -> Dataset:
    """``DATASETS[key]``, or SettingsError naming the bundled keys (never a bare KeyError)."""
    if key not in DATASETS:
        raise SettingsError(f"unknown data set '{key}'; bundled data sets are {', '.join(DATASETS)}")
    return DATASETS[key]


def bundled_judges(key: str) -> Path | None:
    """The judge file bundled with data set ``key`` (:attr:`Dataset.judges`); None for a data set without one
    or a key that is not a bundled data set (an upload)."""
    return DATASETS[key].judges if key in DATASETS else None


def _file_name(ds: Dataset) -> str:
    return ds.path.relative_to(ROOT).as_posix()


def load_table(key: str) -> pd.DataFrame:
    """The bundled long CSV as read by :func:`lib.io.tables.read_csv` (all columns ``str``).

    Raises
    ------
    SettingsError
        Unknown key.
    """
    ds = dataset(key)
    return read_csv(ds.path, _file_name(ds))


def load_judgments(key: str) -> Judgments:
    """Votes of a bundled judgment data set (all criteria), with its prompt and response texts.

    Parameters
    ----------
    key : str
        A key of ``DATASETS`` whose format yields votes (pairwise, bestworst, ranking).

    Returns
    -------
    Judgments
        Texts come from the bundled ``prompts.csv`` / ``responses.csv`` (empty frames if absent).

    Raises
    ------
    SettingsError
        Unknown key, or a data set whose format yields no votes (read those with ``load_table``
        and the format's reader, ``lib.judgments.formats.FORMATS[fmt].read``, using ``DATASETS[key].columns``).
    """
    ds = dataset(key)
    if not format_spec(ds.fmt).votes:
        raise SettingsError(f"data set '{key}' holds {ds.fmt} data, not pairwise judgments")
    judgments = read_judgments(load_table(key), ds.fmt, ds.columns, file=_file_name(ds))
    folder = ds.path.parent
    if (folder / "prompts.csv").exists():
        judgments.prompt_texts = read_csv(folder / "prompts.csv", "prompts.csv")[["prompt_id", "prompt_text"]]
    if (folder / "responses.csv").exists():
        judgments.responses = read_csv(folder / "responses.csv", "responses.csv")[["prompt_id", "system", "response"]]
    return judgments
