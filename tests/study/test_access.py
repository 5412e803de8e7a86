"""Who may open the researcher's pages: loopback without a secret; otherwise the secret."""

from __future__ import annotations

import pytest

from lib.study.access import SECRET_ENV, SecretGate, operator_secret, secret_required, served_locally


@pytest.mark.parametrize(
    ("address", "local"),
    [
        ("127.0.0.1", True),
        ("localhost", True),
        ("::1", True),
        ("[::1]", True),
        ("0.0.0.0", False),
        ("", False),
        (None, False),
        ("10.0.0.5", False),
    ],
)
def test_loopback_addresses(address, local):
    assert served_locally(address) is local


def secret_matches(given: str) -> bool:
    return SecretGate().check(given, operator_secret()).ok  # a fresh gate: no wait from earlier guesses


def test_secret_rules(monkeypatch):
    monkeypatch.delenv(SECRET_ENV, raising=False)
    assert not secret_required("127.0.0.1") and secret_required("0.0.0.0") and secret_required(None)
    assert not secret_matches("") and not secret_matches("anything")  # no secret set: nothing matches
    monkeypatch.setenv(SECRET_ENV, "operator-secret")
    assert secret_required("127.0.0.1")  # a secret set is always asked for
    assert secret_matches("operator-secret") and not secret_matches("operator-secreT") and not secret_matches("")
