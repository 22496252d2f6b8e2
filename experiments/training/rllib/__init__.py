"""Self-play PPO with RLlib on Ray: ``python -m experiments.train_rllib`` (``pip install -e ".[rllib]"``).

One masked policy plays every seat (shared parameters) through RLlib's new API stack; the run
folder holds ``run.json``, ``progress.csv``, ``strength.csv`` and the checkpoints, and
``--resume`` continues a run from its last checkpoint. docs/rllib.md is the guide. The modules,
by job: :mod:`.config` (the settings and the file names), :mod:`.run_folder`, :mod:`.training`
(the algorithm, the loop, the checkpoints and their evaluations), :mod:`.cli`, and
:mod:`.support` (RLlib's environment adapter, the masked module, the agent that plays a checkpoint).
"""

from experiments.common.errors import RunFolderError
from experiments.training.rllib.cli import build_parser, main
from experiments.training.rllib.config import (
    CHECKPOINTS,
    EVAL_OPPONENTS,
    MODULE,
    PROGRESS_COLUMNS,
    PROGRESS_FILE,
    STRENGTH_FILE,
    RLlibConfig,
)
from experiments.training.rllib.run_folder import check_run_folder, checkpoint_path, last_checkpoint, prepare_run
from experiments.training.rllib.training import STRENGTH_COLUMNS, ForfeitError, train
from experiments.training.runs import RUN_FILE

__all__ = [
    "CHECKPOINTS", "EVAL_OPPONENTS", "MODULE", "PROGRESS_COLUMNS", "PROGRESS_FILE", "RUN_FILE", "STRENGTH_COLUMNS",
    "STRENGTH_FILE", "ForfeitError", "RLlibConfig", "RunFolderError", "build_parser", "check_run_folder",
    "checkpoint_path", "last_checkpoint", "main", "prepare_run", "train",
]  # fmt: skip
