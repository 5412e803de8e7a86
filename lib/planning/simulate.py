"""One simulated study: true skills, the chosen prompts and every annotator's judgment, drawn from
the graded response model (Samejima 1969; Sedoc & Ungar 2020) or, for checks, a normal model."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np

from lib.irt.readouts import category_probs, judgment_probs
from lib.planning.design import Assumptions, Design
from lib.selection.strategies import STRATEGIES as SELECTION_STRATEGIES


@dataclass
class Study:
    """A simulated study and the truth behind it.

    Attributes
    ----------
    scores : ndarray, shape (I, J, n), float
        Annotator k's judgment of comparison i on prompt j: a category value (e.g. -1 = A
        better, 0 = tie, 1 = B better) or, under the normal model, a difference score.
    categories : ndarray, shape (K,), or None
        The ordered category values (None under the normal model).
    theta : ndarray, shape (I,)
        True ability of each comparison (B minus A, logits).
    pairs : ndarray, shape (I, 2), int
        System index of A and B.
    skills : ndarray, shape (S,)
        True skills, for Kendall's tau (least squares on theta for a pilot).
    target : ndarray, shape (I,), bool
        Comparisons whose difference is of the stated size: power is read on them.
    alpha : ndarray, shape (J,)
        True discrimination of the chosen prompts.
    b : ndarray, shape (J, K-1), or None
        Their true thresholds (None under the normal model).
    systems : ndarray, shape (S,), str
        System names: the pilot's, or ``S1..Sn`` by true skill (S1 the weakest) for stated assumptions.
    prompts : ndarray, shape (J,), int
        The chosen prompts' index in the bank.
    """

    scores: np.ndarray
    categories: np.ndarray | None
    theta: np.ndarray
    pairs: np.ndarray
    skills: np.ndarray
    target: np.ndarray
    alpha: np.ndarray
    b: np.ndarray | None
    systems: np.ndarray
    prompts: np.ndarray

    def pair_names(self) -> list[tuple[str, str]]:
        """(system_a, system_b) of every comparison."""
        return [(str(self.systems[x]), str(self.systems[y])) for x, y in self.pairs]


def seeds(seed: int, design: Design, replicate: int, null: bool = False) -> tuple[np.random.Generator, ...]:
    """Random streams of one replicate: (truth and bank, prompt choice, judgments).

    Derived with ``numpy.random.SeedSequence`` from (seed, replicate), (prompts), (prompts,
    annotators), never from the strategy or the analysis: the designs of one size share their
    truths and bank (common random numbers), so their differences are not Monte-Carlo noise, and
    a replicate gives the same numbers wherever it runs. The ``null`` study of a replicate shares
    its bank and prompts but draws its judgments from a stream of its own.
    """
    keys = ((0,), (1, design.prompts), (3 if null else 2, design.prompts, design.annotators))
    return tuple(np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(replicate, *k))) for k in keys)


def _pairs(n_systems: int, comparisons: int | None) -> np.ndarray:
    """System pairs, neighbours (by index) first, then pairs two apart, ..."""
    pairs = sorted(combinations(range(n_systems), 2), key=lambda p: (p[1] - p[0], p[0]))
    return np.array(pairs[:comparisons] if comparisons else pairs, dtype=np.int64)


def skills_from_theta(theta: np.ndarray, pairs: np.ndarray, n_systems: int) -> np.ndarray:
    """Skills s (shape (S,), summing to 0) whose differences s_b - s_a fit the comparisons' thetas
    (shape (I,)) in least squares; ``pairs`` (I, 2) holds each comparison's system index of A, B."""
    design = np.zeros((len(pairs) + 1, n_systems))
    design[np.arange(len(pairs)), pairs[:, 1]] = 1.0
    design[np.arange(len(pairs)), pairs[:, 0]] = -1.0
    design[-1] = 1.0
    return np.linalg.lstsq(design, np.append(theta, 0.0), rcond=None)[0]


def simulate_study(
    assumptions: Assumptions, design: Design, seed: int = 0, replicate: int = 0, *, null: bool = False
) -> Study:
    """Draw one study of ``design`` under ``assumptions``.

    Skills, the prompt bank, the choice of prompts and the judgments are drawn from the streams of
    :func:`seeds`. Each annotator's judgment of a (comparison, prompt) cell is a category of the GRM
    ``P(u >= c) = logistic(alpha_j (theta_ijk - b_jc))``, ``theta_ijk = theta_i + e_ij + a_ik`` with the
    prompt x comparison effect ``e_ij ~ N(0, item_sd)`` shared by the cell's annotators and the annotator x
    comparison effect ``a_ik ~ N(0, annotator_sd)`` shared by annotator k's prompts (both 0 by default; under
    the normal model a judgment is ``N(theta_ijk, 1)``, Card et al. 2020's paired difference): with stated
    assumptions three categories (A better, tie, B better) with thresholds ``+-b_j``,
    ``alpha_j b_j = logit((1 + tie_rate) / 2)``;
    with a pilot the truth is the pilot's MAP thetas (with variance components, the thetas they imply:
    :meth:`lib.planning.design.PilotBank.true_theta`) and each judgment one of the pilot's (one vote,
    or one cell), with its alpha and b. ``top_alpha`` takes the bank's prompts of highest (estimated)
    alpha, of a pilot only those whose alpha it informs, then the others at random; ``random`` a random
    subset.

    Parameters
    ----------
    assumptions : Assumptions
    design : Design
    seed : int
        The plan's seed.
    replicate : int
        Index of this study among the plan's replicates.
    null : bool
        The replicate's null twin: the same truth, bank and prompts, but the comparisons of the
        stated size (``target``) at theta 0 while the others keep theirs, judgments from their own
        stream (:func:`seeds`). It calibrates analyses by simulation under the null hypothesis of
        those comparisons; with ``effect = 0`` every theta is 0.

    Returns
    -------
    Study

    Raises
    ------
    SettingsError
        Invalid assumptions or design.
    """
    assumptions.validate()
    design.validate(assumptions)
    truth_rng, choice_rng, judgment_rng = seeds(seed, design, replicate, null)
    a = assumptions
    informed = None
    if a.pilot is not None:
        pairs, theta = a.pilot.pairs, a.pilot.true_theta()
        skills = skills_from_theta(theta, pairs, len(a.pilot.systems))
        target = a.targets()
        bank_alpha, bank_b, categories = a.pilot.alpha, a.pilot.b, a.pilot.categories
        true_alpha, true_b = bank_alpha, bank_b
        informed = a.pilot.informed
        names = a.pilot.systems
    else:
        pairs = _pairs(a.n_systems, a.comparisons)
        if a.skill_sd > 0:
            skills = truth_rng.normal(0.0, a.skill_sd, a.n_systems)
        else:  # spaced by the effect, in a random order
            skills = truth_rng.permutation(a.effect * (np.arange(a.n_systems) - (a.n_systems - 1) / 2))
        theta = skills[pairs[:, 1]] - skills[pairs[:, 0]]
        target = np.isclose(np.abs(theta), a.effect) if a.skill_sd == 0 else np.abs(theta) >= a.effect
        bank_alpha = np.exp(truth_rng.normal(0.0, a.log_alpha_sd, a.bank_size))
        half = np.log1p(a.tie_rate) - np.log1p(-a.tie_rate)  # logit((1 + tie) / 2)
        bank_b = np.stack([-half / bank_alpha, half / bank_alpha], axis=1)
        categories = np.array([-1, 0, 1])
        true_alpha, true_b = bank_alpha, bank_b
        names = np.empty(a.n_systems, dtype=object)  # by true skill: S1 the weakest
        names[np.argsort(skills, kind="stable")] = [f"S{k + 1}" for k in range(a.n_systems)]
    chosen = SELECTION_STRATEGIES[design.strategy].draw(bank_alpha, design.prompts, choice_rng, informed)
    alpha, b = true_alpha[chosen], true_b[chosen]
    if null:
        theta = np.where(target, 0.0, theta)
    shape = (len(theta), design.prompts, design.annotators)
    judged = theta[:, None, None]  # theta of each judgment: comparison + prompt x comparison + annotator effects
    if a.item_sd > 0:  # shared by the cell's annotators
        judged = judged + a.item_sd * judgment_rng.standard_normal(shape[:2])[..., None]
    if a.annotator_sd > 0:  # shared by the annotator's prompts (the same people judge every prompt)
        judged = judged + a.annotator_sd * judgment_rng.standard_normal((shape[0], 1, shape[2]))
    if a.response == "normal":
        scores = judgment_rng.normal(np.broadcast_to(judged, shape), 1.0, shape)
        return Study(scores, None, theta, pairs, skills, target, alpha, None, names, chosen)
    if a.item_sd > 0 or a.annotator_sd > 0:  # P(u >= c) = logistic(alpha_j (theta_ijk - b_jc)) per judgment
        cum = judgment_probs(judged, alpha[:, None], b[:, None, :]).cumsum(axis=-1)  # (I, J, n or 1, K)
    else:
        cum = category_probs(theta, alpha, b).cumsum(axis=-1)[:, :, None, :]  # (I, J, 1, K)
    u = judgment_rng.random(shape)
    codes = np.minimum((u[..., None] > cum).sum(axis=-1), len(categories) - 1)
    return Study(categories[codes].astype(float), categories, theta, pairs, skills, target, alpha, b, names, chosen)
