"""lib.io.display on the cost tables: a model that never pays reads ∞, a term not measured reads empty."""

from __future__ import annotations

from lib.cost.analysis import analyse
from lib.cost.costs import Weights
from lib.io.display import INFINITE, readable


def test_cost_terms_spell_out_never_and_leave_what_was_not_measured_empty(effort_study):
    res = analyse(effort_study, weights=Weights(1, 0, 1, 1))  # solving alone costs nothing: never pays
    shown = readable(res.cost_terms).frame
    assert shown.break_even_n.isna().all() and shown.n_star.tolist() == [INFINITE, INFINITE]
    assert shown.loss_with.tolist() == res.cost_terms.loss_with.round(4).tolist()  # finite columns stay numbers
