"""Column roles: the user's mapping of file columns onto a format's roles, over guessed names."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from lib.errors import FormatError


def resolve_roles(
    file_columns: Sequence[str],
    required: Sequence[str],
    optional: Sequence[str],
    guesses: Mapping[str, str],
    columns: Mapping[str, str] | None,
    *,
    file: str,
    what: str,
) -> dict[str, str]:
    """Combine the user's ``{role: column}`` mapping with guesses and check it against the file.

    The user's choice wins over a guess; an empty column name unsets a role (and keeps it from
    being guessed); a column the user mapped is not guessed for another role.

    Parameters
    ----------
    file_columns : sequence of str
        The file's column names.
    required, optional : sequence of str
        The roles of the format.
    guesses : mapping
        ``{role: column}`` guessed from the names.
    columns : mapping or None
        ``{role: column}`` chosen by the user.
    file, what : str
        File name and a name for the format ("the pairwise format"), for messages.

    Returns
    -------
    dict
        ``{role: column}`` with every required role filled.

    Raises
    ------
    FormatError
        Unknown role, a mapped column that is not in the file, or a required role without column.
    """
    roles = list(required) + list(optional)
    user = dict(columns or {})
    for role in user:
        if role not in roles:
            raise FormatError(f"unknown role '{role}' for {what}; roles are {', '.join(roles)}", file=file)
    taken = {c for c in user.values() if c}
    mapping = {r: c for r, c in guesses.items() if r not in user and c not in taken}
    mapping.update({r: c for r, c in user.items() if c})
    available = ", ".join(map(str, file_columns))
    for role, col in mapping.items():
        if col not in file_columns:
            raise FormatError(
                f"column '{col}' (mapped to role '{role}') is not in the file; its columns are {available}",
                file=file,
                column=col,
            )
    missing = [r for r in required if r not in mapping]
    if missing:
        raise FormatError(
            f"no column for required role{'s' if len(missing) > 1 else ''} {', '.join(missing)} of "
            f"{what}; name the column(s) with ROLE=COLUMN (the file's columns are {available})",
            file=file,
        )
    return mapping
