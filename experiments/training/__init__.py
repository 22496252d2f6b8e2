"""Training agents for Biblios: the code behind the commands ``experiments.train_network`` (expert
iteration), ``experiments.train_ppo`` (MaskablePPO self-play) and ``experiments.train_rllib``
(RLlib self-play), which are thin entry points into this package.

* :mod:`~experiments.training.teacher_games`: the games in which a teacher labels a learner
  seat's decisions, in parallel: the data of expert iteration and of PPO's warm start;
* :mod:`~experiments.training.networks`: the policy-and-value network in torch, its training on
  labelled samples and its export to numpy;
* :mod:`~experiments.training.expert_iteration`: the expert-iteration recipe, its run folder and
  its command line;
* :mod:`experiments.training.ppo`: MaskablePPO self-play (settings, warm start, opponents,
  evaluation, the training run and its command line);
* :mod:`~experiments.training.rllib`: PPO self-play with RLlib on Ray (the RLlib adapter and the
  agent that plays a checkpoint are :mod:`experiments.training.rllib.support`).

Each command's settings are one config dataclass whose fields declare the command-line options
(:func:`experiments.common.cli.add_config_arguments`): a new option is a new field.
"""
