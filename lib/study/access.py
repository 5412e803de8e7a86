"""Who may open the researcher's pages: anyone on this machine, else whoever knows the operator's secret.

When the app is served on loopback only (``server.address`` 127.0.0.1, the project's
``.streamlit/config.toml``) and no secret is set, the researcher's pages are open, as before studies
existed. When it is served beyond this machine (any other address, or Streamlit's default of every
interface), or whenever ``EVAL_OPERATOR_SECRET`` is set, they need that secret; served beyond this
machine without a secret set, they stay closed. Annotators' links never need it and never reach them.
"""

from __future__ import annotations

import hmac
import os

SECRET_ENV = "EVAL_OPERATOR_SECRET"
LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})


def operator_secret() -> str | None:
    """``$EVAL_OPERATOR_SECRET``, None when unset or empty."""
    return os.environ.get(SECRET_ENV) or None


def served_locally(address: str | None) -> bool:
    """Whether ``server.address`` lets only this machine connect (None: Streamlit's default, every interface)."""
    return address is not None and address.strip("[]") in LOOPBACK


def secret_required(address: str | None) -> bool:
    """Whether the researcher's pages ask for the operator's secret when served on ``address``."""
    return operator_secret() is not None or not served_locally(address)


def secret_matches(given: str) -> bool:
    """Whether ``given`` is the operator's secret (compared in constant time; False when none is set)."""
    secret = operator_secret()
    return secret is not None and hmac.compare_digest(given.encode(), secret.encode())
