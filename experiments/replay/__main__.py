"""``python -m experiments.replay``: the command line of :mod:`experiments.replay.cli`."""

import sys

from experiments.replay.cli import main

if __name__ == "__main__":
    sys.exit(main())
