"""Prompt-subset selection with the GRM (Sedoc & Ungar 2020, sec. 6.2 "Evaluation Set Selection").

Modules: :mod:`.bank` (calibrated item parameters), :mod:`.strategies` (static orders and adaptive
rules), :mod:`.calibration` (leave-one-comparison-out calibration, fast MAP or full posterior),
:mod:`.curve` (the SE-vs-k curve of Fig. 2 and prompts needed for a target SE), :mod:`.adaptive`
(computerized adaptive testing and the what-if walk-through), :mod:`.subset` (the exported subset).
"""

from lib.selection.adaptive import WhatIf, cat_path, what_if
from lib.selection.bank import ItemParams
from lib.selection.calibration import (
    FEW_COMPARISONS,
    MIN_COMPARISONS,
    MODES,
    PSIS_KHAT_LIMIT,
    FastCalibration,
    FullCalibration,
    check_mode,
    check_selection_data,
    make_calibration,
    posterior_sampler,
    system_groups,
)
from lib.selection.curve import (
    DEFAULT_TARGET_SE,
    SUMMARY_COLUMNS,
    LooCurve,
    default_k_grid,
    loo_curve,
    parse_k_grid,
    prompts_needed,
)
from lib.selection.strategies import STRATEGIES, Strategy, check_strategies
from lib.selection.subset import select_subset

__all__ = [
    "DEFAULT_TARGET_SE", "FEW_COMPARISONS", "MIN_COMPARISONS", "MODES", "PSIS_KHAT_LIMIT", "STRATEGIES",
    "SUMMARY_COLUMNS", "FastCalibration", "FullCalibration", "ItemParams", "LooCurve", "Strategy", "WhatIf",
    "cat_path", "check_mode", "check_selection_data", "check_strategies", "default_k_grid", "loo_curve",
    "make_calibration", "parse_k_grid", "posterior_sampler", "prompts_needed", "select_subset",
    "system_groups", "what_if",
]
