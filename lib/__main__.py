"""``python -m lib``: the command line (:func:`lib.cli.main`)."""

import sys

from lib.cli import main

sys.exit(main())
