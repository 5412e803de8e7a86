import sys

from lib.cli import main

sys.exit(main())
