"""``python -m experiments.serve``: the command line of :mod:`experiments.serve.cli`."""

import sys

from experiments.serve.cli import main

if __name__ == "__main__":
    sys.exit(main())
