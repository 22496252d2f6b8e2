"""Train a MaskablePPO policy by self-play: ``python -m experiments.train_ppo``.

A warm start (behaviour cloning of ``value``, then DAgger), then MaskablePPO against a pool that
mixes the heuristics with past snapshots of the learner, evaluated on duplicate deals as it
trains (the opponents: :func:`experiments.training.opponents.factory_pool`). docs/training.md is
the guide.

The modules: :mod:`~experiments.training.ppo.config` (the settings and their options),
:mod:`~experiments.training.ppo.warm_start`, :mod:`~experiments.training.ppo.evaluation`,
:mod:`~experiments.training.ppo.callback` (snapshots and evaluations as PPO trains),
:mod:`~experiments.training.ppo.training` (a whole run) and :mod:`~experiments.training.ppo.cli`.
"""
