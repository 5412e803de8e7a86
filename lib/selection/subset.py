"""The selected prompt subset as a table to export: ids, texts where known, alpha and information."""

from __future__ import annotations

import numpy as np
import pandas as pd

from lib.errors import SettingsError
from lib.irt.readouts import item_information
from lib.selection.bank import ItemParams
from lib.selection.calibration import Calibration
from lib.selection.strategies import STRATEGIES, Ask, Strategy


def _ranked(params: ItemParams, strategy: Strategy, k: int, prompt_ids, theta0: float, seed: int) -> pd.DataFrame:
    alpha, b = params.mean()
    ask = Ask(alpha, b, np.ones(len(alpha), dtype=bool), theta0, np.random.default_rng(seed))
    order = strategy.select(ask)[0, :k]
    info = item_information(np.array([theta0]), alpha, b)[0]
    return pd.DataFrame(
        {
            "rank": np.arange(1, len(order) + 1),
            "prompt_id": np.asarray(prompt_ids)[order],
            "alpha": alpha[order],
            "information": info[order],
        }
    )


def select_subset(
    calibration: Calibration,
    strategy: str,
    k: int,
    *,
    prompt_ids: np.ndarray,
    groups: pd.DataFrame | None = None,
    texts: pd.DataFrame | None = None,
    theta0: float = 0.0,
    seed: int = 0,
) -> pd.DataFrame:
    """The k prompts a static strategy selects with the items calibrated on all comparisons.

    Parameters
    ----------
    calibration : Calibration
        Ranked by the strategy's banks (:meth:`lib.selection.strategies.Strategy.banks`): the items
        calibrated on all comparisons, or one per system group for ``group``.
    strategy : str
        A static strategy of :data:`lib.selection.strategies.STRATEGIES`; adaptive strategies choose
        per comparison and have no fixed subset.
    k : int
        Subset size (per system group for ``group``), 1..J.
    prompt_ids : ndarray of str, shape (J,)
    groups : DataFrame, optional
        ``prompt_id, group`` of the redundancy grouping (``RatingMatrix.groups``): merged prompts
        list their members.
    texts : DataFrame, optional
        ``prompt_id, prompt_text``.
    theta0 : float
        Where the information is evaluated (and ``max_info`` ranks).
    seed : int
        For ``random``.

    Returns
    -------
    DataFrame
        ``rank, prompt_id, alpha, information`` (posterior-mean alpha in full mode; information at
        theta0 in 1/theta^2), then ``system_group`` for ``group``, ``members`` when redundant
        prompts were merged, ``prompt_text`` when texts are known.

    Raises
    ------
    SettingsError
        Adaptive or unknown strategy, k out of range, or ``group`` without system groups.
    """
    if strategy not in STRATEGIES or STRATEGIES[strategy].adaptive:
        raise SettingsError(f"'{strategy}' has no fixed subset: only static strategies can be exported")
    n_prompts = len(prompt_ids)
    if not 1 <= k <= n_prompts:
        raise SettingsError(f"k must lie between 1 and the number of prompts ({n_prompts})")
    chosen = STRATEGIES[strategy]
    parts = []
    for system_group, params in chosen.banks(calibration):
        part = _ranked(params, chosen, k, prompt_ids, theta0, seed)
        parts.append(part if system_group is None else part.assign(system_group=system_group))
    out = pd.concat(parts, ignore_index=True)
    if groups is not None and groups["group"].nunique() < len(groups):
        members = groups.groupby("group")["prompt_id"].agg(lambda s: " ".join(map(str, s)))
        out["members"] = out["prompt_id"].map(members)
    if texts is not None and len(texts):
        by_id = texts.drop_duplicates("prompt_id").set_index("prompt_id")["prompt_text"]
        out["prompt_text"] = out["prompt_id"].map(by_id)
    return out
