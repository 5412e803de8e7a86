"""Subcommands of ``python -m lib``: one module each, with ``add_parser`` and ``run``."""
