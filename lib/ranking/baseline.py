"""Bradley–Terry baseline on the canonical votes, rated and bounded as the LMArena leaderboard does.

The maximum-likelihood skills and their robust sandwich covariance ``H^-1 G H^-1`` (Huber 1967; White 1982)
come from the one Bradley–Terry core (:mod:`lib.ranking.bradley_terry`), exactly as LMArena's ``arena-rank``
0.1.1 computes them (``BradleyTerry.compute_ratings_and_cis``), or clustered by prompt (Liang & Zeger 1986;
Cameron & Miller 2015): votes on one prompt share its prompt x system effects, and per-vote scores then
understate the variance.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy.stats import norm

from lib.engine.blas import one_blas_thread
from lib.errors import DesignError, SettingsError
from lib.ranking.bradley_terry import BradleyTerry, PairDataset, check_connected


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
        Canonical votes (``lib.judgments.formats.VOTE_COLUMNS``): at least ``system_a``, ``system_b`` and
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
        :func:`lib.ranking.clusters.cluster_scores`).

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
    table, _ = _fit(votes, scale=scale, base=base, initial=initial, level=level, cluster=cluster)
    return table


STYLE_COEFFICIENT_COLUMNS = ["feature", "bt_mean", "bt_sd", "bt_low", "bt_high"]
"""Columns of the contextual Bradley–Terry's coefficients (logits per SD of a standardised feature)."""


def contextual_bradley_terry(
    votes: pd.DataFrame,
    features: np.ndarray,
    feature_names: Sequence[str],
    *,
    scale: float = 400.0,
    base: float = 10.0,
    initial: float = 1000.0,
    level: float = 0.95,
    cluster: str | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """:func:`bradley_terry` with covariates: LMArena's style control (arena-rank's ``ContextualBradleyTerry``).

    ``P(A beats B) = logistic(r_A - r_B + beta' z_v)`` with ``z_v`` the style covariates of vote v (A's answer
    against B's, standardised: :mod:`lib.ranking.style`), by maximum likelihood (arena-rank with ``reg = 0``:
    its default ridge of 1 on the mean loss shrinks the coefficients about fivefold and leaves part of the style
    in the ratings), and the sandwich covariance of ``(r, beta)`` as :func:`bradley_terry` describes, over
    the K + p parameters.

    Parameters
    ----------
    votes : DataFrame
        As :func:`bradley_terry`.
    features : ndarray (N, p)
        The covariates of each vote (rows as ``votes``).
    feature_names : sequence of str
        Their p names.
    scale, base, initial, level, cluster
        As :func:`bradley_terry`.

    Returns
    -------
    (ratings, coefficients)
        ``ratings`` as :func:`bradley_terry`'s; ``coefficients``: :data:`STYLE_COEFFICIENT_COLUMNS`, one row per
        feature (logits; > 0: the answer with more of the feature wins more often).

    Raises
    ------
    FormatError, SettingsError, DesignError
        As :func:`bradley_terry`; DesignError also when the covariates and the votes give no finite estimate.
    """
    return _fit(
        votes,
        scale=scale,
        base=base,
        initial=initial,
        level=level,
        cluster=cluster,
        features=np.asarray(features, dtype=float),
        names=tuple(feature_names),
    )


def _fit(
    votes: pd.DataFrame,
    *,
    scale: float,
    base: float,
    initial: float,
    level: float,
    cluster: str | None,
    features: np.ndarray | None = None,
    names: tuple[str, ...] = (),
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The ratings table and the coefficients table (empty without covariates) of :func:`contextual_bradley_terry`."""
    if not 0 < level < 1:
        raise SettingsError(f"the interval level must be between 0 and 1, not {level}")
    if not (scale > 0 and base > 1):
        raise SettingsError(f"the rating scale needs scale > 0 and base > 1, got scale={scale}, base={base}")
    if "weight" in votes:  # an annotator weighted 0 (a spammer) adds nothing, not even a system's connection
        kept = (votes["weight"] > 0).to_numpy()
        votes = votes[kept]
        features = None if features is None else np.asarray(features)[kept]
    data = PairDataset.from_votes(votes, features=features, feature_names=names, extra=(cluster,) if cluster else ())
    if features is None and not cluster:  # a row per (pair, outcome, weight): the same fit, a fraction of the rows
        data = data.collapsed()
    if data.k < 2:
        raise DesignError("the Bradley–Terry baseline needs votes between at least two systems")
    check_connected(data)
    model = BradleyTerry()
    with one_blas_thread():  # K-sized matrices and N-sized dot products: BLAS threads only contend (40x slower)
        fit = model.fit(data)
        var = np.diag(model.sandwich(fit))
        if cluster:
            var_naive = var
            var = np.diag(model.sandwich(fit, votes[cluster].to_numpy()))
    sd = np.sqrt(var)
    z = norm.ppf(0.5 + level / 2)
    r, half = fit.skill, z * sd[: data.k]
    points = scale / np.log(base)
    table = pd.DataFrame(
        {
            "system": data.systems,
            "bt_rating": initial + points * r,
            "bt_low": initial + points * (r - half),
            "bt_high": initial + points * (r + half),
        }
    )
    if cluster:
        table["bt_design_effect"] = (var / var_naive)[: data.k]
    coef_sd = sd[data.k :]
    coefficients = pd.DataFrame(
        {
            "feature": list(names),
            "bt_mean": fit.coef,
            "bt_sd": coef_sd,
            "bt_low": fit.coef - z * coef_sd,
            "bt_high": fit.coef + z * coef_sd,
        },
        columns=STYLE_COEFFICIENT_COLUMNS,
    )
    return table.sort_values("bt_rating", ascending=False, kind="stable", ignore_index=True), coefficients
