"""The column-mapping widget every upload uses (Data, Revision edits, Human cost pages).

Not a page itself; imported as ``pages.mapping``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import streamlit as st

UNMAPPED = "(none)"
"""Shown for a role no column is mapped to: a required role left so is reported as missing."""


def column_mapping(
    columns: Sequence[str],
    required: Sequence[str],
    optional: Sequence[str],
    guesses: Mapping[str, str],
    *,
    key: str,
    help: Mapping[str, str] | None = None,
    per_row: int = 4,
) -> tuple[dict[str, str], list[str]]:
    """Drop-downs that map the file's columns onto roles, guesses preselected.

    A role without a guess starts unmapped (never "the first column"), so nothing is read from a
    column the user did not choose or that was not recognised by name.

    Parameters
    ----------
    columns : the file's column names.
    required, optional : the roles.
    guesses : ``{role: column}`` proposed from the names.
    key : prefix of the widget keys (one per page and format, e.g. ``"data_pairwise"``).
    help : optional help text per role.

    Returns
    -------
    (mapping, missing)
        ``mapping`` is ``{role: column}`` with ``""`` for an unmapped role (which keeps it from
        being guessed later); ``missing`` lists the required roles left unmapped.
    """
    mapping: dict[str, str] = {}
    cells = st.columns(per_row)
    options = [UNMAPPED, *columns]
    for n, role in enumerate([*required, *optional]):
        guess = guesses.get(role)
        index = options.index(guess) if guess in options else 0
        label = role if role in required else f"{role} (optional)"
        choice = cells[n % per_row].selectbox(label, options, index=index, key=f"{key}_role_{role}",
                                              help=(help or {}).get(role))
        mapping[role] = "" if choice == UNMAPPED else choice
    missing = [r for r in required if not mapping[r]]
    return mapping, missing
