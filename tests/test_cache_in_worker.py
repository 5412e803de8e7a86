"""A fit saved from a Dask worker (the planner's NUTS check, benchmarks on the engine): xarray took the
worker's scheduler as the reason to guard the in-memory netcdf with a cluster-wide lock named after the
BytesIO object; every save failed ("Semaphore or Lock ... not known") and after 153 fits both workers
of the null-calibration benchmark waited for such a lock for good."""

from __future__ import annotations

import arviz as az
import numpy as np

from lib.engine.cluster import Engine
from lib.io.cache import netcdf_bytes, netcdf_from_bytes


def _round_trip(seed: int) -> float:
    draws = np.random.default_rng(seed).normal(size=(1, 20, 3))
    back = netcdf_from_bytes(netcdf_bytes(az.from_dict(posterior={"theta": draws})))
    return float(np.abs(back["posterior"]["theta"].to_numpy() - draws).max())


def test_netcdf_is_written_inside_a_dask_worker():
    with Engine(n_workers=1) as engine:
        errors = dict(engine.map(_round_trip, range(3)))
    assert errors == {0: 0.0, 1: 0.0, 2: 0.0}
