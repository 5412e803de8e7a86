"""The whole prompt selection of a rating matrix in one call, shared by the page and the command."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pandas as pd

from lib.errors import SettingsError
from lib.irt.settings import FitSettings
from lib.selection.calibration import PSIS_KHAT_LIMIT, Calibration, check_selection_data, make_calibration
from lib.selection.curve import LooCurve, default_k_grid, loo_curve, parse_k_grid, prompts_needed
from lib.selection.settings import DEFAULT_RANDOM_DRAWS
from lib.selection.strategies import STRATEGIES, check_strategies
from lib.selection.subset import select_subset

if TYPE_CHECKING:
    from lib.judgments.ratings import RatingMatrix


@dataclass(frozen=True)
class SelectionRun:
    """Calibration and leave-one-out curve of a rating matrix (:func:`run`).

    Attributes
    ----------
    matrix : lib.judgments.ratings.RatingMatrix
    calibration : Calibration
    curve : LooCurve
    warnings : list of str
        Few comparisons (:func:`lib.selection.calibration.check_selection_data`) and unreliable
        PSIS weights (full mode, Pareto k-hat above :data:`PSIS_KHAT_LIMIT`).
    theta0 : float
    seed : int
    """

    matrix: RatingMatrix
    calibration: Calibration
    curve: LooCurve
    warnings: list[str]
    theta0: float
    seed: int

    def needed(self, target_se: float) -> pd.DataFrame:
        """Prompts needed per strategy for ``target_se`` (:func:`lib.selection.curve.prompts_needed`)."""
        return prompts_needed(self.curve.summary, target_se)

    def subset(
        self, strategy: str, needed: pd.DataFrame, texts: pd.DataFrame | None = None
    ) -> tuple[pd.DataFrame | None, str | None]:
        """The prompts a static strategy selects, k = its prompts needed (all prompts when the
        target is not reached), with a note when there is no subset or it lists all prompts.

        Parameters
        ----------
        strategy : str
            A strategy of ``needed``.
        needed : DataFrame
            :meth:`needed`.
        texts : DataFrame, optional
            ``prompt_id, prompt_text``.

        Returns
        -------
        subset : DataFrame or None
            :func:`lib.selection.subset.select_subset`; None for an adaptive strategy or one that
            cannot rank on these data (e.g. ``group`` without system groups).
        note : str or None
        """
        if STRATEGIES[strategy].adaptive:
            return None, f"{strategy} is adaptive (prompts chosen per comparison): no fixed subset"
        row = needed.set_index("strategy").loc[strategy]
        rm = self.matrix
        note = None
        if pd.isna(row["k_needed"]):
            note = (
                f"{strategy} does not reach SE {row['target_se']:.3g} (best {row['se_best']:.3g}); "
                "its subset lists all prompts"
            )
        k = rm.shape[1] if note else int(row["k_needed"])
        try:
            return select_subset(
                self.calibration,
                strategy,
                k,
                prompt_ids=rm.prompt_ids,
                groups=rm.groups,
                texts=texts,
                theta0=self.theta0,
                seed=self.seed,
            ), note
        except SettingsError as err:
            return None, f"no subset for {strategy}: {err}"

    def subsets(
        self, needed: pd.DataFrame, texts: pd.DataFrame | None = None
    ) -> Iterator[tuple[str, pd.DataFrame | None, str | None]]:
        """``(strategy, subset, note)`` of :meth:`subset` for every strategy of ``needed``."""
        for strategy in needed["strategy"]:
            yield strategy, *self.subset(strategy, needed, texts)


def run(
    rm: RatingMatrix,
    strategies: Iterable[str],
    *,
    mode: str = "fast",
    settings: FitSettings | None = None,
    k_grid: str | Iterable[int] | None = None,
    n_random: int = DEFAULT_RANDOM_DRAWS,
    theta0: float = 0.0,
    seed: int = 0,
    progress: Callable[[float, str], None] | None = None,
    engine=None,
) -> SelectionRun:
    """Calibrate the prompts and draw the leave-one-out SE curve (Sedoc & Ungar 2020, sec. 6.2).

    Parameters
    ----------
    rm : lib.judgments.ratings.RatingMatrix
    strategies : iterable of str
        Names of :data:`lib.selection.strategies.STRATEGIES`.
    mode : {"fast", "full"}
        :data:`lib.selection.settings.MODES`.
    settings : FitSettings, optional
        Cutpoints, and the full mode's sampler and sizes (:func:`make_calibration`).
    k_grid : str or iterable of int, optional
        Subset sizes, or them typed as text (:func:`lib.selection.curve.parse_k_grid`), checked
        after the data; default :func:`lib.selection.curve.default_k_grid`.
    n_random : int
        Random orders per held-out comparison.
    theta0 : float
        Where ``max_info`` ranks and the subsets' information is evaluated.
    seed : int
        Seeds the random orders (and the full mode's fits through ``settings``).
    progress : callable, optional
        ``progress(fraction, message)`` of the calibration and of the curve.
    engine : lib.engine.cluster.Engine, optional
        Where the curve's held-out comparisons run as independent tasks (:func:`loo_curve`); None:
        one after the other in this process. The same result either way.

    Returns
    -------
    SelectionRun

    Raises
    ------
    SettingsError
        Unknown strategy or mode, bad k values or sampler settings.
    DesignError
        Data that cannot support a leave-one-out selection.
    """
    strategies = check_strategies(list(strategies))
    warnings = check_selection_data(rm)
    if k_grid is None:
        k_grid = default_k_grid(rm.shape[1])
    elif isinstance(k_grid, str):
        k_grid = parse_k_grid(k_grid, rm.shape[1])
    cal = make_calibration(rm, mode, settings, progress=progress)
    curve = loo_curve(
        rm.codes(),
        cal,
        strategies,
        k_grid,
        n_random=n_random,
        theta0=theta0,
        seed=seed,
        progress=progress,
        engine=engine,
    )
    if curve.khat_max is not None and curve.khat_max > PSIS_KHAT_LIMIT:
        warnings.append(
            f"Pareto k-hat up to {curve.khat_max:.2f} (> {PSIS_KHAT_LIMIT}): some leave-one-out "
            "weights are unreliable; compare with the fast mode or use more draws"
        )
    return SelectionRun(rm, cal, curve, warnings, float(theta0), int(seed))
