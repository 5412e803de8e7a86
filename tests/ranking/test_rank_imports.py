"""The ``rank`` command's modules, its reader and the observations every route fits leave out pymc and pytensor
(issue 35 item 1): a fit that builds no PyMC model does not pay their 3 s import, and JAX is not imported before
the samplers set its flags (:func:`lib.inference.samplers.split_host_cpu`, :mod:`lib.inference.compile_cache`).

One fresh interpreter imports what ``python -m lib rank`` imports before its fit, reads a small simulated arena as
the command does and builds its observations (:func:`lib.ranking.model.observations`), then lists the modules
loaded. ``--help`` is checked by ``tests/test_cli_light.py``. Nothing is timed.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

NOT_LOADED = ("pymc", "pytensor", "jax", "numpyro")
"""Packages loaded only by a sampler or a PyMC model's builder (JAX by the samplers, after setting its flags)."""

SCRIPT = """
import json, sys
import lib.commands.rank, lib.ranking.run, lib.ranking.fit, lib.ranking.model  # what `rank` imports to run
from lib.cli import build_parser, read_input
from lib.ranking.data import ranking_data
from lib.ranking.model import observations
from lib.ranking.simulate import simulate_arena

votes, _ = simulate_arena(6, 40, 300, seed=0)
votes.to_csv(sys.argv[1], index=False)
args = build_parser().parse_args(["rank", "--input", sys.argv[1], "--format", "pairwise", "--out", "x"])
obs = observations(ranking_data(read_input(args, matrix=False), "votes"))
print(json.dumps({"votes": len(obs.code), "loaded": sorted({m.split(".")[0] for m in sys.modules})}))
"""


def test_rank_path_imports_no_pymc_pytensor_or_jax(tmp_path):
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path / "arena.csv")],
        cwd=Path(__file__).resolve().parents[2],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.splitlines()[-1])
    assert report["votes"] == 300  # the reader and the observations ran
    assert not set(NOT_LOADED) & set(report["loaded"]), sorted(set(NOT_LOADED) & set(report["loaded"]))
