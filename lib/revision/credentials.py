"""Which API key may go to which server: the operator's key only to the operator's server.

The app's operator configures a server and its key (``OPENAI_BASE_URL``, ``OPENAI_API_KEY`` in the
environment or ``.streamlit/secrets.toml``). A visitor may type another Base URL in the browser;
the operator's key must never be sent there, or anyone could collect it with a server of their own.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from urllib.parse import urlsplit

from lib.errors import SettingsError

DEFAULT_BASE_URL = "https://api.openai.com/v1"
"""Where the openai SDK sends requests when no base URL is configured."""

REDACTED = "[redacted]"
"""What stands in a stored or printed text where a key or a token was."""

_CREDENTIAL = re.compile(
    r"(?i)(\bbearer\s+|\b(?:authorization|api[-_]?key)\b[\"']?\s*[:=]\s*[\"']?(?:(?:bearer|basic|token)\s+)?)"
    r"([^\s\"',;}\]]{8,})"
)
"""A bearer token, or the value of an Authorization / API-key header or field (8 characters or more), as a
server may quote it."""


def redact(text: str, *keys: str) -> str:
    """``text`` with each of ``keys``, and any bearer token or Authorization / API-key value, replaced by
    :data:`REDACTED`: the one filter of every error text that is stored or printed (a server answering
    401 may quote the request's Authorization header in its body, and the SDK's message quotes the body).
    """
    text = _CREDENTIAL.sub(lambda m: m.group(1) + REDACTED, text)
    for key in sorted({k.strip() for k in keys if k and k.strip()}, key=len, reverse=True):
        text = text.replace(key, REDACTED)
    return text


def _split(url: str):
    try:
        return urlsplit(url.strip())
    except ValueError as err:  # e.g. an unclosed IPv6 bracket
        raise SettingsError(f"the Base URL '{url}' is not a valid URL ({err})") from None


def check_base_url(url: str) -> str:
    """The Base URL without surrounding blanks, checked before any client is built.

    Raises
    ------
    SettingsError
        A URL holding a blank or control character (a tab pasted with it: the HTTP client would fail
        with ``InvalidURL``), or one that is not ``http://`` or ``https://`` with a host and a valid port.
    """
    url = url.strip()
    bad = next((c for c in url if c.isspace() or not c.isprintable()), None)
    if bad is not None:
        raise SettingsError(
            f"the Base URL {url!r} contains {bad!r} at position {url.index(bad) + 1}: "
            "type it without blanks or control characters"
        )
    parts = _split(url)
    try:
        parts.port  # noqa: B018 - raises on a port that is not a number from 0 to 65535
    except ValueError:
        raise SettingsError(f"the Base URL {url!r} has an invalid port") from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise SettingsError(
            f"the Base URL {url!r} must start with http:// or https:// and name a server, "
            "e.g. https://api.openai.com/v1"
        )
    return url


def _same_server(a: str, b: str) -> bool:
    """Equal scheme, host (with port and any user part) and path, ignoring case of the host and a final '/'."""
    x, y = _split(a), _split(b)
    return (x.scheme.lower(), x.netloc.lower(), x.path.rstrip("/"), x.query) == (
        y.scheme.lower(),
        y.netloc.lower(),
        y.path.rstrip("/"),
        y.query,
    )


def choose_key(typed_url: str, typed_key: str, env: Mapping[str, str]) -> tuple[str, str]:
    """The base URL to call and the API key to send with it.

    Parameters
    ----------
    typed_url, typed_key : str
        What the visitor typed in this session ("" when nothing).
    env : mapping
        The operator's configuration: ``OPENAI_BASE_URL`` and ``OPENAI_API_KEY`` (environment,
        then secrets); missing or "" when not set.

    Returns
    -------
    (url, key)
        The typed URL, else the configured one, else :data:`DEFAULT_BASE_URL`. The key is the
        typed one; the operator's key only when the URL is the operator's server (same scheme,
        host, port and path); "" when there is none (fine for local servers).

    Raises
    ------
    SettingsError
        A Base URL that cannot be parsed or used (:func:`check_base_url`); or the visitor typed another
        server than the operator's, without a key of their own, while the operator has a key: the
        operator's key is not sent there.
    """
    configured = (env.get("OPENAI_BASE_URL") or "").strip() or DEFAULT_BASE_URL
    server_key = (env.get("OPENAI_API_KEY") or "").strip()
    url = check_base_url(typed_url.strip() or configured)
    if typed_key.strip():
        return url, typed_key.strip()
    if _same_server(url, configured):
        return url, server_key
    if server_key:
        raise SettingsError(
            f"the Base URL '{url}' is not the server this app is configured for: type an API "
            "key for it (the app's own key is only sent to its configured server)"
        )
    return url, ""
