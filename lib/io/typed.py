"""Values a user types as text, in a command-line option or a page field (light: no numpy)."""

from __future__ import annotations

from lib.errors import SettingsError


def whole_numbers(text: str, what: str) -> list[int]:
    """Whole numbers typed as ``"25, 50, 100"``, unique, in the given order.

    Parameters
    ----------
    text : str
        Comma-separated; spaces and empty entries are ignored.
    what : str
        What the numbers are (an option or field name), for the message.

    Raises
    ------
    SettingsError
        Text that is not whole numbers separated by commas.
    """
    try:
        values = [int(x) for x in text.replace(" ", "").split(",") if x]
    except ValueError:
        raise SettingsError(f"{what} must be whole numbers separated by commas (got '{text}')") from None
    return list(dict.fromkeys(values))
