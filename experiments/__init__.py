"""Experiments on top of the agents: the tournament harness (``python -m experiments.tournament``)
and the engine speed benchmark (``python -m experiments.benchmarks.engine``).

:mod:`experiments.common.match` plays one game between agents, :mod:`experiments.common.stats` turns
results into win rates, confidence intervals and ratings, and :mod:`experiments.tournament`
schedules duplicate-deal tournaments over the machine's cores and writes the results.
:func:`experiments.common.match.play_out` is the one loop that asks the seat to act and applies its
answer; :mod:`experiments.common.cli` holds what the command lines share (the program-name rule of
their help, the help formatter).
"""
