"""A PyMC model's log density as a JAX function of its values and its data, the data passed as arguments.

PyMC's ``get_jaxified_logp`` replaces every shared variable of the graph, the model's data containers
(``pm.Data``) included, by a constant: the data are baked into every compiled program, whose key in
JAX's persistent compilation cache (:mod:`lib.inference.compile_cache`) then hashes them, so a new file
of the same sizes compiled everything again. Here the data containers are inputs of the function (the
other shared variables, the dims' lengths, which fix the shapes, stay constants as in PyMC): a program
compiled for one file is the program of every file of the same sizes (issue 35 item 2,
``bench/bench_compile_cache.py --command fit-new-file``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np


def jaxified_logp_of_data(model) -> tuple[Callable[[Any, tuple], Any], tuple[np.ndarray, ...]]:
    """The model's log density ``logp(values, data)`` in JAX, and the model's data.

    Parameters
    ----------
    model : pymc.Model

    Returns
    -------
    logp : callable
        ``logp(values, data)``: ``values`` a sequence of arrays in the order of ``model.value_vars``
        (unconstrained), ``data`` a tuple of arrays in the order of the second return; the log density
        (a scalar), as ``pymc.sampling.jax.get_jaxified_logp(model, negative_logp=False)`` gives it.
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

    output = model.logp()
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

    def logp(values, data: tuple) -> Any:
        return function(*values, *data)[0]

    return logp, tuple(np.asarray(v.get_value()) for v in data)
