"""Categories that borrow strength: a skill per system and category in one fit (issue 36 item 2).

LMArena fits each category (coding, maths, a language) on its own subset of the votes, so a small category's
skills rest on its few votes and get wide intervals. Here one votes model (:mod:`lib.ranking.model`) holds, for
every system k and category c of the votes' ``category`` column,

    s_kc = s_k + sigma_category z_kc,    z_kc ~ N(0, 1) summing to zero over the systems of a category,
    sigma_category ~ HalfNormal(0.5),

and a vote of category c compares s_Bc with s_Ac. The deviations are shrunk towards the system's overall skill
s_k by the spread sigma_category learnt from all categories (partial pooling; Gelman & Hill 2007, "Data analysis
using regression and multilevel/hierarchical models", ch. 12): a large category is ranked on its own votes, a
small one borrows strength from the others. The deviations are non-centred, as the model's other hierarchical
effects. A Gaussian at the mode overstates sigma_category, so the fit runs NUTS (:func:`lib.ranking.fit.nuts_reason`).
``bench/bench_categories.py`` checks it against separate fits per category.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from lib.errors import SettingsError
from lib.ranking.leaderboard import SKILL_COLUMNS

COLUMN = "category"
"""The votes' column (the pairwise format's ``category`` role) that ``rank --by category`` reads."""
SPREAD_PRIOR_SD = 0.5
"""Prior scale (logits) of sigma_category: deviations of a system from its overall skill of about half a logit
(a win probability of 0.5 moved to 0.62), as tau's of the pair deviations."""
BY_CATEGORY_COLUMNS = ["category", *SKILL_COLUMNS]
"""Columns of ``leaderboard_by_category.csv``: per category (sorted) its systems, best first; ``n_votes`` counts
the category's votes a system took part in (0: its skill there is its overall skill and the learnt spread)."""
BY_CATEGORY_DATA = ("category", "system", "n_votes")
"""The columns of the leaderboard by category that do not come from the fit (kept when estimates are withheld)."""
NO_CATEGORY = (
    "ranking by category needs a category column in the votes (the pairwise format's 'category' role: a column "
    "named category, or --columns category=NAME)"
)


def vote_categories(votes: pd.DataFrame) -> np.ndarray:
    """The category of each vote (rows as ``votes``), as str.

    Raises
    ------
    SettingsError
        The votes have no ``category`` column (:data:`NO_CATEGORY`).
    """
    if COLUMN not in votes.columns:
        raise SettingsError(NO_CATEGORY)
    return votes[COLUMN].astype(str).to_numpy()


def category_skills(skill):
    """The skills per category, (C, K), inside the model's context (module docstring): adds ``sigma_category``,
    ``category_z`` and the deterministic ``category_skill`` (dims ``category, system``)."""
    import pymc as pm

    sigma = pm.HalfNormal("sigma_category", SPREAD_PRIOR_SD)
    z = pm.ZeroSumNormal("category_z", sigma=1.0, dims=("category", "system"))
    return pm.Deterministic("category_skill", skill[None, :] + sigma * z, dims=("category", "system"))


def category_leaderboard(
    idata,
    votes: pd.DataFrame,
    systems: list[str],
    *,
    component: np.ndarray | None = None,
    baseline: str | None = None,
) -> pd.DataFrame:
    """The leaderboard of every category from a fit's ``category_skill`` draws.

    Parameters
    ----------
    idata : arviz.InferenceData
        Posterior with ``category_skill`` (chain, draw, category, system).
    votes : DataFrame
        The votes fitted (``system_a, system_b, category``): each system's count per category.
    systems : list of str
        Column order of the skills (``RankingData.systems``).
    component : ndarray (K,) of int, optional
        Component of each system in the comparison graph: ranks and P(best) within it.
    baseline : str, optional
        The system whose skill is 0 in every category (None: each category's skills sum to zero).

    Returns
    -------
    DataFrame
        :data:`BY_CATEGORY_COLUMNS`; skills in logits with 95% intervals, rank intervals and P(best) within the
        category (:func:`lib.ranking.leaderboard.leaderboard`).
    """
    from lib.ranking.leaderboard import leaderboard

    draws = idata["posterior"]["category_skill"].sel(system=systems)
    draws = draws.stack(sample=("chain", "draw")).transpose("category", "sample", "system")
    counts = pd.concat(
        [votes[[COLUMN, side]].set_axis([COLUMN, "system"], axis=1) for side in ("system_a", "system_b")]
    ).value_counts()
    parts = []
    for category in draws["category"].to_numpy().astype(str):
        skills = draws.sel(category=category).to_numpy().astype(np.float64)
        if baseline is not None:
            skills = skills - skills[:, [systems.index(baseline)]]
        n = counts.xs(category, level=COLUMN) if category in counts.index.get_level_values(0) else pd.Series()
        board = leaderboard(skills, systems, n, top_k=1, component=component)
        parts.append(board.assign(category=category))
    return pd.concat(parts, ignore_index=True)[BY_CATEGORY_COLUMNS]


def category_spread(idata) -> pd.DataFrame | None:
    """sigma_category's posterior summary (``parameter, mean, sd, low, high``, 95% equal-tailed), or None for a
    fit without categories."""
    post = idata["posterior"]
    if "sigma_category" not in post:
        return None
    s = post["sigma_category"].to_numpy().ravel()
    low, high = np.quantile(s, [0.025, 0.975])
    return pd.DataFrame(
        {"parameter": ["sigma_category"], "mean": [s.mean()], "sd": [s.std(ddof=1)], "low": [low], "high": [high]}
    )
