"""Where computation runs: independent tasks on a Dask cluster (``cluster``), BLAS threads for small
problems (``blas``) and JAX's CPU devices (``devices``).
"""
