"""``python -m experiments.play``: the command line of :mod:`experiments.play.cli`."""

import sys

from experiments.play.cli import main

if __name__ == "__main__":
    sys.exit(main())
