"""Exact solvers over a preset's whole game tree, exported by :mod:`biblios_env.openspiel`: CFR,
CFR+ and DCFR over the tree held as numpy arrays (:mod:`experiments.exact.numpy_cfr`, with exact
best responses) and Gambit's sequence-form LP (:mod:`experiments.exact.gambit_lp`). The command
that runs them is ``python -m experiments.openspiel_cfr``; docs/openspiel.md tells the story."""
