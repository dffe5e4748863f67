"""``python -m spieltisch.train.cli``: the same as the ``spieltisch`` command."""

import sys

from spieltisch.train.cli import main

sys.exit(main())
