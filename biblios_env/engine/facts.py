"""The game's declared facts in one place, like OpenSpiel's ``GameInfo``: the number of
distinct actions, how long a game can last, how many gift turns and auctions it has, the
most victory points a seat can score and the bounds of the environments' rewards.

Each fact is derived from the rules' tables (the card table, the action table, the setup
counts), never typed in, so it cannot drift from them; ``tests/test_engine/test_facts.py`` checks play
against every bound. :func:`game_info` collects them for one player count.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from biblios_env.actions import MAX_BID, NUM_ACTIONS
from biblios_env.cards import CARD_CHURCH, CHURCH_IDS, DIE_MAX, DIE_START, IS_CHURCH, NUM_CATEGORIES, ChurchEffect
from biblios_env.engine.scoring import REWARDS
from biblios_env.engine.setup import PLAYER_COUNTS, STANDARD_PRESET, SetupRules, check_num_players, setup_rules

#: How far each church effect can raise the dice in total (RULES §4).
_RAISE: Final[dict[int, int]] = {
    ChurchEffect.ONE_UP: 1,
    ChurchEffect.ONE_DOWN: 0,
    ChurchEffect.TWO_UP: 2,
    ChurchEffect.TWO_DOWN: 0,
    ChurchEffect.ONE_EITHER: 1,
}

#: The most VP one seat can score: it wins every category and every church card raised the
#: dice as far as it goes (RULES §4, §6): 5 dice at 3 plus 7 raises, so 22 (at most 5 x 6).
MAX_VICTORY_POINTS: Final = min(
    NUM_CATEGORIES * DIE_MAX, NUM_CATEGORIES * DIE_START + sum(_RAISE[CARD_CHURCH[card]] for card in CHURCH_IDS)
)

#: The lowest and highest reward of a seat under each reward scheme (:func:`scoring.rewards`):
#: ``"win"`` pays a sole winner +1 and a sole loser -1; ``"vp"`` is a VP margin.
REWARD_BOUNDS: Final[dict[str, tuple[float, float]]] = {
    "win": (-1.0, 1.0),
    "vp": (-float(MAX_VICTORY_POINTS), float(MAX_VICTORY_POINTS)),
}
#: Whether the seats' rewards always sum to zero under each reward scheme.
ZERO_SUM: Final[dict[str, bool]] = {"win": True, "vp": False}


def _max_game_length(setup: SetupRules) -> int:
    """An upper bound on the actions of one game, forced ones included (``len(Game.history)``).

    Gift phase: every card of the draw pile is placed once, every gift turn has N-1 takes, and
    each church card is resolved at most once in the whole game (it is discarded then). Auction
    phase: one card per gift turn, auctioned in at most N rounds (a round that does not sell or
    discard the card ends with a default, which excludes one more seat, RULES §5). A round has
    at most MAX_BID bids (they strictly rise within 1..MAX_BID), N passes, MAX_BID payment cards
    picked and one REFUSE.
    """
    num_players = setup.num_players
    churches = sum(1 for card in setup.cards if IS_CHURCH[card])
    gift_phase = setup.deck_size + setup.gift_turns * (num_players - 1) + churches
    round_length = MAX_BID + num_players + MAX_BID + 1
    return gift_phase + setup.gift_turns * num_players * round_length


#: Per player count: an upper bound on the actions of one standard game (see :func:`_max_game_length`).
MAX_GAME_LENGTH: Final = {n: _max_game_length(setup_rules(STANDARD_PRESET, n)) for n in PLAYER_COUNTS}


@dataclass(frozen=True, slots=True)
class GameInfo:
    """The facts of a game of ``num_players`` (OpenSpiel's ``GameInfo``)."""

    num_players: int
    num_distinct_actions: int
    deck_size: int  # cards in the draw pile after setup's removals (RULES §2)
    gift_turns: int  # also the number of cards auctioned (one per gift turn)
    max_game_length: int
    max_victory_points: int
    reward_bounds: dict[str, tuple[float, float]]
    zero_sum: dict[str, bool]


def game_info(num_players: int, preset: str = STANDARD_PRESET) -> GameInfo:
    """The declared facts of a game of ``num_players`` (2, 3 or 4) dealt from ``preset``."""
    setup = setup_rules(preset, check_num_players(num_players))
    return GameInfo(
        num_players=setup.num_players,
        num_distinct_actions=NUM_ACTIONS,
        deck_size=setup.deck_size,
        gift_turns=setup.gift_turns,
        max_game_length=_max_game_length(setup),
        max_victory_points=MAX_VICTORY_POINTS,
        reward_bounds={reward: REWARD_BOUNDS[reward] for reward in REWARDS},
        zero_sum={reward: ZERO_SUM[reward] for reward in REWARDS},
    )


__all__ = ["MAX_GAME_LENGTH", "MAX_VICTORY_POINTS", "REWARD_BOUNDS", "ZERO_SUM", "GameInfo", "game_info"]
