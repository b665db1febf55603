"""`python -m tierjit ...`: the tierjit command (tierjit.cli)."""

import sys

from .cli import main

sys.exit(main())
