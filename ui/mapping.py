"""The column-mapping widget every upload uses (Data, Revision edits, Human cost pages).

Not a page itself; imported as ``ui.mapping``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import streamlit as st

from lib.io.tables import COMBINE, combined_name

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
    combine: bool = False,
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
    combine : offer "combine columns": the columns chosen there, joined (``"story+test"``,
        :func:`lib.io.tables.combined_name`), become one more choice for every role; the reader builds
        the combined column (:func:`lib.io.tables.combine_columns`).

    Returns
    -------
    (mapping, missing)
        ``mapping`` is ``{role: column}`` with ``""`` for an unmapped role (which keeps it from
        being guessed later); ``missing`` lists the required roles left unmapped.
    """
    mapping: dict[str, str] = {}
    options = [UNMAPPED, *columns]
    # A combination chosen before (e.g. restored from another page visit) stays a choice.
    options += [
        g
        for g in dict.fromkeys(guesses.values())
        if g and g not in options and all(part.strip() in columns for part in g.split(COMBINE))
    ]
    if combine:
        with st.expander("Combine columns", expanded=len(options) > len(columns) + 1):
            chosen = st.multiselect(
                "Columns to combine into one, e.g. story and test as the prompt",
                columns,
                key=f"{key}_combine",
                help="Each row's cells are joined; the combination "
                "is then offered for every role below (on the command line: "
                "--columns prompt=story+test).",
            )
        if len(chosen) > 1 and combined_name(chosen) not in options:
            options.append(combined_name(chosen))
    cells = st.columns(per_row)
    for n, role in enumerate([*required, *optional]):
        guess = guesses.get(role)
        widget = f"{key}_role_{role}"
        # Seeded through session state, not index=: Streamlit then sends the value to the browser, which
        # otherwise keeps showing a choice made for an earlier file under the same key (issue 16, item 15).
        if st.session_state.get(widget) not in options:
            st.session_state[widget] = guess if guess in options else UNMAPPED
        label = role if role in required else f"{role} (optional)"
        choice = cells[n % per_row].selectbox(label, options, key=widget, help=(help or {}).get(role))
        mapping[role] = "" if choice == UNMAPPED else choice
    missing = [r for r in required if not mapping[r]]
    return mapping, missing
