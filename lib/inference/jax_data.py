"""A PyMC model's potential (minus its log density) as a JAX function of its values and its data, the data
passed as arguments.

PyMC's ``get_jaxified_logp`` replaces every shared variable of the graph, the model's data containers
(``pm.Data``) included, by a constant: the data are baked into every compiled program, whose key in
JAX's persistent compilation cache (:mod:`lib.inference.compile_cache`) then hashes them, so a new file
of the same sizes compiled everything again. Here the data containers are inputs of the function (the
other shared variables, the dims' lengths, which fix the shapes, stay constants as in PyMC): a program
compiled for one file is the program of every file of the same sizes (issue 35 item 2,
``bench/bench_compile_cache.py --command fit-numpyro --new-file``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np


def jaxified_potential_of_data(model) -> tuple[Callable[[Any, tuple], Any], tuple[np.ndarray, ...]]:
    """The model's potential energy ``potential(values, data) = -logp`` in JAX, and the model's data.

    The potential is what numpyro's NUTS takes (``potential_fn``) and what
    ``pymc.sampling.jax.get_jaxified_logp(model, negative_logp=False)`` returns (PyMC negates
    ``model.logp()`` when ``negative_logp`` is False): the same graph, negated before PyMC's JAX rewrites
    as PyMC does, with the data containers as inputs instead of constants.

    Parameters
    ----------
    model : pymc.Model

    Returns
    -------
    potential : callable
        ``potential(values, data)``: ``values`` a sequence of arrays in the order of ``model.value_vars``
        (unconstrained), ``data`` a tuple of arrays in the order of the second return; minus the log
        density (a scalar; +inf where the density is 0).
    data : tuple of ndarray
        The current values of the model's data containers the log density reads (``pm.Data``).
    """
    import pytensor.tensor as pt
    from pytensor.compile import mode
    from pytensor.compile.sharedvalue import SharedVariable
    from pytensor.graph import FunctionGraph
    from pytensor.graph.replace import clone_replace
    from pytensor.graph.traversal import graph_inputs
    from pytensor.link.jax.dispatch import jax_funcify

    output = -model.logp()  # numpyro minimises the potential: a +logp here makes every trajectory diverge
    containers = {id(v) for v in model.data_vars}
    shared = [v for v in graph_inputs([output]) if isinstance(v, SharedVariable)]
    data = [v for v in shared if id(v) in containers]
    inputs = [v.type() for v in data]
    replace: dict = dict(zip(data, inputs, strict=True))
    replace |= {v: pt.constant(v.get_value(borrow=True)) for v in shared if id(v) not in containers}
    graph = FunctionGraph(
        inputs=[*model.value_vars, *inputs], outputs=clone_replace([output], replace=replace), clone=True
    )
    mode.JAX.optimizer.rewrite(graph)
    function = jax_funcify(graph)

    def potential(values, data: tuple) -> Any:
        return function(*values, *data)[0]

    return potential, tuple(np.asarray(v.get_value()) for v in data)
