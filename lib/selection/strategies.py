"""Prompt-selection strategies behind one interface.

A *static* strategy orders the whole bank once (best first) and a subset of size k is the first k
prompts; an *adaptive* strategy (computerized adaptive testing, CAT) picks the next prompt from the
comparison's running posterior of theta. Names:

``random``     random order (many draws: the curve reports their mean and band)
``top_alpha``  highest discrimination first: the paper's "Prompt Weighted"
``max_info``   highest GRM item information at a chosen theta0 (0 = near-equal systems)
``group``      the paper's "Prompt and Model Weighted": top alpha after re-estimating the items
               within the held-out comparison's group of better or weaker systems
``cat_info``   adaptive: maximum Fisher information at the running EAP (Lord 1980)
``cat_epv``    adaptive: minimum expected posterior variance (van der Linden & Pashley 2010)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lib.errors import SettingsError
from lib.irt.readouts import item_information


@dataclass(frozen=True)
class Strategy:
    """One selection strategy: its name, a label for plots and whether it adapts to the answers."""

    name: str
    label: str
    adaptive: bool


STRATEGIES: dict[str, Strategy] = {
    s.name: s
    for s in (
        Strategy("random", "Random", False),
        Strategy("top_alpha", "Prompt weighted (top alpha)", False),
        Strategy("max_info", "Max information at theta0", False),
        Strategy("group", "Prompt and model weighted (group)", False),
        Strategy("cat_info", "Adaptive: max Fisher information", True),
        Strategy("cat_epv", "Adaptive: min expected posterior variance", True),
    )
}


def check_strategies(names: list[str] | tuple[str, ...]) -> list[str]:
    """Validate strategy names; returns them without duplicates, in the given order.

    Raises
    ------
    SettingsError
        For an unknown name or an empty list.
    """
    unknown = [n for n in names if n not in STRATEGIES]
    if unknown:
        raise SettingsError(
            f"unknown strategy '{unknown[0]}'; choose from {', '.join(STRATEGIES)}"
        )
    if not names:
        raise SettingsError("choose at least one strategy")
    return list(dict.fromkeys(names))


def static_order(
    name: str,
    alpha: np.ndarray,
    b: np.ndarray,
    *,
    theta0: float = 0.0,
    rng: np.random.Generator | None = None,
) -> np.ndarray:
    """Order of the prompts, best first, for a static strategy.

    Parameters
    ----------
    name : {"random", "top_alpha", "max_info", "group"}
        ``group`` ranks like ``top_alpha``; the caller passes the group's re-estimated items.
    alpha : ndarray, shape (J,)
    b : ndarray, shape (J, K-1)
    theta0 : float
        Ability at which ``max_info`` evaluates the information.
    rng : numpy Generator
        Needed for ``random``.

    Returns
    -------
    ndarray of int, shape (J,)
    """
    if name == "random":
        return rng.permutation(len(alpha))
    if name in ("top_alpha", "group"):
        return np.argsort(-alpha, kind="stable")
    if name == "max_info":
        return np.argsort(-item_information(np.array([theta0]), alpha, b)[0], kind="stable")
    raise SettingsError(f"'{name}' is not a static strategy")


def next_prompt(
    name: str,
    post: np.ndarray,
    grid: np.ndarray,
    probs: np.ndarray,
    info: np.ndarray,
    remaining: np.ndarray,
) -> int:
    """The next prompt an adaptive rule asks, given the running posterior.

    Parameters
    ----------
    name : {"cat_info", "cat_epv"}
    post : ndarray, shape (G,)
        Current posterior weights of theta on ``grid``.
    grid : ndarray, shape (G,)
    probs : ndarray, shape (G, J, K)
        Category probabilities of every prompt on the grid (point item parameters).
    info : ndarray, shape (G, J)
        Item information on the grid.
    remaining : ndarray of bool, shape (J,)
        Prompts that can still be asked.

    Returns
    -------
    int
        ``cat_info``: the prompt of maximum information at the grid point nearest the EAP.
        ``cat_epv``: the prompt minimising the expected posterior variance
        ``sum_k P(u = k | data) Var(theta | data, u = k)``; since ``E[theta^2 | data]`` does not
        depend on the prompt, that is the prompt maximising ``sum_k m_k^2 / p_k`` with
        ``p_k = sum_g post_g P_gk`` and ``m_k = sum_g post_g theta_g P_gk``.
    """
    if name == "cat_info":
        at = int(np.abs(grid - post @ grid).argmin())
        score = info[at].copy()
    elif name == "cat_epv":
        p_k = np.einsum("g,gjk->jk", post, probs)
        m_k = np.einsum("g,gjk->jk", post * grid, probs)
        score = np.divide(m_k**2, p_k, out=np.zeros_like(p_k), where=p_k > 0).sum(axis=1)
    else:
        raise SettingsError(f"'{name}' is not an adaptive strategy")
    score[~remaining] = -np.inf
    return int(score.argmax())
