"""Efficient human evaluation of language models: pure computation behind the dashboard.

Nothing in this package imports streamlit; every function works in a notebook. Importing it fixes JAX's
number of CPU devices for the process, before JAX is imported (:mod:`lib.engine.devices`).
"""

from lib.engine.devices import split_host_cpu

split_host_cpu()
