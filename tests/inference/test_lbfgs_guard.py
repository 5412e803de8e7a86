"""The L-BFGS search of the Laplace fit backs off a trial point where the log density is not finite.

Before, a NaN at a trial point ended the search there (scipy's ABNORMAL, the NaN point returned): on a
simulated arena with a learnt alpha spread the joint mode came out as NaN and the fit failed."""

import numpy as np

from lib.inference.laplace import lbfgs


def test_a_nan_trial_point_is_backed_off_not_returned():
    def value_and_grad(x):  # minimum at log(10) = 2.30, not finite beyond 2.5
        if (x > 2.5).any():
            return np.nan, np.full_like(x, np.nan)
        return float(np.sum(np.exp(-x) + 0.1 * x)), -np.exp(-x) + 0.1

    start = np.array([2.0])  # the first trial step from here lands beyond 2.5
    result = lbfgs(value_and_grad, start)
    assert np.isfinite(result.fun) and np.isfinite(result.x).all()
    assert result.x[0] <= 2.5 and result.fun <= value_and_grad(start)[0]
