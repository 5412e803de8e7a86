"""What to annotate next: the (system pair, prompt) judgments that most reduce ranking uncertainty.

Chatbot Arena (Chiang et al. 2024, "Chatbot Arena: An Open Platform for Evaluating LLMs by Human
Preference", ICML 2024, sec. 5, its active-sampling rule) samples the pair whose next vote most shrinks its confidence
interval. Here the same idea runs on the posterior of the ranking model. For the pair (A, B) with
``d = s_B - s_A`` and a vote on prompt j, in a Gaussian (Laplace) approximation of the posterior:

    score(A, B, j) = w_AB * (sd(d) - sd'(d)),   sd'(d)^2 = V / (1 + V I_j),   V = Var(d)

* ``w_AB = P(A, B adjacent at the boundary) * 4 p (1 - p)``: how much of the ranking's undecidedness
  the order of A and B carries. With ``focus`` = k the boundary is between ranks k and k + 1 (k = 1:
  which system is best; the order of A and B decides it exactly in the draws where they are the top
  two); with no focus every pair of adjacent ranks counts. ``p = P(s_B above s_A | adjacent at the
  boundary)``, so ``4 p (1 - p)`` (in [0, 1]) is the variance of their order where it matters: a
  pair already ordered for sure, or never at the boundary, gains nothing.
* ``I_j = E[I_j(d)]``: the Fisher information of one vote on prompt j about d under the graded
  response model (Samejima 1969; ``lib.irt.readouts.item_information``), averaged over the posterior of
  d. It grows with the prompt's discrimination alpha_j and is largest where its thresholds sit near d.
* ``sd(d) - sd'(d)``: the vote's expected shrinkage of the pair's posterior sd (logits), as in
  Arena's rule; one vote of information I is a Gaussian observation of d with precision I.

A batch of N is chosen greedily: after each pick the skills' covariance gets the rank-one update
of that observation, ``Sigma <- Sigma - I Sigma x x' Sigma / (1 + I x' Sigma x)`` (x = e_B - e_A),
so a batch spreads over pairs and prompts and also credits what a vote says about other pairs
sharing a system. p stays at its current value (the outcomes are unknown).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from lib.errors import SettingsError
from lib.irt.readouts import item_information

NEXT_COLUMNS = ["system_a", "system_b", "prompt_id", "score"]
RELATIVE = "relative_score"
"""Column added after ``score`` by :func:`relative_scores`: each row's score over the first row's."""
NEGLIGIBLE = 0.01
"""A row of a batch whose score is below this share of the first row's is expected to change the ranking's
uncertainty by a sliver of what the first does (a pilot's batch read 0.185, 0.026, then rows down to 1e-15):
asking it matters little, and the command and the page say so (:func:`negligible_note`)."""
NEGLIGIBLE_NOTE = (
    "Rows {first} to {n} of the next batch are each expected to reduce the ranking's uncertainty by less than "
    "{share:.0%} of what row 1 does (column relative_score): they matter little; {kept} the batch."
)
GRID = np.linspace(-8.0, 8.0, 161)
"""Values of d (logits) where the prompts' information is tabulated; draws outside are clipped."""
CHUNK = 20_000_000
"""Largest (pairs x prompts) block of expected information held at once (160 MB of float64)."""
MIN_SHARE = 0.01
"""A pair is undecided when each of its two orders occurs at the boundary in at least this share of the
draws (10 of 1,000): rarer flips are Monte-Carlo noise, and a batch scored by them is rows of zeros."""
MAX_PAIRS = 5_000
"""At most this many undecided pairs (the most undecided) are candidates: the batch's memory is
draws x pairs, and a leaderboard of K systems has K (K - 1) / 2 pairs."""


def next_batch(
    skills: np.ndarray,
    systems: Sequence[str],
    prompt_ids: Sequence[str],
    alpha: np.ndarray,
    cutpoints: np.ndarray,
    n: int = 20,
    *,
    focus: int | None = 1,
    component: np.ndarray | None = None,
) -> pd.DataFrame:
    """The N (pair, prompt) judgments to ask for next, best first (module docstring: the score).

    Parameters
    ----------
    skills : ndarray, shape (S, K)
        Posterior (or Laplace) draws of the skills, logits, columns in ``systems`` order; S >= 2.
    systems : sequence of str, length K
    prompt_ids : sequence of str, length J
        Candidate prompts.
    alpha : ndarray, shape (J,)
        Discrimination of each candidate prompt (posterior mean), > 0.
    cutpoints : ndarray, shape (J, C - 1)
        Ordered thresholds b_jc of each prompt's vote outcome (C categories, e.g. 3 for A better /
        tie / B better), in ``P(outcome >= c) = logistic(alpha_j (s_B - s_A - b_jc))``.
    n : int
        Batch size, >= 1; fewer rows when there are fewer candidates.
    focus : int or None
        Rank boundary to resolve: 1 (default) who is best, k who is in the top k, None the whole
        ranking (every boundary between adjacent ranks).
    component : ndarray (K,) of int, optional
        Component of each system in the comparison graph (ranks within each; no pair across).

    Returns
    -------
    DataFrame
        ``system_a, system_b, prompt_id, score`` (``system_a`` alphabetically first; score in logits
        of posterior sd, weighted by the pair's undecidedness), in the order chosen; only pairs
        that are undecided (:func:`undecided_pairs`): empty when the ranking at ``focus`` is settled.

    Raises
    ------
    SettingsError
        ``n`` < 1, ``focus`` outside 1..K-1, or prompt parameters that do not match ``prompt_ids``.
    ValueError
        ``skills`` does not have one column per system, or fewer than two draws.
    """
    skills = np.asarray(skills, dtype=float)
    if skills.ndim != 2 or skills.shape[1] != len(systems) or skills.shape[0] < 2:
        raise ValueError(f"skills must have shape (draws >= 2, {len(systems)}), got {skills.shape}")
    alpha, cutpoints = np.asarray(alpha, dtype=float), np.asarray(cutpoints, dtype=float)
    if n < 1:
        raise SettingsError(f"the batch size must be at least 1, not {n}")
    if focus is not None and not 1 <= focus < len(systems):
        raise SettingsError(f"the rank boundary to resolve must be between 1 and {len(systems) - 1}, not {focus}")
    if alpha.shape != (len(prompt_ids),) or cutpoints.ndim != 2 or len(cutpoints) != len(prompt_ids):
        raise SettingsError(
            f"prompt parameters for {len(prompt_ids)} prompts expected, got alpha {alpha.shape} "
            f"and cutpoints {cutpoints.shape}"
        )
    ia, ib, weight = undecided_pairs(skills, systems, focus, component)
    if not len(ia):
        return pd.DataFrame(columns=NEXT_COLUMNS).astype({"score": float})
    used = np.unique(np.concatenate([ia, ib]))  # the covariance of the candidates' systems only
    skills = skills[:, used]
    ia, ib = np.searchsorted(used, ia), np.searchsorted(used, ib)
    systems = [systems[i] for i in used]
    d = skills[:, ib] - skills[:, ia]  # (S, P)

    keep = min(n, len(prompt_ids))
    best_prompts, best_info = _most_informative(d, alpha, cutpoints, keep)  # (P, keep) each, descending
    cov = np.atleast_2d(np.cov(skills, rowvar=False))
    nxt = np.zeros(len(ia), dtype=np.int64)
    rows = []
    for _ in range(min(n, len(ia) * keep)):
        var = np.maximum(cov[ia, ia] + cov[ib, ib] - 2.0 * cov[ia, ib], 0.0)
        info = np.where(nxt < keep, best_info[np.arange(len(ia)), np.minimum(nxt, keep - 1)], 0.0)
        gain = weight * (np.sqrt(var) - np.sqrt(var / (1.0 + var * info)))
        gain[nxt >= keep] = -np.inf
        pick = int(np.argmax(gain))
        rows.append((systems[ia[pick]], systems[ib[pick]], prompt_ids[best_prompts[pick, nxt[pick]]], gain[pick]))
        x = np.zeros(len(systems))
        x[ib[pick]], x[ia[pick]] = 1.0, -1.0
        sx = cov @ x
        cov = cov - info[pick] * np.outer(sx, sx) / (1.0 + info[pick] * x @ sx)
        nxt[pick] += 1
    return pd.DataFrame(rows, columns=NEXT_COLUMNS)


def relative_scores(batch: pd.DataFrame) -> pd.DataFrame:
    """The batch with :data:`RELATIVE` after ``score``: each row's score over the first row's, in (0, 1].

    Scores span orders of magnitude (one vote on a very discriminating prompt can all but settle a pair,
    and the rows after it gain little): relative to the best row they rank at a glance, where scores
    rounded for display read 0. The first row has the largest score (the greedy choice takes it first, and
    later covariance updates only shrink the gains). An empty batch gets an empty column, one whose first
    score is 0 (no judgment informs) zeros.
    """
    out = batch.copy()
    first = float(batch["score"].iloc[0]) if len(batch) else 0.0
    score = batch["score"].to_numpy(float)
    relative = np.divide(score, first, out=np.zeros_like(score), where=first > 0)
    out.insert(out.columns.get_loc("score") + 1, RELATIVE, relative)
    return out


def negligible_note(batch: pd.DataFrame) -> str | None:
    """:data:`NEGLIGIBLE_NOTE` when the batch ends in rows that each score below :data:`NEGLIGIBLE` of the
    first (``batch`` with :data:`RELATIVE`); None when its last row counts."""
    counts = np.flatnonzero(batch[RELATIVE].to_numpy() >= NEGLIGIBLE)  # row 1, unless no row informs
    first = int(counts[-1]) + 2 if len(counts) else len(batch) + 1  # 1-based: the row after the last that counts
    if first > len(batch):
        return None
    kept = "row 1 alone carries" if first == 2 else f"rows 1 to {first - 1} carry"
    return NEGLIGIBLE_NOTE.format(first=first, n=len(batch), share=NEGLIGIBLE, kept=kept)


def undecided_pairs(
    skills: np.ndarray, systems: Sequence[str], focus: int | None = 1, component: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The pairs whose order at a rank boundary is undecided, with ``w_AB`` of the module docstring.

    Parameters
    ----------
    skills : ndarray, shape (S, K)
    systems : sequence of str, length K
    focus : int or None
        Rank boundary (within each component): k between ranks k and k + 1, None every boundary.
    component : ndarray (K,) of int, optional
        Component of each system in the comparison graph: ranks are within a component, and pairs
        across components are never candidates. None: one component.

    Returns
    -------
    ia, ib : ndarray (P,) of int
        Columns of system A (alphabetically first) and B of each pair, at most :data:`MAX_PAIRS`
        pairs, the largest weight first; only pairs with each order in at least :data:`MIN_SHARE`
        of the draws (none: the ranking at that boundary is settled).
    weight : ndarray (P,) in (0, 1]
    """
    n_draws, k = skills.shape
    component = np.zeros(k, dtype=np.int64) if component is None else np.asarray(component)
    above = []  # codes hi * k + lo: hi sits right above lo at a boundary, one per draw and boundary
    for c in np.unique(component):
        members = np.flatnonzero(component == c)
        ranked = members[np.argsort(-skills[:, members], axis=1, kind="stable")]  # (S, size) best to worst
        bounds = range(len(members) - 1) if focus is None else [focus - 1] if focus < len(members) else []
        above += [ranked[:, r] * k + ranked[:, r + 1] for r in bounds]
    if not above:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0)
    codes, counts = np.unique(np.concatenate(above), return_counts=True)
    hi, lo = codes // k, codes % k
    alphabet = np.argsort(np.argsort(np.asarray(systems, dtype=object).astype(str), kind="stable"))
    a_first = alphabet[hi] < alphabet[lo]
    ia, ib = np.where(a_first, hi, lo), np.where(a_first, lo, hi)
    pair, first = np.unique(ia * k + ib, return_inverse=True)
    n_b_above = np.bincount(first, weights=np.where(a_first, 0, counts), minlength=len(pair))
    n_adjacent = np.bincount(first, weights=counts, minlength=len(pair))
    p = n_b_above / n_adjacent
    weight = n_adjacent / n_draws * 4.0 * p * (1.0 - p)
    undecided = np.minimum(n_b_above, n_adjacent - n_b_above) >= MIN_SHARE * n_draws
    pair, weight = pair[undecided], weight[undecided]
    best = np.argsort(-weight, kind="stable")[:MAX_PAIRS]
    return pair[best] // k, pair[best] % k, weight[best]


def _most_informative(d: np.ndarray, alpha: np.ndarray, cutpoints: np.ndarray, keep: int):
    """Per pair, the ``keep`` prompts of highest expected information E[I_j(d)] over the draws of d.

    Returns (indices, information), each (P, keep), in descending information.
    """
    info_grid = item_information(GRID, alpha, cutpoints)  # (G, J)
    step = GRID[1] - GRID[0]
    at = np.clip(np.rint((d - GRID[0]) / step), 0, len(GRID) - 1).astype(np.int64)  # (S, P) nearest grid point
    n_pairs = d.shape[1]
    # share of each pair's draws at each grid point: (P, G)
    counts = np.bincount((np.arange(n_pairs) * len(GRID) + at).ravel(), minlength=n_pairs * len(GRID))
    share = counts.reshape(n_pairs, len(GRID)) / len(d)
    idx = np.empty((n_pairs, keep), dtype=np.int64)
    val = np.empty((n_pairs, keep))
    rows = max(1, CHUNK // max(1, info_grid.shape[1]))
    for start in range(0, n_pairs, rows):
        block = share[start : start + rows] @ info_grid  # (rows, J)
        top = np.argpartition(-block, keep - 1, axis=1)[:, :keep]
        top_val = np.take_along_axis(block, top, axis=1)
        order = np.argsort(-top_val, axis=1, kind="stable")
        idx[start : start + rows] = np.take_along_axis(top, order, axis=1)
        val[start : start + rows] = np.take_along_axis(top_val, order, axis=1)
    return idx, val


def next_from_posterior(
    idata, n: int = 20, *, focus: int | None = 1, component: np.ndarray | None = None
) -> pd.DataFrame:
    """:func:`next_batch` from a fitted ranking model's posterior (posterior means of alpha and b).

    Parameters
    ----------
    idata : arviz.InferenceData
        Posterior with ``skill`` (system), ``alpha`` (prompt) and ``b`` ((prompt,) threshold), as
        :func:`lib.ranking.model.build_ranking` names them for paired likelihoods (votes, cells).
    n : int
        Batch size.
    focus : int or None
        Rank boundary to resolve (:func:`next_batch`).
    component : ndarray (K,) of int, optional
        Component of each system in the comparison graph (:func:`next_batch`).

    Returns
    -------
    DataFrame
        ``NEXT_COLUMNS``, best first.

    Raises
    ------
    SettingsError
        The posterior is of the ratings likelihood (it judges one system at a time, so there is no
        pair to ask about), or ``n`` < 1.
    """
    post = idata["posterior"]
    if "alpha" not in post or "b" not in post or "eta" in post:  # eta: the ratings' prompt effect
        raise SettingsError("what to annotate next needs a paired likelihood (votes or cells), not ratings")
    skills = post["skill"].stack(sample=("chain", "draw")).transpose("sample", "system").values
    prompts = [str(p) for p in post["prompt"].values]
    b = post["b"].mean(("chain", "draw"))
    # The votes share one tie threshold across prompts; the cells have one set per prompt.
    b = b.transpose("prompt", ...).values if "prompt" in b.dims else np.broadcast_to(b.values, (len(prompts), b.size))
    return next_batch(
        skills,
        [str(s) for s in post["system"].values],
        prompts,
        post["alpha"].mean(("chain", "draw"), dtype=np.float64).values,  # float64 sums of float32 draws too
        b,
        n,
        focus=focus,
        component=component,
    )
