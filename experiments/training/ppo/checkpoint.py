"""The resumable checkpoint of a PPO run (see :mod:`experiments.training.ppo`):
``checkpoint.zip`` (SB3's model: weights, optimizer, step counter) beside ``checkpoint.json``
(the self-play state SB3 does not keep: the snapshot pool, the next snapshot, evaluation and
checkpoint steps, the best evaluation, the seconds trained, the warm start's record).

Both are written whole and moved into place, the model first: ``checkpoint.json`` names the step
of the model it belongs to, so a stop between the two writes is detected, not continued from a
mismatched pair. A resumed run continues the counters, the learning-rate schedule, the pool and
the evaluations; the games that were in progress are dealt anew (SB3 keeps no environment
state), so it is not step-for-step the uninterrupted run (the self-play trainer's is).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from experiments.common.errors import CheckpointError
from experiments.training.runs import write_json, written_whole

MODEL_FILE: Final = "checkpoint.zip"
STATE_FILE: Final = "checkpoint.json"


@dataclass
class SelfPlayState:
    """What the self-play callback must carry across a stop."""

    timesteps: int = 0
    snapshots: list[str] = field(default_factory=list)
    next_snapshot: int = 0
    next_eval: float = 0.0
    next_checkpoint: float = 0.0
    best: tuple[float, int] = (-1.0, -1)
    seconds: float = 0.0
    warm_start: dict[str, Any] = field(default_factory=dict)


def save(model: Any, state: SelfPlayState, out: Path) -> None:
    """Write the model, then the state naming its step."""
    with written_whole(out / MODEL_FILE) as temporary:
        model.save(temporary)
    write_json(out / STATE_FILE, {**state.__dict__, "best": list(state.best)})


def load_state(out: Path) -> SelfPlayState:
    """The self-play state of the run in ``out`` (CheckpointError if it is missing or unreadable)."""
    path = out / STATE_FILE
    if not path.is_file() or not (out / MODEL_FILE).is_file():
        raise CheckpointError(f"{out} has no checkpoint ({MODEL_FILE} and {STATE_FILE}): nothing to resume")
    try:
        data = json.loads(path.read_text())
        return SelfPlayState(**{**data, "best": tuple(data["best"])})
    except (ValueError, TypeError, KeyError) as error:
        raise CheckpointError(f"{path} is not a PPO checkpoint state: {error}") from None


def load_model(out: Path, state: SelfPlayState, env: Any) -> Any:
    """The model of the checkpoint on ``env``, checked against the state's step."""
    from sb3_contrib import MaskablePPO

    model = MaskablePPO.load(out / MODEL_FILE, env=env, device="cpu")
    if model.num_timesteps != state.timesteps:
        raise CheckpointError(
            f"{out / MODEL_FILE} is at step {model.num_timesteps:,} but {out / STATE_FILE} at step "
            f"{state.timesteps:,}: the run stopped while saving; no consistent checkpoint to resume"
        )
    return model


__all__ = ["MODEL_FILE", "STATE_FILE", "SelfPlayState", "load_model", "load_state", "save"]
