"""The ``VIEW`` every response about a game carries: the player's seat's view of it and nothing
more (RULES §7). The table is the replay page's seat scene (:func:`experiments.table.scenes.seat_scene`),
built from the engine's :func:`~biblios_env.engine.views.player_view` of that seat, never from the
state; the news is the narration as that seat saw it; the legal actions are asked only on its own
turn. What the state alone gives is public by the rules: the final score (every hand is scored in the
open, RULES §6) and the game's progress. The seed is not in it: it deals every hidden card.

It is built under the game's ``state_lock`` (a bot thread may be moving): ``thinking`` says the
bots are still moving, so the client asks again; ``error`` is the fault that stopped the game.
"""

from __future__ import annotations

from typing import Any

from biblios_env.engine.state import Decision
from biblios_env.engine.views import player_view
from experiments.serve.games import LiveGame
from experiments.serve.labels import question
from experiments.table.menus import capacity
from experiments.table.page_data import final_score, line_data
from experiments.table.scenes import seat_scene


def game_view(live: LiveGame, *, thinking: bool = False) -> dict[str, Any]:
    """The player's seat's ``VIEW`` of ``live`` now (docs/serve.md lists its keys); ``thinking``:
    its bot thread is running. The caller holds ``live.state_lock``."""
    game, seat = live.game, live.seat
    state = game.state
    view = player_view(state, seat)
    finished = game.is_over
    asked = live.player_to_act() and not thinking
    config = game.config
    bidding = asked and view.decision == Decision.BID
    return {
        "game_id": live.game_id,
        "players": game.num_players,
        "seat": seat,
        "names": live.names,
        "autoplay": live.autoplay,
        "moves": len(game.history),
        "finished": finished,
        "thinking": thinking,
        "error": live.error,
        "your_turn": asked,
        "question": question(view, None if config.strict_bids else config.penalty) if asked else None,
        "can_pay": capacity(view) if bidding else None,
        "legal_actions": live.legal_labels() if asked else [],
        "table": seat_scene(view),
        "bids": live.bids,
        "landmark": live.landmark,
        "narration": [line_data(line) for lines in live.told[live.since :] for line in lines],
        "scores": list(state.vp) if finished else None,
        "score": final_score(state) if finished else None,
    }
