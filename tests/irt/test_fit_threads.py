"""Two sessions fitting at once: the compiled MAP solvers are re-entrant (issue 9 item 5)."""

from concurrent.futures import ThreadPoolExecutor

import numpy as np

import lib.inference.map as map_module
from lib.irt.map import fit_map, map_spec
from lib.irt.simulate import simulate_grm

CODES = simulate_grm(8, 40, seed=4).codes


def loo(i: int, codes=CODES):
    w = np.ones(len(codes))
    w[i] = 0.0
    p = fit_map(codes, 7, weights=w)
    return np.concatenate([p.theta, p.alpha, p.b.ravel()])


def test_two_threads_of_leave_one_out_fits_give_the_single_thread_numbers():
    alone = [loo(i) for i in range(8)]
    with ThreadPoolExecutor(2) as pool:
        # each comparison twice, so both threads run the same solver at the same time
        together = list(pool.map(loo, list(range(8)) * 2))
    for i, values in enumerate(together):
        np.testing.assert_allclose(values, alone[i % 8], atol=1e-6, rtol=0)


def test_concurrent_first_compilation_of_one_shape_compiles_once(monkeypatch):
    codes = simulate_grm(3, 11, seed=9).codes  # a shape no other test compiles
    monkeypatch.setattr(map_module, "_SOLVERS", type(map_module._SOLVERS)())
    built = []
    original = map_module.MapSolver.__init__

    def counting(self, *args):
        built.append(args)
        original(self, *args)

    monkeypatch.setattr(map_module.MapSolver, "__init__", counting)
    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(lambda i: loo(i, codes), [0, 0, 1, 1]))
    assert len(built) == 1
    np.testing.assert_allclose(results[0], results[1], atol=1e-6, rtol=0)
    np.testing.assert_allclose(results[2], results[3], atol=1e-6, rtol=0)


def test_one_solver_serves_every_data_set_of_a_shape():
    other = simulate_grm(8, 40, seed=5).codes
    first, second = fit_map(CODES, 7), fit_map(other, 7)
    assert not np.allclose(first.theta, second.theta)  # the data are inputs, not baked in
    assert map_module.map_solver_ready(map_spec(CODES, 7, "antisymmetric").key)
    np.testing.assert_allclose(fit_map(CODES, 7).theta, first.theta, atol=1e-6, rtol=0)
