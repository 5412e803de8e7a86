"""Arena-like synthetic votes from the ranking model (:mod:`lib.ranking.model`), for tests and benchmarks."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.special import expit, logit

from lib.formats import DEFAULT_CRITERION, VOTE_COLUMNS


def simulate_arena(
    n_systems: int,
    n_prompts: int,
    n_votes: int,
    *,
    tie_rate: float = 0.1,
    skill_sd: float = 1.0,
    log_alpha_sd: float = 0.3,
    position_bias: float = 0.0,
    intransitive: tuple[int, int, float] | None = None,
    seed: int = 0,
) -> tuple[pd.DataFrame, dict]:
    """Simulate votes of an arena: each vote is a random pair of systems on a random prompt.

    The outcome follows the votes likelihood of :mod:`lib.ranking.model`, ``P(y >= c) =
    logistic(alpha_j (s_B - s_A + delta_AB + gamma side - b_c))`` with antisymmetric thresholds
    ``+-b``, ``b = logit((1 + tie_rate) / 2)``, so that a tie has probability ``tie_rate`` between equal
    systems on a prompt with alpha_j = 1.

    Parameters
    ----------
    n_systems, n_prompts, n_votes : int
        Sizes; systems are named ``sys000``..., prompts ``p00000``...
    tie_rate : float
        In [0, 1); 0 gives no ties (Bradley-Terry votes when ``log_alpha_sd`` is 0).
    skill_sd : float
        SD of the skills (logits), centred to sum to zero.
    log_alpha_sd : float
        SD of log alpha_j.
    position_bias : float
        gamma (logits) added on the side of the system shown first; when not 0 the votes get a
        ``first`` column (the system shown first, either side with probability 1/2).
    intransitive : (int, int, float), optional
        ``(i, k, delta)``: system k beats system i by ``delta`` logits more than their skills imply.
    seed : int

    Returns
    -------
    votes : DataFrame
        ``lib.formats.VOTE_COLUMNS`` (+ ``first``), one row per vote, one annotator id per vote.
    truth : dict
        ``skill`` (K,), ``alpha`` (J,), ``b`` (float), ``gamma`` (float), ``delta`` ({(system A,
        system B): delta} with A < B), ``systems`` (list), ``prompts`` (list).
    """
    if not 0 <= tie_rate < 1:
        raise ValueError("tie_rate must be in [0, 1)")
    rng = np.random.default_rng(seed)
    width = max(3, len(str(n_systems - 1)))
    systems = [f"sys{k:0{width}d}" for k in range(n_systems)]
    prompts = [f"p{j:05d}" for j in range(n_prompts)]
    skill = rng.normal(0.0, skill_sd, n_systems)
    skill -= skill.mean()
    alpha = np.exp(rng.normal(0.0, log_alpha_sd, n_prompts))
    a = rng.integers(0, n_systems, n_votes)
    b = (a + rng.integers(1, n_systems, n_votes)) % n_systems  # any other system, uniformly
    j = rng.integers(0, n_prompts, n_votes)
    location = skill[b] - skill[a]
    delta = {}
    if intransitive is not None:
        i, k, d = intransitive
        location += d * ((a == i) & (b == k)) - d * ((a == k) & (b == i))
        low, high = sorted((i, k))
        delta[(systems[low], systems[high])] = d if high == k else -d
    side = rng.choice([-1.0, 1.0], n_votes)  # +1: B shown first
    location += position_bias * side
    threshold = float(logit((1 + tie_rate) / 2))
    u = rng.random(n_votes)
    p_not_a = expit(alpha[j] * (location + threshold))
    p_b = expit(alpha[j] * (location - threshold))
    winner = np.where(u < p_b, "b", np.where(u < p_not_a, "tie", "a"))
    names = np.array(systems, dtype=object)
    votes = pd.DataFrame({
        "prompt_id": np.array(prompts, dtype=object)[j], "system_a": names[a], "system_b": names[b],
        "annotator_id": [f"r{n}" for n in range(n_votes)], "winner": winner, "criterion": DEFAULT_CRITERION,
    }, columns=VOTE_COLUMNS).astype(str)
    if position_bias != 0:
        votes["first"] = np.where(side > 0, names[b], names[a]).astype(str)
    truth = {"skill": skill, "alpha": alpha, "b": threshold, "gamma": float(position_bias), "delta": delta,
             "systems": systems, "prompts": prompts}
    return votes, truth
