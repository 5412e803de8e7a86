"""Before and after one fit pipeline (issue 32 item 1): the outputs of ``python -m lib fit`` and ``python -m lib
rank`` on the bundled data sets, written by one checkout and compared with another's, to the digit.

``python bench/bench_fit_pipeline_identity.py DIR`` (run from the checkout to snapshot, on its ``PYTHONPATH``)
runs, each in a fresh cache: ``rank`` with its defaults (MAP + Laplace) on every bundled data set with systems;
``fit --sampler map`` on every bundled data set (the first two criteria of each); ``fit`` with numpyro NUTS
(2 chains x 150 draws, seed 3) on LAMP, and ``rank --sampler numpyro`` (2 x 150, seed 3) on ROME's consistency.
Each command runs twice in the same cache: the second answer is read from the cache (``cached/``), so the
cache's path is compared too.
``diagnostics.json`` is kept without its seconds; ``posterior.nc`` as a CSV of every draw (``posterior.csv``).

``python scripts/cli_snapshot.py compare BEFORE AFTER`` compares two such folders file by file, byte for byte
(exit 1 on any difference).

Usage::

    git worktree add --detach /tmp/pipeline-before main
    cp bench/bench_fit_pipeline_identity.py /tmp/identity.py
    cd /tmp/pipeline-before && PYTHONPATH=$PWD python /tmp/identity.py /tmp/pipeline-id/before
    cd - && PYTHONPATH=$PWD python bench/bench_fit_pipeline_identity.py /tmp/pipeline-id/after
    python scripts/cli_snapshot.py compare /tmp/pipeline-id/before /tmp/pipeline-id/after
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

TIMED = ("timings", "wall_s")
"""Keys of ``diagnostics.json`` that hold seconds: left out (they differ between any two runs)."""
NUTS = ["--chains", "2", "--draws", "150", "--tune", "150", "--seed", "3"]
"""A small NUTS fit: fixed sizes and seed, so that two checkouts draw the same chains."""


def _runs() -> list[tuple[str, list[str]]]:
    """(folder name, command arguments after ``python -m lib``) of every run."""
    from lib.judgments.datasets import DATASETS

    runs = []
    for key, ds in DATASETS.items():
        columns = ",".join(f"{role}={column}" for role, column in ds.columns.items())
        for criterion in ds.criteria[:2] or (None,):  # two criteria of each: enough to compare, half the time
            data = ["--input", str(ds.path), "--format", ds.fmt, "--columns", columns]
            data += ["--criterion", criterion] if criterion else []
            name = f"{key}_{criterion}" if criterion else key
            runs.append((f"fit_map_{name}", ["fit", *data, "--sampler", "map"]))
            if ds.fmt != "responses":
                runs.append((f"rank_{name}", ["rank", *data]))
            if key == "lamp_rankings":
                runs.append((f"fit_numpyro_{name}", ["fit", *data, "--sampler", "numpyro", *NUTS]))
            if name == "rome_bestworst_consistency":
                runs.append((f"rank_numpyro_{name}", ["rank", *data, "--sampler", "numpyro", *NUTS]))
    return runs


def write(out: Path) -> None:
    """Write the outputs of every run of the checkout on ``PYTHONPATH`` to ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    for name, arguments in _runs():
        with tempfile.TemporaryDirectory() as cache:
            env = {**os.environ, "EVAL_CACHE_DIR": cache}
            for folder in (out / name, out / "cached" / name):
                command = [sys.executable, "-m", "lib", *arguments, "--out", str(folder), "--overwrite"]
                done = subprocess.run(command, env=env, stdout=subprocess.DEVNULL, check=False)
                (folder / "status.txt").write_text(f"{done.returncode}\n")
                _normalise(folder)
        print(f"wrote {name}", flush=True)


def _normalise(folder: Path) -> None:
    """``diagnostics.json`` without its seconds; ``posterior.nc`` as the CSV of its draws (netcdf files carry
    their creation time)."""
    path = folder / "diagnostics.json"
    if path.exists():
        diagnostics = json.loads(path.read_text())
        for key in TIMED:
            diagnostics.pop(key, None)
        path.write_text(json.dumps(diagnostics, indent=1, sort_keys=True))
    nc = folder / "posterior.nc"
    if nc.exists():
        import arviz as az

        idata = az.from_netcdf(nc)
        frames = [idata[group].to_dataframe() for group in idata.groups()]
        with (folder / "posterior.csv").open("w") as f:
            for group, frame in zip(idata.groups(), frames, strict=True):
                f.write(f"# {group}\n")
                frame.to_csv(f, float_format="%.17g")
        nc.unlink()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="the folder to write (compare two with scripts/cli_snapshot.py compare)")
    write(parser.parse_args().out)


if __name__ == "__main__":
    main()
