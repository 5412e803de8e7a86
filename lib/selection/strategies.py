"""Prompt-selection strategies: one class per strategy, one registry.

As catsim's selectors (Meneghetti & Aquino Junior 2017), every strategy is an object with one
:meth:`Strategy.select` method. A *static* strategy orders the bank once (best first) and a subset
of size k is the first k prompts; an *adaptive* strategy (computerized adaptive testing, CAT) ranks
the remaining prompts anew after every answer, from the comparison's running posterior of theta.

Adding a strategy is one class here and one entry in :data:`STRATEGIES`: the curve, the subset
export, the what-if, ``python -m lib select`` and the page all read the registry. The study planner
(:mod:`lib.planning`) offers the strategies that can draw a planned study's prompts from a bank's
discriminations alone (:func:`planned_strategies`, :meth:`Strategy.draw`). Only numpy is
imported at module level, so that ``--help`` can list the strategies cheaply.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from lib.errors import SettingsError

if TYPE_CHECKING:
    from lib.selection.bank import ItemParams
    from lib.selection.calibration import Calibration


@dataclass(frozen=True)
class Ask:
    """What a strategy may look at when it picks prompts.

    Attributes
    ----------
    alpha : ndarray, shape (J,)
        Discriminations (the calibration's weighted posterior mean).
    b : ndarray, shape (J, K-1)
        Thresholds, logits.
    remaining : ndarray of bool, shape (J,)
        Prompts that can still be asked.
    theta0 : float
        Ability at which ``max_info`` evaluates the information.
    rng : numpy Generator, optional
        For random orders.
    n_orders : int
        How many orders a random strategy draws (deterministic strategies give one).
    post : ndarray, shape (G,), optional
        Current posterior weights of theta on ``grid`` (adaptive strategies).
    grid : ndarray, shape (G,), optional
    probs : ndarray, shape (G, J, K), optional
        Category probabilities of every prompt on the grid (mean item parameters).
    info : ndarray, shape (G, J), optional
        Item information on the grid.
    """

    alpha: np.ndarray
    b: np.ndarray
    remaining: np.ndarray
    theta0: float = 0.0
    rng: np.random.Generator | None = None
    n_orders: int = 1
    post: np.ndarray | None = None
    grid: np.ndarray | None = None
    probs: np.ndarray | None = None
    info: np.ndarray | None = None


class Strategy(ABC):
    """One selection strategy.

    Attributes
    ----------
    name : str
        What ``--strategies`` and the exported files call it.
    label : str
        Shown on the page and in the plots.
    help : str
        One line for ``--help``.
    adaptive : bool
        Whether :meth:`select` depends on the running posterior (asked again after every answer).
    planned : str or None
        How a planned study draws its prompts with this strategy (one line for the planner's help);
        None where the planner cannot use it (:meth:`draw`).
    """

    name: ClassVar[str]
    label: ClassVar[str]
    help: ClassVar[str]
    adaptive: ClassVar[bool] = False
    planned: ClassVar[str | None] = None

    @abstractmethod
    def select(self, ask: Ask) -> np.ndarray:
        """The remaining prompts, best first.

        Returns
        -------
        ndarray of int, shape (R, n)
            R orders (R = ``ask.n_orders`` for a random strategy, else 1) of the n remaining prompts
            (at least the first must be remaining; a static order must list all n).
        """

    def draw(
        self, alpha: np.ndarray, n: int, rng: np.random.Generator, informed: np.ndarray | None = None
    ) -> np.ndarray:
        """The n prompts a planned study asks, from a bank of discriminations (the study planner's
        simulation, :mod:`lib.planning.simulate`).

        Parameters
        ----------
        alpha : ndarray, shape (J,)
            The bank's discriminations (true, or a pilot's estimates).
        n : int
            Prompts to draw, at most J.
        rng : numpy Generator
            For random choices.
        informed : ndarray of bool, shape (J,), optional
            Prompts whose alpha the pilot informs (None: all).

        Returns
        -------
        ndarray of int, shape (n,)
            Indices into the bank.

        Raises
        ------
        SettingsError
            The planner cannot use this strategy (``planned`` is None).
        """
        raise SettingsError(f"the {self.name} strategy cannot draw a planned study's prompts")

    def items(self, calibration: Calibration, i: int) -> ItemParams | None:
        """Items that held-out comparison i is selected and estimated with; None: the global
        leave-one-out calibration ``calibration.loo(i)``."""
        return None

    def banks(self, calibration: Calibration) -> list[tuple[str | None, ItemParams]]:
        """Calibrations the exported subset is ranked with, as ``(system group or None, items)``.

        Raises
        ------
        SettingsError
            When the data give the strategy nothing to rank with.
        """
        return [(None, calibration.whole)]


def _ranked(score: np.ndarray, remaining: np.ndarray) -> np.ndarray:
    """Remaining prompts by decreasing score (ties: file order), as one order (1, n)."""
    order = np.argsort(-score, kind="stable")
    return order[remaining[order]][None]


class Random(Strategy):
    """Prompts in random order: the baseline every other strategy is compared with."""

    name = "random"
    label = "Random"
    help = "random order (many draws: the curve reports their mean and band)"
    planned = "prompts drawn at random from the bank"

    def select(self, ask: Ask) -> np.ndarray:
        """``ask.n_orders`` random orders of the remaining prompts; shape (n_orders, n_remaining)."""
        assert ask.rng is not None, "random orders need ask.rng"
        pool = np.flatnonzero(ask.remaining)
        return np.stack([ask.rng.permutation(pool) for _ in range(ask.n_orders)])

    def draw(
        self, alpha: np.ndarray, n: int, rng: np.random.Generator, informed: np.ndarray | None = None
    ) -> np.ndarray:
        """The n prompts of the bank drawn without replacement (``informed`` is not used); shape (n,)."""
        return rng.choice(len(alpha), n, replace=False)


class TopAlpha(Strategy):
    """Prompts by decreasing discrimination alpha (Sedoc & Ungar 2020's "Prompt Weighted")."""

    name = "top_alpha"
    label = "Prompt weighted (top alpha)"
    help = 'highest discrimination first: the paper\'s "Prompt Weighted"'
    planned: ClassVar[str | None] = "the most discriminating prompts of the bank (IRT-informed; Sedoc & Ungar 2020)"

    def select(self, ask: Ask) -> np.ndarray:
        """The remaining prompts by decreasing alpha (ties: file order); shape (1, n_remaining)."""
        return _ranked(ask.alpha, ask.remaining)

    def draw(
        self, alpha: np.ndarray, n: int, rng: np.random.Generator, informed: np.ndarray | None = None
    ) -> np.ndarray:
        """The n prompts of highest alpha; with ``informed``, the informed prompts by alpha first and
        the others after them in random order. Shape (n,)."""
        if informed is None:
            return np.argsort(-alpha, kind="stable")[:n]
        # a prompt whose alpha the pilot does not inform is not known to discriminate: after the informed
        # ones (by alpha), in random order, so no saving is claimed from a prior-only alpha
        rest = rng.permutation(np.flatnonzero(~informed))
        by_alpha = np.flatnonzero(informed)[np.argsort(-alpha[informed], kind="stable")]
        return np.concatenate([by_alpha, rest])[:n]


class MaxInfo(Strategy):
    """Prompts by decreasing GRM item information at a fixed ability ``theta0``."""

    name = "max_info"
    label = "Max information at theta0"
    help = "highest GRM item information at theta0 (0 = near-equal systems)"

    def select(self, ask: Ask) -> np.ndarray:
        """The remaining prompts by decreasing information at ``ask.theta0``; shape (1, n_remaining)."""
        from lib.irt.readouts import item_information  # scipy: kept off the --help path

        return _ranked(item_information(np.array([ask.theta0]), ask.alpha, ask.b)[0], ask.remaining)


class Group(TopAlpha):
    """Top alpha with the items re-estimated within the held-out comparison's group of better or
    weaker systems (:mod:`lib.selection.calibration`); across groups, the global calibration."""

    name = "group"
    label = "Prompt and model weighted (group)"
    help = "the paper's \"Prompt and Model Weighted\": top alpha within the comparison's group of systems"
    planned = None  # a planned study has no groups of systems to re-estimate within

    def items(self, calibration: Calibration, i: int) -> ItemParams | None:
        """The group fit left without comparison i (:meth:`Calibration.group_loo`); None outside a group."""
        return calibration.group_loo(i)

    def banks(self, calibration: Calibration) -> list[tuple[str | None, ItemParams]]:
        """One bank per group of systems that has a group fit, as ``(group, items)``.

        Raises
        ------
        SettingsError
            No group has a fit (no named systems, or fewer than two comparisons within each group).
        """
        from lib.selection.calibration import SYSTEM_GROUPS

        banks: list[tuple[str | None, ItemParams]] = [
            (name, params) for name in SYSTEM_GROUPS if (params := calibration.group_params(name)) is not None
        ]
        if not banks:
            raise SettingsError(
                "the group strategy needs comparisons between named systems, "
                "with at least two comparisons within a group"
            )
        return banks


class CatInfo(Strategy):
    """Maximum Fisher information at the grid point nearest the running EAP (Lord 1980)."""

    name = "cat_info"
    label = "Adaptive: max Fisher information"
    help = "adaptive: maximum Fisher information at the running EAP"
    adaptive = True

    def select(self, ask: Ask) -> np.ndarray:
        """The remaining prompts by decreasing information at the grid point nearest the running EAP;
        shape (1, n_remaining)."""
        assert ask.grid is not None and ask.post is not None and ask.info is not None, "set for adaptive strategies"
        at = int(np.abs(ask.grid - ask.post @ ask.grid).argmin())
        return _ranked(ask.info[at], ask.remaining)


class CatEpv(Strategy):
    """Minimum expected posterior variance (van der Linden & Pashley 2010).

    ``sum_k P(u = k | data) Var(theta | data, u = k)``; since ``E[theta^2 | data]`` does not depend
    on the prompt, that is the prompt maximising ``sum_k m_k^2 / p_k`` with
    ``p_k = sum_g post_g P_gk`` and ``m_k = sum_g post_g theta_g P_gk``.
    """

    name = "cat_epv"
    label = "Adaptive: min expected posterior variance"
    help = "adaptive: minimum expected posterior variance"
    adaptive = True

    def select(self, ask: Ask) -> np.ndarray:
        """The remaining prompts by increasing expected posterior variance; shape (1, n_remaining)."""
        assert ask.grid is not None and ask.post is not None and ask.probs is not None, "set for adaptive strategies"
        p_k = np.einsum("g,gjk->jk", ask.post, ask.probs)
        m_k = np.einsum("g,gjk->jk", ask.post * ask.grid, ask.probs)
        score = np.divide(m_k**2, p_k, out=np.zeros_like(p_k), where=p_k > 0).sum(axis=1)
        return _ranked(score, ask.remaining)


STRATEGIES: dict[str, Strategy] = {s.name: s for s in (Random(), TopAlpha(), MaxInfo(), Group(), CatInfo(), CatEpv())}
"""The strategy registry, name -> :class:`Strategy`, in the order of the plots and tables."""


def check_strategies(names: list[str] | tuple[str, ...]) -> list[str]:
    """Validate strategy names; returns them without duplicates, in the given order.

    Raises
    ------
    SettingsError
        For an unknown name or an empty list.
    """
    unknown = [n for n in names if n not in STRATEGIES]
    if unknown:
        raise SettingsError(f"unknown strategy '{unknown[0]}'; choose from {', '.join(STRATEGIES)}")
    if not names:
        raise SettingsError("choose at least one strategy")
    return list(dict.fromkeys(names))


def planned_strategies() -> dict[str, str]:
    """The strategies the study planner offers, name -> its help (:attr:`Strategy.planned`), in registry order."""
    return {name: s.planned for name, s in STRATEGIES.items() if s.planned is not None}
