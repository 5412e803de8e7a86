"""Hostile runs of ``python -m lib fit`` (issue 17): a stuck NUTS chain must not look certain."""

import json

import pandas as pd

from lib.cli import EXIT_NOT_CONVERGED, main


def test_a_stuck_nuts_chain_is_flagged_in_diagnostics_json_and_the_output(tmp_path, capsys):
    rows = [{"prompt": f"q{p}", "system_a": a, "system_b": b, "annotator": f"r{r}",
             "choice": win if (p + r) % 4 else "A"}
            for p in range(12) for a, b, win in [("alpha", "beta", "B"), ("alpha", "gamma", "B")] for r in range(3)]
    votes = tmp_path / "votes.csv"
    pd.DataFrame(rows).to_csv(votes, index=False)
    out = tmp_path / "out"
    code = main(["fit", "--input", str(votes), "--format", "pairwise", "--chains", "1", "--draws", "20",
                 "--tune", "0", "--out", str(out)])
    printed = capsys.readouterr()
    assert code == EXIT_NOT_CONVERGED  # was 0: a script went on to read abilities.csv
    diag = json.loads((out / "diagnostics.json").read_text())
    assert diag["converged"] is False
    assert any(w.startswith("Not converged: stuck chain") for w in diag["warnings"])
    assert "warning: Not converged: stuck chain" in printed.out
    assert "the fit did NOT converge" in printed.err and f"exit status {EXIT_NOT_CONVERGED}" in printed.err
    # Written for diagnosis, every estimate left empty (it wrote intervals of width 0 and P(B better) 0 or 1)
    abilities, prompts = pd.read_csv(out / "abilities.csv"), pd.read_csv(out / "prompts.csv")
    assert list(abilities.columns) == ["comparison", "system_a", "system_b", "theta_mean", "theta_sd", "hdi_low",
                                       "hdi_high", "p_b_better", "contraction"]
    assert set(abilities["comparison"]) == {"beta vs alpha", "gamma vs alpha"}
    assert abilities.drop(columns=["comparison", "system_a", "system_b"]).isna().all().all()
    assert prompts[["prompt_id", "n_comparisons", "group"]].notna().all().all()
    assert prompts.filter(like="alpha").isna().all().all() and prompts["b_contraction"].isna().all()
    assert (out / "posterior.nc").stat().st_size > 0  # the draws, for diagnosis
