"""BLAS threads for small problems: one thread, set in microseconds.

On a busy 2-core machine BLAS threads only contend on small matrices (a Newton step of a 20-system
Bradley–Terry fit, an L-BFGS step of a MAP fit): about 12x slower than one thread. The libraries are found
once (``threadpoolctl.ThreadpoolController``): a limit set through them costs microseconds, where
``threadpoolctl.threadpool_limits`` looks for them at every call (about 20 ms on a busy machine).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from threadpoolctl import ThreadpoolController


@functools.cache
def blas() -> ThreadpoolController:
    """The BLAS libraries loaded (numpy's and scipy's OpenBLAS), found once."""
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def one_blas_thread():
    """A context in which BLAS runs on one thread (``with one_blas_thread(): ...``)."""
    return blas().limit(limits=1, user_api="blas")
