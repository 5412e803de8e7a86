"""Where computation runs: independent tasks on a Dask cluster (``cluster``) and BLAS threads for
small problems (``blas``).
"""
