"""The GRM's maximum a posteriori point, by the engine's MAP solver (:mod:`lib.inference.map`): one compiled
solver per data shape, the data its inputs. MAP abilities are shrunk towards 0 and carry no interval: a
preview, not an estimate to report.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lib.errors import SettingsError
from lib.inference.map import MapSpec, map_optimum, map_solver
from lib.irt.model import build_grm, observations
from lib.irt.settings import check_cutpoints

NAMES = ("theta", "alpha", "b")
"""The variables of a GRM point."""


@dataclass
class GRMPoint:
    """A point estimate of the GRM.

    theta : (I,) abilities; alpha : (J,) discriminations; b : (J, K-1) ordered thresholds (logits).
    """

    theta: np.ndarray
    alpha: np.ndarray
    b: np.ndarray


def map_spec(
    codes: np.ndarray,
    n_categories: int,
    cutpoints: str,
    coords: dict[str, np.ndarray] | None = None,
) -> MapSpec:
    """The GRM of a code matrix as the engine's MAP solver fits it (:class:`lib.inference.map.MapSpec`): one
    solver per (shape, categories, cutpoints), the observed cells and per-comparison weights (all 1) its inputs.

    ``codes`` (I, J) int64, -1 where missing; ``coords``: the posterior's ``comparison``, ``prompt`` and
    ``threshold`` coordinates (default: their positions)."""
    codes = np.ascontiguousarray(codes, dtype=np.int64)
    shape = codes.shape
    ii, jj, kk = observations(codes)
    data = {"obs_comparison": ii, "obs_prompt": jj, "obs_category": kk, "weight": np.ones(shape[0])}
    default = {
        "comparison": np.arange(shape[0]).astype(str),
        "prompt": np.arange(shape[1]).astype(str),
        "threshold": np.arange(1, n_categories),
    }
    return MapSpec(
        key=(tuple(shape), int(n_categories), cutpoints),
        template=lambda: build_grm(np.zeros(shape, dtype=np.int64), int(n_categories), cutpoints=cutpoints),
        data=data,
        outputs=NAMES,
        coords=coords or default,
    )


def fit_map(
    codes: np.ndarray,
    n_categories: int,
    *,
    cutpoints: str = "antisymmetric",
    weights: np.ndarray | None = None,
) -> GRMPoint:
    """Maximum a posteriori estimate of the GRM (L-BFGS on the unconstrained space, :mod:`lib.inference.map`).

    Thread-safe: the compiled solver is shared by data shape, the data are its inputs.

    Parameters
    ----------
    codes : ndarray, shape (I, J), int64
        Category index 0..K-1, -1 where missing (``RatingMatrix.codes()``).
    n_categories : int
        K.
    cutpoints : str
        A name of :data:`lib.irt.settings.CUTPOINTS`.
    weights : ndarray, shape (I,), optional
        Per-comparison weight of the log-likelihood; 0 leaves a comparison out (its theta then
        sits at the prior mode, 0). Refits with other weights (leave-one-out) start from the
        all-data MAP point, computed first, so results do not depend on the call order.

    Returns
    -------
    GRMPoint
        MAP thetas are shrunk towards 0 relative to posterior means.

    Raises
    ------
    SettingsError
        See :func:`lib.irt.settings.check_cutpoints`; weights of the wrong shape or negative.
    """
    check_cutpoints(cutpoints, n_categories)
    codes = np.ascontiguousarray(codes, dtype=np.int64)
    w = np.ones(codes.shape[0]) if weights is None else np.asarray(weights, dtype=np.float64)
    if w.shape != (codes.shape[0],) or not (w >= 0).all():
        raise SettingsError(f"weights must be {codes.shape[0]} non-negative numbers, one per comparison")
    spec = map_spec(codes, n_categories, cutpoints)
    solver = map_solver(spec)
    x_all = map_optimum(spec)
    x = x_all if np.all(w == 1) else solver.optimum({**spec.data, "weight": w}, x_all)
    return GRMPoint(**solver.point(x))
