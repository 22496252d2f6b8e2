"""``python -m experiments.tournament``: the command line of :mod:`experiments.tournament.cli`."""

import sys

from experiments.tournament.cli import main

if __name__ == "__main__":
    sys.exit(main())
