"""Bradley–Terry baseline on the canonical votes, rated and bounded as the LMArena leaderboard does.

The maximum-likelihood skills come from ``evalica`` (Newman's 2023 iteration, ties as half a win
each); the intervals from the robust sandwich covariance ``H^-1 G H^-1`` (Huber 1967; White 1982)
exactly as LMArena's ``arena-rank`` 0.1.1 computes it (``BradleyTerry.compute_ratings_and_cis``),
or clustered by prompt (Liang & Zeger 1986; Cameron & Miller 2015): votes on one prompt share its
prompt x system effects, and per-vote scores then understate the variance.
"""

from __future__ import annotations

import evalica
import numpy as np
import pandas as pd
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components
from scipy.special import expit
from scipy.stats import norm

from lib.errors import DesignError, FormatError, SettingsError
from lib.ranking.clusters import cluster_scores

OUTCOME = {"a": 1.0, "tie": 0.5, "b": 0.0}
"""Score of system_a for each ``winner`` value (a tie is half a win for each side)."""

HESSIAN_REG = 1e-5
"""Ridge added to the Hessian's diagonal per vote (arena-rank's ``hessian_reg``): the skills are only
identified up to a common shift, so the plain Hessian is singular along that direction."""


def bradley_terry(
    votes: pd.DataFrame,
    *,
    scale: float = 400.0,
    base: float = 10.0,
    initial: float = 1000.0,
    level: float = 0.95,
    cluster: str | None = None,
) -> pd.DataFrame:
    """Bradley–Terry ratings with sandwich intervals, on the arena (Elo-like) scale.

    Model (Bradley & Terry 1952): ``P(A beats B) = logistic(r_A - r_B)``; a tie counts as half a win
    for each side (LMArena, Chiang et al. 2024, "Chatbot Arena", ICML, sec. 4). The reported rating
    is ``initial + scale / ln(base) * (r - mean(r))``, so the ratings average ``initial`` and a
    ``scale``-point gap means odds of ``base`` to 1.

    The covariance of r is the sandwich ``H^-1 G H^-1`` with ``H = sum_v p_v (1 - p_v) x_v x_v' +
    1e-5 N I`` (Fisher information plus arena-rank's ridge, N votes) and ``G = sum_v (o_v - p_v)^2 x_v
    x_v'`` (outer products of the per-vote scores), ``x_v = e_A - e_B``, ``o_v`` the outcome of vote v.
    Intervals are ``rating +- z_(1+level)/2 * sd``. Clustered by ``cluster`` (e.g. ``prompt_id``),
    the scores are summed within each of the C clusters first, ``G_c = C / (C - 1) sum_c (sum_(v in c)
    (o_v - p_v) x_v)(...)'`` (Cameron & Miller 2015, "A practitioner's guide to cluster-robust
    inference", J. Human Resources 50(2), eqs. 11-12, with its small-sample factor C / (C - 1)).

    With a ``weight`` column each vote counts that much (the likelihood, H and the scores weighted: ``w_v p_v
    (1 - p_v)`` and ``(w_v (o_v - p_v))^2``); votes of weight 0 are left out.

    Parameters
    ----------
    votes : DataFrame
        Canonical votes (``lib.formats.VOTE_COLUMNS``): at least ``system_a``, ``system_b`` and
        ``winner`` in {"a", "b", "tie"}; one row per vote; optionally ``weight`` (>= 0).
    scale, base, initial : float
        Rating scale: ``scale`` points per factor ``base`` in the odds; the mean rating.
    level : float
        Coverage of the intervals, in (0, 1).
    cluster : str, optional
        Column of ``votes`` whose values group dependent votes (the prompt): clustered intervals.

    Returns
    -------
    DataFrame
        Columns ``system, bt_rating, bt_low, bt_high`` (rating points), one row per system, highest
        rating first; with ``cluster`` also ``bt_design_effect``: the clustered variance over the
        per-vote sandwich's (about 1 when votes of a cluster are independent;
        :func:`lib.ranking.clusters.clustered`).

    Raises
    ------
    FormatError
        A column is missing, or a ``winner`` value is not a, b or tie (rows named, 1-based).
    SettingsError
        ``level`` not in (0, 1), or ``scale`` / ``base`` cannot define a scale.
    DesignError
        Fewer than two systems, or a system that never wins or never loses against the rest (no
        finite maximum-likelihood rating exists: the comparison graph is not strongly connected).
    """
    if not 0 < level < 1:
        raise SettingsError(f"the interval level must be between 0 and 1, not {level}")
    if not (scale > 0 and base > 1):
        raise SettingsError(f"the rating scale needs scale > 0 and base > 1, got scale={scale}, base={base}")
    if "weight" in votes:
        votes = votes[votes["weight"] > 0]
    ia, ib, o, systems = _vote_codes(votes, cluster)
    n, k = len(votes), len(systems)
    w = votes["weight"].to_numpy(dtype=float) if "weight" in votes else np.ones(n)

    winners = np.select([o == 1.0, o == 0.0], [evalica.Winner.X, evalica.Winner.Y], evalica.Winner.Draw)
    fit = evalica.bradley_terry(
        systems[ia], systems[ib], list(winners), index=systems, weights=list(w), tolerance=1e-12, limit=100_000
    )
    r = np.log(fit.scores.reindex(systems).to_numpy())
    r -= r.mean()

    p = expit(r[ia] - r[ib])
    hessian = _pair_sum(ia, ib, w * p * (1.0 - p), k) + HESSIAN_REG * n * np.eye(k)
    scores = _pair_sum(ia, ib, (w * (o - p)) ** 2, k)
    h_inv = np.linalg.inv(hessian)
    var = np.diag(h_inv @ scores @ h_inv)
    if cluster:
        var_naive = var
        var = np.diag(h_inv @ cluster_scores(ia, ib, w * (o - p), votes[cluster].to_numpy(), k) @ h_inv)
    sd = np.sqrt(var)

    points = scale / np.log(base)
    half = norm.ppf(0.5 + level / 2) * sd
    table = pd.DataFrame(
        {
            "system": list(systems),
            "bt_rating": initial + points * r,
            "bt_low": initial + points * (r - half),
            "bt_high": initial + points * (r + half),
        }
    )
    if cluster:
        table["bt_design_effect"] = var / var_naive
    return table.sort_values("bt_rating", ascending=False, kind="stable", ignore_index=True)


def _vote_codes(votes: pd.DataFrame, cluster: str | None) -> tuple[np.ndarray, np.ndarray, np.ndarray, pd.Index]:
    """The votes checked and encoded: system index of side a and of side b (N,), outcome 1 / 0.5 / 0
    for a win of a / a tie / a win of b (N,), and the systems, sorted.

    Raises
    ------
    FormatError
        A column is missing, or a ``winner`` value is not a, b or tie.
    DesignError
        Fewer than two systems, or no finite maximum-likelihood rating.
    """
    missing = [c for c in ("system_a", "system_b", "winner", *([cluster] if cluster else [])) if c not in votes.columns]
    if missing:
        raise FormatError(f"the votes lack column(s) {', '.join(missing)}", column=missing[0])
    outcome = votes["winner"].map(OUTCOME)
    bad = np.flatnonzero(outcome.isna().to_numpy())
    if bad.size:
        raise FormatError(
            f"unknown winner value {votes['winner'].iloc[bad[0]]!r} (allowed: a, b, tie)",
            rows=(bad + 1).tolist(),
            column="winner",
        )
    codes, systems = pd.factorize(pd.concat([votes["system_a"], votes["system_b"]]).astype(str), sort=True)
    n, k = len(votes), len(systems)
    if k < 2:
        raise DesignError("the Bradley–Terry baseline needs votes between at least two systems")
    ia, ib, o = codes[:n], codes[n:], outcome.to_numpy(dtype=float)
    _check_connected(ia, ib, o, systems)
    return ia, ib, o, systems


def _pair_sum(ia: np.ndarray, ib: np.ndarray, w: np.ndarray, k: int) -> np.ndarray:
    """``sum_v w_v x_v x_v'`` with ``x_v = e_a - e_b``: a (k, k) matrix, assembled per pair."""
    out = np.zeros((k, k))
    np.add.at(out, (ia, ia), w)
    np.add.at(out, (ib, ib), w)
    np.add.at(out, (ia, ib), -w)
    np.add.at(out, (ib, ia), -w)
    return out


def _check_connected(ia: np.ndarray, ib: np.ndarray, o: np.ndarray, systems: pd.Index) -> None:
    """Raise DesignError unless every system beats (or ties) and is beaten by (or ties) the others
    through some chain of votes: Ford's (1957) condition for a finite maximum-likelihood estimate."""
    k = len(systems)
    # an edge i -> j when i scored against j (a win or a tie)
    src = np.concatenate([ia[o > 0], ib[o < 1]])
    dst = np.concatenate([ib[o > 0], ia[o < 1]])
    graph = coo_matrix((np.ones(src.size), (src, dst)), shape=(k, k))
    n_parts, labels = connected_components(graph, directed=True, connection="strong")
    if n_parts > 1:
        sizes = np.bincount(labels)
        stray = sorted(str(systems[i]) for i in range(k) if sizes[labels[i]] < sizes.max())
        raise DesignError(
            "the Bradley–Terry ratings are infinite: some systems never win (or never lose) against the "
            f"others, directly or through a chain of votes ({', '.join(stray[:10])}); add votes that link them"
        )
