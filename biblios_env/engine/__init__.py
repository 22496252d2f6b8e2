"""The Biblios rules engine: pure Python, no PettingZoo or Gymnasium imports."""

from biblios_env.engine.game import Game, IllegalActionError
from biblios_env.engine.state import Decision, Phase, State

__all__ = ["Decision", "Game", "IllegalActionError", "Phase", "State"]
