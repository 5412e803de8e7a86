"""Simulated human and judge votes with known skills: the coverage study of issue 20 ("Done when") and the
arena of issue 34.

Issue 20: humans vote by Bradley–Terry on the true skills, plus, with ``item_sd`` > 0, the item's own
preference u_i ~ N(0, item_sd) for its first system (some prompts suit one system of the pair better). The
judge copies the human vote with probability ``copy`` (it agrees with humans more than chance) and otherwise
casts its own vote by Bradley–Terry on the same item, u_i included, with a bias of ``bias`` logits
towards one ``favoured`` system. ``copy = 0`` and ``item_sd`` > 0 is the realistic judge (issue 30): it
tracks each item's preference but never sees the human vote, so with one human vote per item it knows
only the part of that vote the item explains. Only the first ``n_labelled`` items have human votes;
the judge rates all of them.

Issue 34 (:func:`simulate_arena`): arena-shaped files, one vote per conversation with sides randomised,
no annotator column, and several judges (:class:`SimulatedJudge`) of differing quality and position bias.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import expit

from lib.judges.ppi import SkillFit, classical_fit, design, rank_sets, skill_fit

STUDY_COLUMNS = [
    "dataset",
    "system",
    "truth",
    *(f"{est}_{what}" for est in ("human", "judge", "ppi") for what in ("covered", "width")),
    "rank_set_covered",
]
"""Columns of :func:`coverage_study`: per data set and system, whether each interval covers the
true skill and its width (logits), and whether the prediction-powered rank-set holds the true rank."""


def simulate_items(
    rng: np.random.Generator,
    skills: np.ndarray,
    n_items: int,
    *,
    copy: float,
    bias: float,
    favoured: int = 0,
    item_sd: float = 0.0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One data set of items: a random pair each, a human vote and a judge vote.

    Parameters
    ----------
    rng : numpy Generator
    skills : ndarray (K,)
        True skills (logits, summing to zero).
    n_items : int
    copy : float
        Probability in [0, 1] that the judge repeats the human vote.
    bias : float
        Logits added to the favoured system's skill in the judge's own votes.
    favoured : int
        Index of the system the judge favours.
    item_sd : float
        SD (logits) of the items' own preference for their first system, shared by the human and the
        judge's own vote (0: none, and no draw is made, so earlier seeds give the same data).

    Returns
    -------
    (first, second, y, yhat)
        System indices (n_items,) of each item, the human score of ``first`` (0/1) and the judge's.
    """
    k = len(skills)
    first = rng.integers(0, k, n_items)
    second = (first + rng.integers(1, k, n_items)) % k
    gap = skills[first] - skills[second]
    if item_sd > 0:
        gap = gap + rng.normal(0.0, item_sd, n_items)
    y = (rng.random(n_items) < expit(gap)).astype(float)
    lean = bias * ((first == favoured).astype(float) - (second == favoured))
    own = (rng.random(n_items) < expit(gap + lean)).astype(float)
    yhat = np.where(rng.random(n_items) < copy, y, own)
    return first, second, y, yhat


def coverage_study(
    n_sets: int,
    *,
    seed: int = 0,
    n_systems: int = 6,
    n_items: int = 2000,
    n_labelled: int = 300,
    copy: float = 0.6,
    bias: float = 1.0,
    item_sd: float = 0.0,
    level: float = 0.95,
) -> pd.DataFrame:
    """Coverage and width of the human-only, judge-only and prediction-powered intervals.

    Skills are evenly spaced in [-1, 1]; the judge favours the weakest system. Each data set draws
    ``n_items`` items, of which the first ``n_labelled`` carry human votes (a random subset), one
    vote each. ``copy``, ``bias`` and ``item_sd``: :func:`simulate_items`. With ``item_sd`` > 0 the
    true skills (column ``truth``) are the ones Bradley–Terry estimates, :func:`marginal_skills`.

    Returns
    -------
    DataFrame
        :data:`STUDY_COLUMNS`, ``n_sets * n_systems`` rows.
    """
    rng = np.random.default_rng(seed)
    skills = np.linspace(-1.0, 1.0, n_systems)
    truth = marginal_skills(skills, item_sd)
    rows = []
    for d in range(n_sets):
        first, second, y, yhat = simulate_items(rng, skills, n_items, copy=copy, bias=bias, item_sd=item_sd)
        x = design(first, second, n_systems)
        lab = slice(0, n_labelled)
        unl = slice(n_labelled, None)
        fits: dict[str, SkillFit] = {
            "human": classical_fit(x[lab], y[lab], what="human votes"),
            "judge": classical_fit(x, yhat, what="judge votes"),
            "ppi": skill_fit(x[lab], y[lab], yhat[lab], x[unl], yhat[unl]),
        }
        table = pd.DataFrame({"dataset": d, "system": np.arange(n_systems), "truth": truth})
        for name, fit in fits.items():
            low, high = fit.interval(level)
            table[f"{name}_covered"] = (low <= truth) & (truth <= high)
            table[f"{name}_width"] = high - low
        low, high = rank_sets(fits["ppi"], level)
        rank = np.arange(n_systems, 0, -1)  # the skills increase: the last system is first
        table["rank_set_covered"] = (low <= rank) & (rank <= high)
        rows.append(table)
    return pd.concat(rows, ignore_index=True)[STUDY_COLUMNS]


def marginal_skills(skills: np.ndarray, item_sd: float) -> np.ndarray:
    """The skills Bradley–Terry estimates from votes whose items have their own preference.

    A vote of ``first`` over ``second`` has probability E_u logistic(s_first - s_second + u), u ~ N(0,
    item_sd), flatter than logistic(s_first - s_second): Bradley–Terry fitted to the expected votes of
    every ordered pair (the items' pairs are uniform, :func:`simulate_items`) gives the skills it
    estimates, shrunk towards 0 (u integrated by 40-node Gauss-Hermite).

    Parameters
    ----------
    skills : ndarray (K,)
        Skills (logits, summing to zero) of the votes' model.
    item_sd : float
        SD of the items' own preference (logits); 0 returns ``skills``.

    Returns
    -------
    ndarray (K,)
        Logits, summing to zero.
    """
    if item_sd == 0:
        return skills
    k = len(skills)
    first, second = np.nonzero(~np.eye(k, dtype=bool))
    z, w = np.polynomial.hermite_e.hermegauss(40)
    p = expit((skills[first] - skills[second])[:, None] + item_sd * z) @ (w / w.sum())
    return classical_fit(design(first, second, k), p, what="expected votes").skill


@dataclass(frozen=True)
class SimulatedJudge:
    """An LLM judge of the simulated arena (:func:`simulate_arena`).

    Attributes
    ----------
    name : str
    noise : float
        Standard deviation (logits) of its own error on an item's quality gap: 0 reads the two responses
        as the humans' shared view of them does, a large value judges by the systems' skills alone.
    picks_first : float
        Probability in [0, 1] that it answers "the first response" without reading; its first-position
        bias (the first-shown system's win rate over 1/2, :func:`lib.judges.quality.position_bias`) is
        then exactly ``picks_first / 2`` (1: a judge that always answers "A").
    tie_band : float
        Its verdict is a tie when its latent preference lies within +-tie_band (logits).
    """

    name: str
    noise: float
    picks_first: float = 0.0
    tie_band: float = 0.3


ARENA_JUDGES = (
    SimulatedJudge("judge-good", noise=0.5),
    SimulatedJudge("judge-noisy", noise=2.0, tie_band=0.8),
    SimulatedJudge("judge-first", noise=1.0, picks_first=0.72),
)
"""Three judges of differing quality; the last answers "first" in 72% + 28% / 2 = 86% of its verdicts (the
first-position rate of gpt-3.5-turbo on the issue's arena file)."""


def simulate_arena(
    rng: np.random.Generator,
    *,
    n_systems: int = 20,
    n_votes: int = 27_000,
    n_twice: int = 9,
    judges: tuple[SimulatedJudge, ...] = ARENA_JUDGES,
    item_sd: float = 1.5,
    tie_band: float = 0.4,
    first_share: float = 0.5,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.Series]:
    """Arena-shaped files: one human vote per conversation on a random pair, sides randomised, and the judges'
    verdicts on the same conversations in the same order.

    Each conversation i has a quality gap ``z_i = s_first - s_second + e_i``, ``e_i ~ N(0, item_sd^2)``
    (how good the two responses were this time, which humans and judges both see). A human's latent
    preference is ``z_i`` plus standard logistic noise: the first system wins above ``tie_band``, loses below
    ``-tie_band``, else a tie. A judge adds its own ``N(0, noise^2)`` error and logistic noise, with its own
    tie band, unless it answers "first" unread (``picks_first``).

    Parameters
    ----------
    rng : numpy Generator
    n_systems : int
        Systems ``s00``, ``s01``, ...; skills evenly spaced in [-1, 1] (logits), ``s00`` the strongest.
    n_votes : int
        Human votes; ``n_twice`` conversations get two votes (and every judge two verdicts on them).
    judges : tuple of SimulatedJudge
    item_sd : float
        Spread of the conversations' own quality gaps (logits).
    tie_band : float
        The humans' tie band (logits).
    first_share : float
        Probability that the system first by name is shown first (0.5: sides randomised per vote).

    Returns
    -------
    (humans, verdicts, skills)
        ``humans``: ``prompt_id, system_a, system_b, winner`` (``model_a`` / ``model_b`` / ``tie``, system_a
        shown first), the arena's shape, no annotator column; ``verdicts``: the same columns and ``judge``;
        ``skills``: the true skills by system.
    """
    names = np.array([f"s{k:02d}" for k in range(n_systems)])
    skills = np.linspace(1.0, -1.0, n_systems)
    n_conv = n_votes - n_twice
    low = rng.integers(0, n_systems, n_conv)
    high = (low + rng.integers(1, n_systems, n_conv)) % n_systems
    low, high = np.minimum(low, high), np.maximum(low, high)
    low_first = rng.random(n_conv) < first_share
    first, second = np.where(low_first, low, high), np.where(low_first, high, low)
    gap = skills[first] - skills[second] + rng.normal(0.0, item_sd, n_conv)
    conv = np.concatenate([np.arange(n_conv), np.arange(n_twice)])  # the first n_twice conversations twice
    first, second, gap = first[conv], second[conv], gap[conv]

    def verdict(latent: np.ndarray, band: float) -> np.ndarray:
        return np.select([latent > band, latent < -band], ["model_a", "model_b"], "tie")

    def noise(m: int) -> np.ndarray:
        return rng.logistic(0.0, 1.0, m)

    base = pd.DataFrame({"prompt_id": [f"c{i:05d}" for i in conv], "system_a": names[first], "system_b": names[second]})
    humans = base.assign(winner=verdict(gap + noise(len(conv)), tie_band))
    rows = []
    for judge in judges:
        latent = gap + rng.normal(0.0, judge.noise, len(conv)) + noise(len(conv))
        answer = np.where(rng.random(len(conv)) < judge.picks_first, "model_a", verdict(latent, judge.tie_band))
        rows.append(base.assign(judge=judge.name, winner=answer))
    return humans, pd.concat(rows, ignore_index=True), pd.Series(skills, index=names)
