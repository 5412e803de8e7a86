"""Many NUTS fits in one process (a server, a Dask worker) do not exhaust its memory mappings: each numpyro
fit compiled new programs that JAX kept, about 600 mappings a fit, and after about 93 fits XLA could not
allocate and the process segfaulted (issue 16's null-calibration benchmark, twice)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

SCRIPT = textwrap.dedent(
    """
    from lib.inputs import bundled_input
    from lib.irt.fit import fit_grm
    from lib.irt.settings import FitSettings

    def mappings():
        return sum(1 for _ in open("/proc/self/maps"))

    rm = bundled_input("lamp_rankings").matrix
    counts = []
    for k in range(4):
        fit_grm(rm, FitSettings(chains=1, draws=20, tune=20, seed=k), use_cache=False)
        counts.append(mappings())
    print(counts)
    """
)


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="counts Linux memory mappings")
def test_numpyro_fits_do_not_pile_up_memory_mappings(tmp_path):
    env = {"EVAL_CACHE_DIR": str(tmp_path), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert done.returncode == 0, done.stderr[-2000:]
    counts = json.loads(done.stdout.strip().splitlines()[-1])
    assert counts[-1] - counts[0] < 150, counts  # before: about 600 more a fit (1,850 over three fits)
