"""Arena votes and annotators' scores simulated by the ranking model (:mod:`lib.ranking.model`): tests,
benchmarks; and the simulation study the Leaderboard page shows, active sampling
(:func:`lib.ranking.active.next_batch`) against uniform sampling."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import expit, logit

from lib.errors import SettingsError
from lib.judgments.formats import DEFAULT_CRITERION, VOTE_COLUMNS
from lib.ranking.active import next_batch
from lib.ranking.bradley_terry import BradleyTerry, PairDataset


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
    prompt_system_sd: float = 0.0,
    skills: Sequence[float] | None = None,
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
    prompt_system_sd : float
        SD (logits) of a prompt x system effect u_jk added to each skill on prompt j: votes on one
        prompt are then dependent (clustered), as the model does not assume.
    skills : sequence of float, optional
        The skills (logits) of the ``n_systems`` systems, as given (not centred); default: drawn with SD ``skill_sd``.
    seed : int

    Returns
    -------
    votes : DataFrame
        ``lib.judgments.formats.VOTE_COLUMNS`` (+ ``first``), one row per vote, one annotator id per vote.
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
    if skills is not None:  # after the draw: the rest of the simulation is the same for a given seed
        skill = np.asarray(skills, dtype=float)
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
    if prompt_system_sd > 0:
        u = rng.normal(0.0, prompt_system_sd, (n_prompts, n_systems))
        location += u[j, b] - u[j, a]
    location += position_bias * side
    threshold = float(logit((1 + tie_rate) / 2))
    winner = _winners(rng.random(n_votes), alpha[j] * location, alpha[j] * threshold)
    names = np.array(systems, dtype=object)
    votes = pd.DataFrame(
        {
            "prompt_id": np.array(prompts, dtype=object)[j],
            "system_a": names[a],
            "system_b": names[b],
            "annotator_id": [f"r{n}" for n in range(n_votes)],
            "winner": winner,
            "criterion": DEFAULT_CRITERION,
        },
        columns=VOTE_COLUMNS,
    ).astype(str)
    if position_bias != 0:
        votes["first"] = np.where(side > 0, names[b], names[a]).astype(str)
    truth = {
        "skill": skill,
        "alpha": alpha,
        "b": threshold,
        "gamma": float(position_bias),
        "delta": delta,
        "systems": systems,
        "prompts": prompts,
    }
    return votes, truth


def simulate_ratings(
    n_systems: int,
    n_prompts: int,
    n_annotators: int,
    *,
    n_categories: int = 5,
    raters_per_cell: int = 2,
    skill_sd: float = 1.0,
    eta_sd: float = 0.5,
    log_alpha_sd: float = 0.3,
    severity_sd: float = 1.0,
    confounding: float = 0.0,
    unpaired: bool = False,
    seed: int = 0,
) -> tuple[pd.DataFrame, dict]:
    """Simulate Likert scores of systems on prompts by annotators who each rate a subset of the cells.

    The scores follow the ratings likelihood of :mod:`lib.ranking.model` with annotator severity,
    ``P(y >= c) = logistic(alpha_j (s_k + eta_j - zeta_r - b_c))``, scores 1..``n_categories`` and
    thresholds b evenly spaced on [-2, 2]. Every (prompt, system) cell is scored by
    ``raters_per_cell`` distinct annotators, drawn without replacement with weights
    ``exp(confounding * z(zeta_r) * z(s_k))`` (z: standardised over annotators / systems): 0 gives a
    random design; > 0 makes severe annotators rate mostly the best systems (and lenient ones the
    worst), a design in which mean scores understate the gaps between systems. ``unpaired``: each
    prompt is answered by one system only (prompt j by system j mod K, as dialogs of one system
    each), so skills and prompt effects are told apart only through sigma_eta.

    Parameters
    ----------
    n_systems, n_prompts, n_annotators : int
        Sizes; systems are named ``sys000``..., prompts ``p00000``..., annotators ``r000``...
    n_categories : int
        Points of the Likert scale (at least 2).
    raters_per_cell : int
        Annotators per (prompt, system) cell, 1..``n_annotators``.
    skill_sd, eta_sd, log_alpha_sd, severity_sd : float
        SDs (logits) of the skills s_k, prompt effects eta_j, log alpha_j and severities zeta_r;
        skills and severities are centred to sum to zero.
    confounding : float
        Tilt of who rates what (above).
    unpaired : bool
        One system per prompt (above) instead of every system on every prompt.
    seed : int

    Returns
    -------
    scores : DataFrame
        ``prompt_id, system, annotator_id, score`` (int 1..``n_categories``), one row per score.
    truth : dict
        ``skill`` (K,), ``eta`` (J,), ``alpha`` (J,), ``severity`` (R,), ``b`` (C - 1,), ``systems``,
        ``prompts``, ``annotators`` (lists).
    """
    if n_categories < 2 or not 1 <= raters_per_cell <= n_annotators:
        raise ValueError("need n_categories >= 2 and 1 <= raters_per_cell <= n_annotators")
    rng = np.random.default_rng(seed)
    width = max(3, len(str(n_systems - 1)))
    systems = [f"sys{k:0{width}d}" for k in range(n_systems)]
    prompts = [f"p{j:05d}" for j in range(n_prompts)]
    annotators = [f"r{r:03d}" for r in range(n_annotators)]
    skill = rng.normal(0.0, skill_sd, n_systems)
    skill -= skill.mean()
    eta = rng.normal(0.0, eta_sd, n_prompts)
    alpha = np.exp(rng.normal(0.0, log_alpha_sd, n_prompts))
    severity = rng.normal(0.0, severity_sd, n_annotators)
    severity -= severity.mean()
    b = np.linspace(-2.0, 2.0, n_categories - 1)

    def z(x):
        return (x - x.mean()) / x.std() if x.std() > 0 else np.zeros_like(x)

    # Gumbel top-k: sampling without replacement in proportion to the weights, all cells at once
    log_w = confounding * np.outer(z(skill), z(severity))  # (K, R)
    keys = log_w[None] + rng.gumbel(size=(n_prompts, n_systems, n_annotators))
    raters = np.argsort(-keys, axis=2)[:, :, :raters_per_cell]  # (J, K, n per cell)
    j, k, _ = np.indices(raters.shape)
    kept = (j % n_systems == k).ravel() if unpaired else np.ones(j.size, dtype=bool)
    j, k, r = j.ravel()[kept], k.ravel()[kept], raters.ravel()[kept]
    at_least = expit(alpha[j, None] * ((skill[k] + eta[j] - severity[r])[:, None] - b[None, :]))  # P(y >= c+1)
    score = 1 + (rng.random(len(j))[:, None] < at_least).sum(axis=1)
    scores = pd.DataFrame(
        {
            "prompt_id": np.array(prompts)[j],
            "system": np.array(systems)[k],
            "annotator_id": np.array(annotators)[r],
            "score": score,
        }
    )
    truth = {
        "skill": skill,
        "eta": eta,
        "alpha": alpha,
        "severity": severity,
        "b": b,
        "systems": systems,
        "prompts": prompts,
        "annotators": annotators,
    }
    return scores, truth


STYLE_SYSTEMS = ("verbose", "concise", "middle", "weak")
"""The systems of :func:`simulate_style_arena`: the first two equally skilled, the first writing longer answers."""


def simulate_style_arena(
    n_votes: int = 3000,
    *,
    coefficient: float = 0.5,
    skills: Sequence[float] = (0.5, 0.5, 0.0, -1.0),
    words: Sequence[float] = (120.0, 50.0, 50.0, 50.0),
    length_sd: float = 0.4,
    n_prompts: int = 300,
    tie_rate: float = 0.1,
    seed: int = 0,
) -> tuple[pd.DataFrame, dict]:
    """Arena votes where annotators prefer the longer answer: style control's check (issue 36 item 1).

    Each vote is a random pair of :data:`STYLE_SYSTEMS` on a random prompt; each answer is plain text of
    ``words`` words on average for its system (log-normal, SD ``length_sd`` on the log scale), so that of the
    style features (:mod:`lib.ranking.style`) only the length varies. The outcome follows
    :func:`simulate_arena`'s rule with alpha = 1 and A's side ``s_a - s_b + coefficient * z_v``, ``z_v`` the
    vote's standardised length feature exactly as the tool computes it (:func:`lib.ranking.style.vote_features`),
    so ``coefficient`` is the true value of the length coefficient the tool estimates.

    Parameters
    ----------
    n_votes, n_prompts : int
    coefficient : float
        Logits per SD of the length feature.
    skills, words : sequence of float
        Per system of :data:`STYLE_SYSTEMS`: skill (logits; centred) and mean answer length (words).
    length_sd : float
    tie_rate : float
        In [0, 1), as :func:`simulate_arena`'s.
    seed : int

    Returns
    -------
    votes : DataFrame
        ``lib.judgments.formats.VOTE_COLUMNS`` + ``response_a, response_b``, one row per vote.
    truth : dict
        ``skill`` (K,), ``coefficient``, ``systems`` (list), ``feature`` ((N,) the standardised length feature).
    """
    from lib.ranking.style import vote_features

    rng = np.random.default_rng(seed)
    k = len(STYLE_SYSTEMS)
    skill = np.asarray(skills, dtype=float) - np.mean(skills)
    a = rng.integers(0, k, n_votes)
    b = (a + rng.integers(1, k, n_votes)) % k
    mean_words = np.log(np.asarray(words, dtype=float)) - length_sd**2 / 2
    length = np.maximum(1, np.round(np.exp(rng.normal(mean_words[np.stack([a, b])], length_sd)))).astype(int)
    texts = [" ".join(["word"] * n) for n in length.ravel()]
    names = np.array(STYLE_SYSTEMS, dtype=object)
    votes = pd.DataFrame(
        {
            "prompt_id": [f"p{j:04d}" for j in rng.integers(0, n_prompts, n_votes)],
            "system_a": names[a],
            "system_b": names[b],
            "annotator_id": [f"r{n}" for n in range(n_votes)],
            "winner": "",
            "criterion": DEFAULT_CRITERION,
            "response_a": texts[:n_votes],
            "response_b": texts[n_votes:],
        }
    )
    style = vote_features(votes)
    z = style.values[:, list(style.names).index("tokens")]
    threshold = float(logit((1 + tie_rate) / 2))
    votes["winner"] = _winners(rng.random(n_votes), skill[b] - skill[a] - coefficient * z, threshold)
    return votes, {"skill": skill, "coefficient": coefficient, "systems": list(STYLE_SYSTEMS), "feature": z}


CATEGORIES = ("general", "coding", "maths", "creative")
"""The categories of :func:`simulate_category_arena`, largest first."""


def simulate_category_arena(
    n_votes: Sequence[int] = (1500, 400, 150, 80),
    *,
    n_systems: int = 6,
    spread: float = 0.4,
    reversal: float = 0.7,
    tie_rate: float = 0.1,
    log_alpha_sd: float = 0.3,
    seed: int = 0,
) -> tuple[pd.DataFrame, dict]:
    """Arena votes with a skill per system and category: categories' check (issue 36 item 2).

    System k's skill in category c is ``s_k + d_kc``: overall skills evenly spaced from 1.25 to -1.25, deviations
    ``d_kc ~ N(0, spread)`` centred within each category, and in the second category (``coding``) systems 1 and 2
    swapped: ``d_1c = -reversal`` and ``d_2c = +reversal`` before centring, so system 2 is above system 1 there
    (by ``2 reversal - 0.5`` logits) though below it overall. Each vote is a random pair on a random prompt of its
    category (a prompt per 5 votes), its outcome as :func:`simulate_arena`'s with alpha_j = exp(N(0,
    ``log_alpha_sd``)).

    Parameters
    ----------
    n_votes : sequence of int
        Votes per category, in the order of :data:`CATEGORIES` (at most 4 categories).
    n_systems : int
        At least 3 (the reversal needs systems 1 and 2).
    spread, reversal, tie_rate, log_alpha_sd : float
        Logits (``tie_rate``: in [0, 1)).
    seed : int

    Returns
    -------
    votes : DataFrame
        ``lib.judgments.formats.VOTE_COLUMNS`` + ``category``, one row per vote.
    truth : dict
        ``skill`` (K,), ``category_skill`` ({category: (K,)}), ``systems``, ``categories`` (lists), ``reversal``
        ((system above overall, system above in the category, category)), ``spread``.
    """
    if not 1 <= len(n_votes) <= len(CATEGORIES) or n_systems < 3:
        raise SettingsError(f"1 to {len(CATEGORIES)} categories and at least 3 systems")
    rng = np.random.default_rng(seed)
    categories = list(CATEGORIES[: len(n_votes)])
    systems = [f"sys{k}" for k in range(n_systems)]
    skill = np.linspace(1.25, -1.25, n_systems)
    deviation = rng.normal(0.0, spread, (len(categories), n_systems))
    if len(categories) > 1:
        deviation[1, 1], deviation[1, 2] = -reversal, reversal
    deviation -= deviation.mean(axis=1, keepdims=True)
    threshold = float(logit((1 + tie_rate) / 2))
    names, parts = np.array(systems, dtype=object), []
    for c, n in enumerate(n_votes):
        a = rng.integers(0, n_systems, n)
        b = (a + rng.integers(1, n_systems, n)) % n_systems
        n_prompts = max(2, n // 5)
        j = rng.integers(0, n_prompts, n)
        alpha = np.exp(rng.normal(0.0, log_alpha_sd, n_prompts))[j]
        s = skill + deviation[c]
        parts.append(
            pd.DataFrame(
                {
                    "prompt_id": [f"{categories[c]}-p{k:04d}" for k in j],
                    "system_a": names[a],
                    "system_b": names[b],
                    "annotator_id": "",
                    "winner": _winners(rng.random(n), alpha * (s[b] - s[a]), alpha * threshold),
                    "criterion": DEFAULT_CRITERION,
                    "category": categories[c],
                }
            )
        )
    votes = pd.concat(parts, ignore_index=True)
    votes["annotator_id"] = [f"r{n}" for n in range(len(votes))]
    truth = {
        "skill": skill,
        "category_skill": {c: skill + deviation[i] for i, c in enumerate(categories)},
        "systems": systems,
        "categories": categories,
        "reversal": (systems[1], systems[2], categories[min(1, len(categories) - 1)]),
        "spread": spread,
    }
    return votes.astype(str), truth


def bt_laplace(
    votes: pd.DataFrame, systems: Sequence[str], *, prior_sd: float = 1.0, draws: int = 500, seed: int = 0
) -> np.ndarray:
    """Fast skill draws for the simulation: Bradley–Terry with a N(0, prior_sd) prior, MAP + Laplace.

    The votes likelihood of the ranking model with alpha_j = 1 and ties as half a win (LMArena's
    rule), maximised by the Bradley–Terry core (:class:`lib.ranking.bradley_terry.BradleyTerry` with the
    prior as a ridge: Newton's method on the exact gradient and Hessian); draws from ``N(mode, H^-1)`` with H
    the negative Hessian of the log posterior. A stand-in for
    ``lib.ranking.fit.fit_ranking(..., sampler="laplace")`` that needs no model compilation (about a
    millisecond for a few systems), so a simulation can refit after every batch.

    Parameters
    ----------
    votes : DataFrame
        Canonical votes: ``system_a``, ``system_b``, ``winner`` in {a, b, tie}.
    systems : sequence of str
        Every system (also those without votes yet), the column order of the draws.
    prior_sd : float
        SD of the skills' prior (logits).
    draws : int
    seed : int

    Returns
    -------
    ndarray, shape (draws, K)
    """
    model = BradleyTerry(skill_ridge=1.0 / prior_sd**2)
    fit = model.fit(PairDataset.from_votes(votes, systems=list(systems)))
    cov = np.linalg.inv(fit.loss.hessian(fit.params))
    return np.random.default_rng(seed).multivariate_normal(fit.skill, cov, draws)


@dataclass
class ActiveSimulation:
    """Votes each rule needed before the true best system had P(best) above the target.

    Attributes
    ----------
    needed : dict
        ``{"uniform": int or None, "active": int or None}``: votes at the first check where the true
        best system's P(best) exceeded the target (None: not within the budget).
    trace : DataFrame
        ``rule, n_votes, p_best``: the true best system's P(best) at every check.
    best : str
        The true best system.
    """

    needed: dict[str, int | None]
    trace: pd.DataFrame
    best: str


def simulate_active_vs_uniform(
    n_systems: int = 6,
    n_prompts: int = 40,
    *,
    fit: Callable[[pd.DataFrame, list[str]], np.ndarray] = bt_laplace,
    start: int = 30,
    batch: int = 10,
    max_votes: int = 2000,
    target: float = 0.95,
    tie_rate: float = 0.1,
    skill_sd: float = 0.5,
    seed: int = 0,
) -> ActiveSimulation:
    """How many votes uniform sampling and active sampling (:func:`lib.ranking.active.next_batch`) need
    to single out the true best system.

    Votes come from :func:`simulate_arena` (its skills, discriminations and
    tie thresholds are the truth). Both rules start from the same first ``start`` uniform votes and
    then add ``batch`` votes at a time: *uniform* a random pair on a random prompt (the arena design),
    *active* the top of ``next_batch`` for the current draws (prompts scored with alpha = 1 and
    the tie threshold of the observed tie share, as the rule does not know the truth). After each
    batch ``fit`` gives skill draws and P(best) of the true best system is recorded.

    Parameters
    ----------
    n_systems, n_prompts : int
        Size of the simulated study.
    fit : callable
        ``fit(votes, systems) -> ndarray (S, K)``: skill draws, columns in ``systems`` order, from
        canonical votes; default :func:`bt_laplace` (fast enough for a page).
    start, batch, max_votes : int
        Initial uniform votes, votes added between checks, and the budget per rule.
    target : float
        P(best) the true best system must exceed.
    tie_rate, skill_sd : float
        Passed to ``simulate_arena``.
    seed : int

    Returns
    -------
    ActiveSimulation

    Raises
    ------
    SettingsError
        Sizes that cannot run (fewer than 2 systems, ``batch`` < 1, ``start`` > ``max_votes``).
    """
    if n_systems < 2 or batch < 1 or not 0 < start <= max_votes:
        raise SettingsError(
            "the simulation needs at least 2 systems, a batch of at least 1 vote and "
            f"0 < start <= max votes (got {n_systems}, {batch}, {start}, {max_votes})"
        )
    uniform, truth = simulate_arena(n_systems, n_prompts, max_votes, tie_rate=tie_rate, skill_sd=skill_sd, seed=seed)
    systems, skill = truth["systems"], truth["skill"]
    best = int(np.argmax(skill))
    rng = np.random.default_rng([seed, 1])
    needed: dict[str, int | None] = {"uniform": None, "active": None}
    trace = []
    for rule in needed:
        votes = uniform.iloc[:start]
        while True:
            p_best = float((np.argmax(fit(votes, systems), axis=1) == best).mean())
            trace.append((rule, len(votes), p_best))
            if p_best > target:
                needed[rule] = len(votes)
                break
            if len(votes) >= max_votes:
                break
            size = min(batch, max_votes - len(votes))
            if rule == "uniform":
                votes = uniform.iloc[: len(votes) + size]
            else:
                ask = next_batch(
                    fit(votes, systems), systems, truth["prompts"], *_prompt_guess(votes, n_prompts), n=size
                )
                votes = pd.concat([votes, _answer(ask, truth, rng, len(votes))], ignore_index=True)
    return ActiveSimulation(needed, pd.DataFrame(trace, columns=["rule", "n_votes", "p_best"]), systems[best])


def _prompt_guess(votes: pd.DataFrame, n_prompts: int) -> tuple[np.ndarray, np.ndarray]:
    """Starting values: alpha = 1 and the antisymmetric tie threshold ``logit((1 + t) / 2)``
    of the observed tie share t."""
    ties = float(np.clip((votes["winner"] == "tie").mean(), 0.01, 0.9))
    threshold = np.log((1 + ties) / (1 - ties))  # logit((1 + t) / 2)
    return np.ones(n_prompts), np.tile([-threshold, threshold], (n_prompts, 1))


def _answer(ask: pd.DataFrame, truth: dict, rng: np.random.Generator, first_id: int) -> pd.DataFrame:
    """Votes on the asked (pair, prompt)s drawn from the true model (``simulate_arena``'s outcome rule)."""
    index = {s: k for k, s in enumerate(truth["systems"])}
    prompt = {p: j for j, p in enumerate(truth["prompts"])}
    location = truth["skill"][ask["system_b"].map(index)] - truth["skill"][ask["system_a"].map(index)]
    alpha = truth["alpha"][ask["prompt_id"].map(prompt)]
    winner = _winners(rng.random(len(ask)), alpha * location, alpha * truth["b"])
    return pd.DataFrame(
        {
            "prompt_id": ask["prompt_id"],
            "system_a": ask["system_a"],
            "system_b": ask["system_b"],
            "annotator_id": [f"r{first_id + n}" for n in range(len(ask))],
            "winner": winner,
            "criterion": DEFAULT_CRITERION,
        }
    )


def _winners(u: np.ndarray, location: np.ndarray, threshold) -> np.ndarray:
    """The votes' outcomes "a" / "tie" / "b" from uniforms ``u`` under ``P(B better) = logistic(location -
    threshold)``, ``P(A better) = 1 - logistic(location + threshold)`` (location: B's side, logits)."""
    p_b, p_not_a = expit(location - threshold), expit(location + threshold)
    return np.where(u < p_b, "b", np.where(u < p_not_a, "tie", "a"))
