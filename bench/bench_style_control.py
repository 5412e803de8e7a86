"""Style control on simulated length-biased votes, and the controlled Bradley–Terry against arena-rank's
contextual Bradley–Terry on the same file (issue 36 item 1): figures printed, not a test.

1. ``python -m lib rank --style-control`` (the command's defaults: the votes model by MAP + Laplace) on votes of
   :func:`lib.ranking.simulate.simulate_style_arena`: two equally skilled systems, one of which writes answers
   2.4 times longer, annotators preferring the longer answer (length coefficient 0.5 logits per SD). Printed:
   each system's place, skill and P(best) without and with style control, and the length coefficient's 95%
   interval against the simulated value; over ``--seeds`` simulated arenas, how often the verbose system is
   first with P(best) > 0.95 without and with style control, and how often the intervals (votes model and
   Bradley–Terry) hold the coefficient.
2. arena-rank 0.1.1 (LMArena's ranking, in a virtual environment of its own, as ``bench/bench_arena_rank.py``
   makes it) on the same votes, as its style-control notebook does (``examples/lmarena.ipynb``: the normalised
   difference of each count, ``ContextualPairDataset.from_pandas``, ``ContextualBradleyTerry``) with ``reg = 0``
   and without reweighting, the model the baseline here fits; and with its defaults (``reg = 1``, reweighted by
   pair), to show what they change. Printed: the largest difference of the ratings, interval ends (Elo points)
   and coefficients from the ``bt_*`` columns of ``leaderboard.csv`` and ``style_coefficients``.

Usage: ``python bench/bench_style_control.py [--votes N] [--seeds S] [--venv DIR] [--write-reference DIR]``
(``--write-reference``: also write the votes and arena-rank's answer as ``tests/`` read them).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_arena_rank import PEER, peer_python  # noqa: E402

PEER_SCRIPT = """
import json, sys
import pandas as pd
from arena_rank.models.contextual_bradley_terry import ContextualBradleyTerry
from arena_rank.utils.data_utils import ContextualPairDataset

votes = pd.read_csv(sys.argv[1])
features = [c[: -len("_a")] for c in votes.columns if c.endswith("_a") and c != "system_a"]
for name in features:  # examples/example_utils.py, add_style_feature_cols: the normalised difference
    total = (votes[name + "_a"] + votes[name + "_b"]).replace(0, 1)
    votes[name] = (votes[name + "_a"] - votes[name + "_b"]) / total
out = {}
for label, reweighted, reg in (("reg0", False, 0.0), ("defaults", True, 1.0)):
    dataset = ContextualPairDataset.from_pandas(
        votes,
        feature_cols=features,
        competitor_cols=["system_a", "system_b"],
        outcome_col="winner",
        outcome_map=lambda w: {"a": 1.0, "b": 0.0}.get(w, 0.5),
        reweighted=reweighted,
    )
    model = ContextualBradleyTerry(len(dataset.competitors), len(features), reg=reg)
    r = model.compute_ratings_and_cis(dataset, significance_level=0.05)
    out[label] = {
        "competitors": list(r["competitors"]),
        "ratings": [float(x) for x in r["ratings"]],
        "rating_lower": [float(x) for x in r["rating_lower"]],
        "rating_upper": [float(x) for x in r["rating_upper"]],
        "coeffs": dict(zip(features, [float(x) for x in r["coeffs"]])),
    }
json.dump(out, open(sys.argv[2], "w"))
"""


def rank(csv: Path, out: Path, cache: Path, *extra: str) -> tuple[pd.DataFrame, dict]:
    """``python -m lib rank --style-control`` with its defaults: (leaderboard.csv, diagnostics.json)."""
    command = [sys.executable, "-m", "lib", "rank", "--input", str(csv), "--format", "pairwise", "--style-control"]
    command += [*extra, "--out", str(out), "--overwrite"]
    subprocess.run(command, check=True, cwd=ROOT, env={**os.environ, "EVAL_CACHE_DIR": str(cache)}, capture_output=True)
    return pd.read_csv(out / "leaderboard.csv"), json.loads((out / "diagnostics.json").read_text())


def simulation(n_votes: int, seeds: int, folder: Path) -> None:
    """Part 1: the style simulation through ``rank --style-control``."""
    from lib.inputs import analysis_input
    from lib.ranking.fit import RankSettings
    from lib.ranking.run import rank_systems
    from lib.ranking.simulate import simulate_style_arena

    first, rows = None, []
    for seed in range(seeds):
        votes, truth = simulate_style_arena(n_votes, seed=seed)
        data = analysis_input(votes.drop(columns="criterion"), "pairwise", file="style.csv", matrix=False)
        result = rank_systems(data, RankSettings(style_control=True))
        before, after = result.uncontrolled.set_index("system"), result.leaderboard.set_index("system")
        coef = result.style.set_index("feature").loc["tokens"]
        rows.append(
            {
                "first_before": before.index[0] == "verbose" and before.loc["verbose", "p_best"] > 0.95,
                "first_after": after.index[0] == "verbose" and after.loc["verbose", "p_best"] > 0.95,
                "covered": coef["low"] <= truth["coefficient"] <= coef["high"],
                "bt_covered": coef["bt_low"] <= truth["coefficient"] <= coef["bt_high"],
            }
        )
        first = first or (before, after, coef, truth)
    before, after, coef, truth = first
    print(f"seed 0, {n_votes} votes: place, skill, P(best) without -> with style control")
    for system in after.index:
        b, a = before.loc[system], after.loc[system]
        print(
            f"  {system:8} {list(before.index).index(system) + 1} -> {list(after.index).index(system) + 1}   "
            f"{b['skill_mean']:+.3f} -> {a['skill_mean']:+.3f}   {b['p_best']:.3f} -> {a['p_best']:.3f}"
        )
    print(
        f"  length coefficient {coef['mean']:.3f} (95% interval {coef['low']:.3f} to {coef['high']:.3f}); "
        f"Bradley–Terry {coef['bt_mean']:.3f} ({coef['bt_low']:.3f} to {coef['bt_high']:.3f}); "
        f"simulated {truth['coefficient']}"
    )
    t = pd.DataFrame(rows)
    print(
        f"over {seeds} simulated arenas: verbose first with P(best) > 0.95 without style control "
        f"{t['first_before'].sum()}, with it {t['first_after'].sum()}; the 95% interval holds the coefficient "
        f"{t['covered'].sum()} times (votes model), {t['bt_covered'].sum()} (Bradley–Terry)"
    )


def calibration(n_votes: int, seeds: int) -> None:
    """Part 1b: the controlled Bradley–Terry alone (milliseconds a fit) over many simulated arenas: how often the
    coefficient's 95% interval holds the simulated value, and how often the verbose and concise systems (equally
    skilled) are told apart at the 5% level without and with style control."""
    from lib.ranking.baseline import STYLE_COEFFICIENT_COLUMNS, contextual_bradley_terry
    from lib.ranking.bradley_terry import BradleyTerry, PairDataset
    from lib.ranking.simulate import simulate_style_arena
    from lib.ranking.style import vote_features

    covered, apart_before, apart_after = 0, 0, 0
    for seed in range(seeds):
        votes, truth = simulate_style_arena(n_votes, seed=10_000 + seed)
        style = vote_features(votes)
        _, coef = contextual_bradley_terry(votes, style.values, style.names)
        c = coef.set_index("feature").loc["tokens", STYLE_COEFFICIENT_COLUMNS[1:]]
        covered += c["bt_low"] <= truth["coefficient"] <= c["bt_high"]
        for features, count in ((None, "before"), (style.values, "after")):
            data = PairDataset.from_votes(votes, features=features)
            model = BradleyTerry()
            fit = model.fit(data)
            cov = model.sandwich(fit)
            v, k = data.systems.index("verbose"), data.systems.index("concise")
            z = (fit.skill[v] - fit.skill[k]) / np.sqrt(cov[v, v] + cov[k, k] - 2 * cov[v, k])
            if count == "before":
                apart_before += abs(z) > 1.96
            else:
                apart_after += abs(z) > 1.96
    print(
        f"controlled Bradley–Terry over {seeds} simulated arenas of {n_votes} votes: the coefficient's 95% interval "
        f"holds the simulated value {covered} times ({covered / seeds:.1%}); verbose and concise told apart "
        f"(|z| > 1.96) {apart_before} times without style control, {apart_after} ({apart_after / seeds:.1%}) with it"
    )


def against_arena_rank(n_votes: int, python: Path, folder: Path, reference: Path | None) -> None:
    """Part 2: ``rank --style-control``'s Bradley–Terry columns against arena-rank on the same file."""
    from lib.ranking.simulate import simulate_style_arena
    from lib.ranking.style import counts

    votes, _ = simulate_style_arena(n_votes, seed=0)
    raw = votes[["system_a", "system_b", "winner"]].copy()
    for side in ("a", "b"):
        raw[f"tokens_{side}"] = [counts(t)[0] for t in votes[f"response_{side}"]]
    csv, texts = folder / "style_votes.csv", folder / "style_texts.csv"
    raw.to_csv(csv, index=False)
    votes.drop(columns="criterion").to_csv(texts, index=False)
    subprocess.run([python, "-c", PEER_SCRIPT, csv, folder / "peer.json"], check=True)
    peer = json.loads((folder / "peer.json").read_text())
    ours, diagnostics = rank(texts, folder / "ours", folder / "cache")
    ours = ours.set_index("system")
    ours_coef = diagnostics["style_coefficients"]["tokens"]["bt_mean"]
    for label, what in (("reg0", "reg = 0, not reweighted (the model fitted here)"), ("defaults", "its defaults")):
        columns = ["competitors", "ratings", "rating_lower", "rating_upper"]
        p = pd.DataFrame({c: peer[label][c] for c in columns}).set_index("competitors").loc[ours.index]
        gaps = {
            "ratings": np.abs(p["ratings"] - ours["bt_rating"]).max(),
            "interval ends": np.abs(
                p[["rating_lower", "rating_upper"]].to_numpy() - ours[["bt_low", "bt_high"]].to_numpy()
            ).max(),
            "coefficient": abs(peer[label]["coeffs"]["tokens"] - ours_coef),
        }
        print(
            f"{PEER} ContextualBradleyTerry, {what}: largest difference from rank --style-control's Bradley–Terry: "
            + ", ".join(f"{k} {v:.2e}" for k, v in gaps.items())
            + f" (its length coefficient {peer[label]['coeffs']['tokens']:.4f}, ours {ours_coef:.4f})"
        )
    if reference is not None:
        reference.mkdir(parents=True, exist_ok=True)
        raw.to_csv(reference / "style_votes.csv", index=False)
        columns = ["competitors", "ratings", "rating_lower", "rating_upper"]
        p = pd.DataFrame({c: peer["reg0"][c] for c in columns}).assign(coef_tokens=peer["reg0"]["coeffs"]["tokens"])
        p.to_csv(reference / "style_arena_rank_cbt.csv", index=False)
        print(f"wrote {reference}/style_votes.csv and style_arena_rank_cbt.csv")


def main() -> None:
    from lib.io.paths import cache_dir

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--votes", type=int, default=3000)
    parser.add_argument("--seeds", type=int, default=20, help="arenas ranked by rank --style-control (0: none)")
    parser.add_argument("--bt-seeds", type=int, default=200, help="arenas for the Bradley–Terry calibration")
    parser.add_argument("--venv", type=Path, default=cache_dir("bench") / PEER.replace("==", "-"))
    parser.add_argument("--write-reference", type=Path, default=None, metavar="DIR")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        os.environ["EVAL_CACHE_DIR"] = str(Path(folder) / "cache")  # fresh fits, no earlier one read
        if args.seeds:
            simulation(args.votes, args.seeds, Path(folder))
        if args.bt_seeds:
            calibration(args.votes, args.bt_seeds)
        against_arena_rank(args.votes, peer_python(args.venv), Path(folder), args.write_reference)


if __name__ == "__main__":
    main()
