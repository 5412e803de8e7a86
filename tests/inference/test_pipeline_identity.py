"""The one fit pipeline changes no number (issue 32 item 1): the GRM's MAP fit of LAMP's rankings and the
leaderboard's default fit (MAP + Laplace) of ROME's best-worst votes give what they gave
before the pipeline (``fit_reference.csv``, written by the code before it: ``PYTHONPATH=<checkout before> python
tests/inference/test_pipeline_identity.py``). Every output of ``fit`` and ``rank`` on the bundled data sets is
compared by ``bench/bench_fit_pipeline_identity.py``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

REFERENCE = Path(__file__).parent / "fit_reference.csv"


def fitted_values() -> pd.DataFrame:
    """Every number of the two fits that a user reads (the GRM's MAP point; the skills' draws summarised and
    their mode), one row each: ``quantity, index, value``."""
    from lib.inputs import bundled_input
    from lib.irt.fit import fit_grm
    from lib.irt.settings import FitSettings
    from lib.ranking.data import ranking_data
    from lib.ranking.fit import RankSettings, fit_ranking

    grm = fit_grm(bundled_input("lamp_rankings").matrix, FitSettings(sampler="map"), use_cache=False)
    post = grm.idata["posterior"]
    rank = fit_ranking(ranking_data(bundled_input("rome_bestworst", "consistency")), RankSettings(), use_cache=False)
    skill = rank.skill_draws()
    assert rank.mode is not None
    values = {
        "grm_map_theta": post["theta"].to_numpy().ravel(),
        "grm_map_alpha": post["alpha"].to_numpy().ravel()[:20],
        "grm_map_b": post["b"].to_numpy()[0, 0, :5].ravel(),
        "rank_skill_mean": skill.mean(axis=0),
        "rank_skill_sd": skill.std(axis=0),
        "rank_skill_mode": rank.mode["skill"],
    }
    return pd.DataFrame(
        [(name, i, float(v)) for name, array in values.items() for i, v in enumerate(np.asarray(array))],
        columns=["quantity", "index", "value"],
    )


def test_the_fits_give_the_numbers_they_gave_before_the_pipeline(tmp_path, monkeypatch):
    monkeypatch.setenv("EVAL_CACHE_DIR", str(tmp_path / "cache"))
    reference = pd.read_csv(REFERENCE, float_precision="round_trip")
    now = fitted_values()
    pd.testing.assert_frame_equal(now[["quantity", "index"]], reference[["quantity", "index"]])
    # To the last digits a thread count leaves alone: under pytest-xdist numpy's BLAS has one thread a process
    # (tests/conftest.py), which sums in another order than the reference's process did; measured, the skills' SDs
    # moved by 1.1e-12 relative at most. A change of method moves far more (the MAP with Laplace's L-BFGS options:
    # theta by 8e-5).
    close = np.isclose(now["value"].to_numpy(), reference["value"].to_numpy(), rtol=1e-10, atol=1e-13)
    different = now[~close]
    assert different.empty, different.assign(before=reference["value"])


if __name__ == "__main__":
    fitted_values().to_csv(REFERENCE, index=False, float_format="%.17g")
    print(f"wrote {REFERENCE}")
