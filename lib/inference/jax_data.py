"""A PyMC model's potential (minus its log density) as a JAX function of its values and its data, the data
passed as arguments.

PyMC's ``get_jaxified_logp`` replaces every shared variable of the graph, the model's data containers
(``pm.Data``) included, by a constant, and a model built on numpy arrays (the ranking model's votes) holds
its data as constants from the start: the data are baked into every compiled program, whose key in JAX's
persistent compilation cache (:mod:`lib.inference.compile_cache`) then hashes them, so a new file of the
same sizes compiled everything again. Here the data are inputs of the function: the data containers, and
the constant arrays that hold data (:func:`data_constants`). The other shared variables and constants
(the dims' lengths, which fix the shapes; the priors' parameters) stay constants as in PyMC: a program
compiled for one file is the program of every file of the same sizes (issue 35 items 1 and 2,
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
    as PyMC does, with the data as inputs instead of constants.

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
        The data the log density reads: the current values of the model's data containers (``pm.Data``),
        then the constant arrays that hold data (:func:`data_constants`).
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
    constants = data_constants(output)
    inputs = [v.type() for v in [*data, *constants]]
    replace: dict = dict(zip([*data, *constants], inputs, strict=True))
    replace |= {v: pt.constant(v.get_value(borrow=True)) for v in shared if id(v) not in containers}
    graph = FunctionGraph(
        inputs=[*model.value_vars, *inputs], outputs=clone_replace([output], replace=replace), clone=True
    )
    mode.JAX.optimizer.rewrite(graph)
    function = jax_funcify(graph)

    def potential(values, data: tuple) -> Any:
        return function(*values, *data)[0]

    return potential, (*(np.asarray(v.get_value()) for v in data), *(np.asarray(v.data) for v in constants))


def data_constants(output) -> list:
    """The constant arrays of the graph of ``output`` that hold data, in a fixed order (the graph's).

    A constant is taken when its values, whatever they are, leave every shape of the graph as it is: an
    array with a dim longer than 1 (a length-1 array is a prior's parameter, not data), not boolean (a mask's
    values would set the shape it selects), every use of it elementwise or the indices of advanced indexing
    (one gathered value per index). Anything else, a shape or a slice bound, stays a constant.
    """
    from pytensor.graph.traversal import graph_inputs, io_toposort
    from pytensor.tensor.elemwise import Elemwise
    from pytensor.tensor.subtensor import (
        AdvancedIncSubtensor,
        AdvancedIncSubtensor1,
        AdvancedSubtensor,
        AdvancedSubtensor1,
    )
    from pytensor.tensor.variable import TensorConstant

    first_index: dict[type, int] = {
        AdvancedSubtensor: 1,
        AdvancedSubtensor1: 1,
        AdvancedIncSubtensor: 2,
        AdvancedIncSubtensor1: 2,
    }  # the position of each advanced indexing's first index
    candidates = [
        v
        for v in graph_inputs([output])
        if isinstance(v, TensorConstant) and v.dtype != "bool" and any(n != 1 for n in v.data.shape)
    ]
    values_only = {id(v): True for v in candidates}
    for node in io_toposort(list(graph_inputs([output])), [output]):
        for position, var in enumerate(node.inputs):
            if id(var) in values_only:
                op = type(node.op)
                ok = isinstance(node.op, Elemwise) or (op in first_index and position >= first_index[op])
                values_only[id(var)] &= ok
    return [v for v in candidates if values_only[id(v)]]
