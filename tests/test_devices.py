"""Every process of the project has JAX's CPU split into the same number of devices (lib.engine.devices): the
key of each program in JAX's persistent compilation cache hashes the devices, so the app's servers load what
``fit`` and the tests compiled only if their counts agree. Before, a process that imported pymc's JAX
sampling module first (the app, a Laplace fit) had 100 devices, the test processes 8."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from lib.engine.devices import CPU_DEVICES, ENV

ROOT = Path(__file__).resolve().parents[1]

ENTRY_POINTS = {
    # the app's server: streamlit, then the app's modules (app.py's first imports), then a fit imports pymc's JAX
    "app": "import streamlit, ui.common, lib.study.create, pymc.sampling.jax",
    # the command line (python -m lib): its parser, then a fit
    "cli": "import lib.cli, pymc.sampling.jax",
}


@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
def test_each_entry_point_has_the_same_cpu_devices(entry):
    code = f"{ENTRY_POINTS[entry]}; import jax; print(jax.local_device_count())"
    env = {k: v for k, v in os.environ.items() if k not in (ENV, "XLA_FLAGS")}  # as a user's shell
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout
    assert int(out.split()[-1]) == CPU_DEVICES  # before: 100 (pymc's XLA_FLAGS)


def test_the_test_processes_have_the_same_cpu_devices():
    import jax

    assert jax.local_device_count() == CPU_DEVICES
