"""``python -m lib``: the command line (:func:`lib.cli.main`), ended by :func:`lib.cli.exit_now` once the command
has returned (an exception, or argparse's exit, ends it as usual)."""

from lib.cli import exit_now, main

exit_now(main())
