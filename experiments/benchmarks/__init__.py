"""Speed measurements, one command each (``python -m experiments.benchmarks.NAME``); their figures
are in docs/performance.md and docs/scaling.md."""
