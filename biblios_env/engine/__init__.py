"""The Biblios rules engine: pure Python, no PettingZoo or Gymnasium imports."""

from biblios_env.engine.game import Game, IllegalActionError
from biblios_env.engine.sampling import InconsistentViewError, sample_game, sample_state
from biblios_env.engine.state import Decision, Phase, State
from biblios_env.engine.views import PlayerView, player_view

__all__ = [
    "Decision",
    "Game",
    "IllegalActionError",
    "InconsistentViewError",
    "Phase",
    "PlayerView",
    "State",
    "player_view",
    "sample_game",
    "sample_state",
]
