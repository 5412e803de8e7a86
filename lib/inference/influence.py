"""The first-order effect of dropping each observation on a Laplace fit's estimates (approximate maximum
influence perturbation, AMIP: Broderick, Giordano & Meager 2020, "An automatic finite-sample robustness
metric: when can dropping a little data make a big difference?").

Give every observation n a weight w_n in the negative log posterior ``f(x; w) = -log p(x) - sum_n w_n
l_n(x)``. At the mode x^ (the gradient of f is 0) the implicit function theorem gives
``dx^/dw_n = H^-1 grad l_n(x^)``, H the Hessian of f there; dropping n is w_n: 1 -> 0, so a quantity
phi(x) moves by about ``-grad phi' H^-1 grad l_n`` (their Eq. 3, the empirical influence). One solve
``u = H^-1 grad phi`` and one Jacobian-vector product of the observations' log-likelihoods along u give
every observation's influence at once; the influences of a set add up (to first order).

Where the fit integrates out local variables (a prompt's discrimination: :func:`lib.inference.laplace.marginal_mode`),
the solve runs through the fit's block Hessian: for a quantity of the globals it is the derivative of the
marginal mode (globals' precision as the fit's), leaving out how dropping n changes the local blocks'
log-determinant (second order in the data of one unit). The approximation is checked against exact refits
(``tests/ranking/test_ranking_robustness.py``): a caller confirms what it finds by refitting.
"""

from __future__ import annotations

import numpy as np

from lib.inference.laplace import LaplaceMode
from lib.inference.samplers import COMPILE_LOCK


def observation_terms(model, name: str):
    """The model's tensor ``name``: the (N,) log-likelihood of each observation, summed in a potential.

    Raises
    ------
    LookupError
        No variable of that name feeds a potential of the model.
    """
    from pytensor.graph.traversal import ancestors

    for var in ancestors(model.potentials):
        if var.name == name:
            return var
    raise LookupError(f"the model has no per-observation log-likelihood '{name}'")


def drop_influence(fit: LaplaceMode, terms: str, variable: str, contrasts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The contrasts of a variable at the mode and the first-order change of each from dropping each observation.

    Parameters
    ----------
    fit : LaplaceMode
        The fit's mode and Hessian (:func:`lib.inference.laplace.laplace_mode`).
    terms : str
        Name of the model's (N,) tensor of the observations' log-likelihoods (:func:`observation_terms`).
    variable : str
        A variable of the model (free or deterministic), e.g. ``skill`` (K,).
    contrasts : ndarray (Q, K)
        Weights c_q of the quantities phi_q = c_q' variable (e.g. +1 and -1 for a difference of two skills).

    Returns
    -------
    values : ndarray (Q,)
        phi_q at the mode.
    influence : ndarray (Q, N)
        ``-grad phi_q' H^-1 grad l_n``: the change of phi_q when observation n alone is dropped, to first
        order (module docstring); a set's change is about the sum of its members'.

    Raises
    ------
    LookupError
        The model has no tensor ``terms``.
    """
    import jax
    import jax.numpy as jnp
    from pymc.sampling.jax import get_jaxified_graph

    model, lay = fit.model, fit.layout
    with COMPILE_LOCK:  # pytensor graph rewriting is not thread-safe
        target, per_obs = model.replace_rvs_by_values([model[variable], observation_terms(model, terms)])
        graph = get_jaxified_graph(inputs=model.value_vars, outputs=[target, per_obs])

    def quantity(x):
        return graph(*lay.split(x))[0]

    def loglik(x):
        return graph(*lay.split(x))[1]

    # Compiled, each a program: evaluated eagerly they compiled about 100 one-operation programs a call.
    @jax.jit
    def gradients(x, cs):  # the variable at x and the gradient of each contrast of it (Q, n)
        value, pullback = jax.vjp(quantity, x)
        return value, jax.vmap(lambda c: pullback(c.astype(value.dtype))[0])(cs)

    @jax.jit
    def along(x, d):  # the directional derivatives of the log-likelihoods along each direction (Q, N)
        return jax.vmap(lambda u: jax.jvp(loglik, (x,), (u,))[1])(d)

    x = jnp.asarray(fit.x)
    contrasts = np.atleast_2d(np.asarray(contrasts, dtype=np.float64))
    value, grads = gradients(x, jnp.asarray(contrasts))
    directions = np.stack([fit.blocks.solve(np.asarray(g, dtype=np.float64)) for g in grads])
    influence = -np.asarray(along(x, jnp.asarray(directions)), dtype=np.float64)
    return contrasts @ np.asarray(value, dtype=np.float64), influence
