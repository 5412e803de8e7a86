"""Expected cost of a person without and with the model, Eqs. 2-3 of Casares et al. 2022.

Per task, with mean losses and median efforts estimated from the study:

- Eq. 2, the person alone:      ``C_H(n)   = n [L_H + beta G_H]``
- Eq. 3, the person with model: ``C_H,M(n) = alpha D_H + n [L_H,M + gamma (W_H + U_H) + delta V_H]``

The prompt strategy is devised once (``D_H``); every other term is paid per instance. Loss is in
[0, 1] and effort in seconds, so the weights say how much loss one second is worth; the default
:data:`DEFAULT_WEIGHT` = 0.01 makes 100 s of effort cost as much as a useless answer. The model
pays from the break-even n on, the smallest n with ``C_H,M(n) < C_H(n)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from lib.cost.effort import COMPONENTS
from lib.errors import SettingsError

CURVE_COLUMNS = ["task", "n", "c_h", "c_hm"]
TERM_COLUMNS = [
    "task",
    "loss_with",
    "loss_without",
    *COMPONENTS,
    "setup",
    "per_instance_with",
    "per_instance_without",
    "break_even_n",
    "n_star",
]


DEFAULT_WEIGHT = 0.01
"""Default of every weight, loss units per second: 100 s of effort cost as much as a useless answer
(loss 1). With 1, a single second would, and time would swamp the loss terms."""


@dataclass(frozen=True)
class Weights:
    """Weights of Eqs. 2-3, in loss units per second of effort.

    alpha: devising the prompt (D_H); beta: solving alone (G_H); gamma: wrapping and unwrapping
    (W_H + U_H); delta: validating (V_H).
    """

    alpha: float = DEFAULT_WEIGHT
    beta: float = DEFAULT_WEIGHT
    gamma: float = DEFAULT_WEIGHT
    delta: float = DEFAULT_WEIGHT


def parse_weights(text: str | None) -> Weights:
    """Parse ``--weights a,b,g,d`` (alpha, beta, gamma, delta); None gives :class:`Weights` defaults.

    Raises
    ------
    SettingsError
        Not four numbers, or a negative or non-finite one.
    """
    if text is None:
        return Weights()
    parts = [p.strip() for p in text.split(",")]
    try:
        values = [float(p) for p in parts]
    except ValueError:
        values = []
    if len(values) != 4 or not all(math.isfinite(v) and v >= 0 for v in values):
        raise SettingsError(f"--weights must be four numbers >= 0 as alpha,beta,gamma,delta, got '{text}'")
    return Weights(*values)


def c_h(n: np.ndarray | int, loss: float, g_h: float, beta: float) -> np.ndarray:
    """Eq. 2: ``C_H(n) = n (L + beta G_H)`` for n instances (no familiarisation curve)."""
    return np.asarray(n, dtype=float) * (loss + beta * g_h)


def c_hm(
    n: np.ndarray | int, loss: float, d_h: float, w_h: float, u_h: float, v_h: float, weights: Weights
) -> np.ndarray:
    """Eq. 3: ``C_H,M(n) = alpha D_H + n (L + gamma (W_H + U_H) + delta V_H)``."""
    per_instance = loss + weights.gamma * (w_h + u_h) + weights.delta * v_h
    return weights.alpha * d_h + np.asarray(n, dtype=float) * per_instance


def break_even(setup: float, per_instance_with: float, per_instance_without: float) -> tuple[int | None, float]:
    """Smallest integer n >= 1 with ``C_H,M(n) < C_H(n)``, and the crossing point n*.

    Parameters
    ----------
    setup : float
        ``alpha D_H``, paid once with the model (loss units).
    per_instance_with, per_instance_without : float
        Per-instance costs of Eq. 3 and Eq. 2 (loss units).

    Returns
    -------
    n : int or None
        ``floor(n*) + 1`` (an exact tie at an integer n* does not pay); None when the model never
        pays (its per-instance cost is not below the person's alone).
    n_star : float
        ``setup / (per_instance_without - per_instance_with)``; inf when the model never pays.
    """
    gain = per_instance_without - per_instance_with
    if not gain > 0:
        return None, math.inf
    n_star = setup / gain
    # An exact tie does not pay; the nudge keeps rounding (0.1 * 140 = 14.000000000000002) from
    # turning a tie into a win.
    return max(1, math.floor(n_star * (1 + 1e-12) + 1e-12) + 1), n_star


def cost_terms(
    loss_table: pd.DataFrame,
    medians: pd.DataFrame,
    with_label: str,
    without_label: str,
    weights: Weights,
    *,
    validation_zero: bool = False,
) -> tuple[pd.DataFrame, list[str]]:
    """Plug the per-task mean losses and median efforts into Eqs. 2-3.

    Parameters
    ----------
    loss_table : pandas.DataFrame
        From :func:`lib.cost.loss.loss_table`.
    medians : pandas.DataFrame
        From :func:`lib.cost.effort.effort_medians`.
    with_label, without_label : str
        Condition labels.
    weights : Weights
    validation_zero : bool
        Take ``V_H`` as 0 s for tasks where it was not measured (studies that did not time the
        checking of answers); each such task gets a note among the warnings.

    Returns
    -------
    terms : pandas.DataFrame
        ``TERM_COLUMNS``, one row per task: the inputs, ``setup`` = alpha D_H, the per-instance
        costs with and without the model, ``break_even_n`` (nullable Int64; <NA> = never pays) and
        ``n_star``. Tasks missing a term have NaN costs.
    warnings : list of str
        One per task whose cost cannot be computed, naming the missing terms, and one per task
        whose ``V_H`` was taken as 0.
    """
    mean = loss_table.set_index(["task", "condition"]).mean_loss
    med = medians.set_index(["task", "component"]).median_s
    records, warnings = [], []
    for task in pd.unique(loss_table.task):
        comp = {c: float(med.get((task, c), np.nan)) for c in COMPONENTS}
        if validation_zero and np.isnan(comp["V_H"]):
            comp["V_H"] = 0.0
            warnings.append(f"task '{task}': V_H not measured, taken as 0 s")
        lw = float(mean.get((task, with_label), np.nan))
        lwo = float(mean.get((task, without_label), np.nan))
        missing = [k for k, v in {"L with": lw, "L without": lwo, **comp}.items() if np.isnan(v)]
        if missing:
            warnings.append(f"task '{task}': no cost, {', '.join(missing)} not measured")
            records.append((task, lw, lwo, *comp.values(), *[np.nan] * 3, None, np.nan))
            continue
        setup = weights.alpha * comp["D_H"]
        with_n = float(c_hm(1, lw, 0.0, comp["W_H"], comp["U_H"], comp["V_H"], weights))
        without_n = float(c_h(1, lwo, comp["G_H"], weights.beta))
        n, n_star = break_even(setup, with_n, without_n)
        records.append((task, lw, lwo, *comp.values(), setup, with_n, without_n, n, n_star))
    terms = pd.DataFrame(records, columns=TERM_COLUMNS)
    terms["break_even_n"] = terms.break_even_n.astype("Int64")
    return terms, warnings


def cost_curve(terms: pd.DataFrame, n_max: int, weights: Weights) -> pd.DataFrame:
    """``C_H(n)`` and ``C_H,M(n)`` for n = 1..n_max per task with all terms.

    Returns
    -------
    pandas.DataFrame
        ``CURVE_COLUMNS``, costs in loss units (see ``Weights``).

    Raises
    ------
    SettingsError
        ``n_max`` < 1.
    """
    if n_max < 1:
        raise SettingsError(f"n must be at least 1, got {n_max}")
    n = np.arange(1, n_max + 1)
    frames = []
    for t in terms.dropna(subset=["setup"]).itertuples():
        frames.append(
            pd.DataFrame(
                {
                    "task": t.task,
                    "n": n,
                    "c_h": c_h(n, t.loss_without, t.G_H, weights.beta),
                    "c_hm": c_hm(n, t.loss_with, t.D_H, t.W_H, t.U_H, t.V_H, weights),
                }
            )
        )
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=CURVE_COLUMNS)
