"""sys.exit with the code or message named on the command line (default: 3)."""

import sys


def code_from(argv):
    return int(argv[1]) if len(argv) > 1 and argv[1].isdigit() else 3


def message(argv):
    return argv[1] if len(argv) > 1 and not argv[1].isdigit() else None


print("exiting")
sys.stdout.flush()
if message(sys.argv):
    sys.exit(message(sys.argv))
sys.exit(code_from(sys.argv))
