"""Train a MaskablePPO policy by self-play: ``python -m experiments.train_ppo``.

**Warm start** (optional, on by default; ``--bc-games 0`` starts from scratch). Behaviour
cloning of ``--bc-teacher`` (``value``): ``--bc-games`` games of the teacher against itself,
the actor trained on its choices (masked cross-entropy), the critic on the final reward; then
``--dagger-rounds`` of DAgger: the policy plays ``--dagger-games`` games against the teacher,
the teacher labels every state the policy reached, and the policy retrains on all the data
(the games are :mod:`experiments.training.teacher_games`').
``--bc-data FILE`` keeps the teacher's games for the next run; ``--init MODEL.zip`` starts from
a saved model instead. The warm-started model is saved as ``warm_start.zip``.

**Self-play.** The learner plays one seat of :class:`~biblios_env.gym_env.BibliosGymEnv` (its
seat drawn per episode); the other seats are drawn per episode and seat from an
:class:`~biblios_env.gym_env.OpponentPool` that mixes the heuristics with a **growing pool of
past snapshots of the learner itself**. Every ``--snapshot-every`` steps the current policy is
exported as a policy file (:func:`agents.ppo_agent.export_policy`, numpy, a few hundred KB) and
joins the pool (the newest ``--pool-size`` are kept); snapshots play by sampling from their
masked policy with numpy inference (~0.1 ms, against ~1 ms for the ``value`` heuristic), so
they cost far less than the learner's own step. ``--opponents`` sets the mixture, e.g.
``value=0.6,hoarder=0.1,random=0.05,self=0.25``: ``self`` is the total weight of the
snapshots, shared evenly among them.

**Evaluation.** At the start, after the first update past every ``--eval-every`` steps, and at
the end, the current policy plays the fixed ``--eval-opponents`` through the tournament harness
(:mod:`experiments.tournament`: duplicate deals, the same deals at every evaluation,
deterministic play); win rates with 95% intervals go to ``eval.csv`` (one row per step, players
and opponent) and the console. A row's ``timesteps`` is what the evaluated policy has learned
from: evaluations run between updates, never inside a rollout. At the end: ``final_model.zip``
(the full MaskablePPO model), ``policy.npz`` (the policy file of the final weights),
``best_policy.npz`` (the evaluated policy with the best win rate against the first
``--eval-opponents`` entry), ``learning_curve.png``
and ``training.json`` (the command, settings, versions, wall time and steps/s).
``checkpoints/`` holds full models every ``--checkpoint-every`` steps, ``progress.csv`` SB3's log,
``monitor/env_<i>.monitor.csv`` every episode of environment ``i`` (reward, length, time).

The defaults are the recipe of the shipped policy (``agents/policies/README.md``; about 25 minutes)::

    python -m experiments.train_ppo --seed 1 --out runs/ppo-2p

and suit 2 CPU cores: 8 environments stepped in this process (``DummyVecEnv``; ``--vec subproc``
runs them in worker processes), one torch thread, two processes for the warm-start games.

The modules: :mod:`~experiments.training.ppo.config` (the settings and their options),
:mod:`~experiments.training.ppo.warm_start`, :mod:`~experiments.training.ppo.opponents` (the
mixture and the snapshot pool), :mod:`~experiments.training.ppo.evaluation`,
:mod:`~experiments.training.ppo.callback` (snapshots and evaluations as PPO trains),
:mod:`~experiments.training.ppo.training` (a whole run) and :mod:`~experiments.training.ppo.cli`.
"""
