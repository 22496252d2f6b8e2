"""A game's options, declared once: :class:`GameConfig`.

Every place that names the options reads them from here: :class:`~biblios_env.engine.game.Game`
keeps one, both environments build one from their arguments (so a bad option is rejected when
the environment is made, with the same message), a game log stores :meth:`GameConfig.to_dict`
and reads it back with :meth:`GameConfig.from_dict`, the golden playthroughs and the experiments'
command lines take their option names and choices from its fields. A new option is a new field
here (with its check in :meth:`GameConfig.__post_init__`), and the rest follows.

The seed, a given deck and ``auto_forced`` are not options of the *game*: they say which deal is
played and how the caller steps it, so they stay arguments of :class:`Game`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from biblios_env.engine.flow import PRESETS, STANDARD_PRESET
from biblios_env.engine.setup import check_num_players, check_seat, setup_rules
from biblios_env.engine.state import State

STANDARD: Final = "standard"
#: The "medieval bluffs" penalty variant (RULES §5).
BLUFFS: Final = "bluffs"
PENALTIES: Final = (STANDARD, BLUFFS)
SHUFFLED_ORDER: Final = "shuffle"
#: Auctions in the order the cards were placed (to reproduce rulebook scenarios).
PLACED_ORDER: Final = "placed"
AUCTION_ORDERS: Final = (SHUFFLED_ORDER, PLACED_ORDER)


def check_choice(name: str, value: object, choices: tuple[str, ...]) -> str:
    """``value`` if it is one of ``choices``, else ValueError naming the value and the choices."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}, got {value!r}")
    return str(value)


def check_bool(name: str, value: object) -> bool:
    """``value`` as a bool if it is one (numpy's included): ``1`` or ``"yes"`` are a caller's
    mistake, not a flag."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def check_seed(seed: object) -> int:
    """Seeds are non-negative ints so that every game can be written to a JSON log."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed!r}")
    return int(seed)


@dataclass(frozen=True, slots=True)
class GameConfig:
    """The options of one game of Biblios, checked when made (a bad value raises ValueError
    naming it and what was expected), immutable, and plain JSON values once checked (numpy
    ints and bools become Python's).

    Attributes:
        num_players: 2, 3 or 4.
        penalty: ``"standard"`` or ``"bluffs"`` (the "medieval bluffs" variant, RULES §5).
        strict_bids: mask bids to what the bidder can pay and remove REFUSE.
        first_player: the seat that starts the gift phase and the auction phase.
        auction_order: ``"shuffle"`` (the rules) or ``"placed"`` (auction cards in the order
            they were put on the pile, to reproduce rulebook scenarios).
        preset: the cards dealt: ``"standard"`` (the rules' 87) or ``"mini"`` (five cards, one
            gift turn, one auction, two players: small enough for exact methods; see
            :data:`~biblios_env.engine.setup.MINI_CARDS`).
    """

    num_players: int = 2
    penalty: str = STANDARD
    strict_bids: bool = False
    first_player: int = 0
    auction_order: str = SHUFFLED_ORDER
    preset: str = STANDARD_PRESET

    def __post_init__(self) -> None:
        players = check_num_players(self.num_players)
        preset = check_choice("preset", self.preset, PRESETS)
        setup_rules(preset, players)  # a preset may not exist for every player count
        checked = {
            "num_players": players,
            "penalty": check_choice("penalty", self.penalty, PENALTIES),
            "strict_bids": check_bool("strict_bids", self.strict_bids),
            "first_player": check_seat(self.first_player, players, "first_player"),
            "auction_order": check_choice("auction_order", self.auction_order, AUCTION_ORDERS),
            "preset": preset,
        }
        for name, value in checked.items():  # a frozen dataclass sets its checked values this way
            object.__setattr__(self, name, value)

    @property
    def bluffs(self) -> bool:
        return self.penalty == BLUFFS

    @property
    def auction_order_placed(self) -> bool:
        return self.auction_order == PLACED_ORDER

    def to_dict(self) -> dict[str, Any]:
        """The options as a JSON-ready dict, in field order (a game log's ``config``)."""
        return {field.name: getattr(self, field.name) for field in dataclasses.fields(self)}

    @classmethod
    def from_dict(cls, options: Mapping[str, Any]) -> GameConfig:
        """The config a dict describes; unknown option names are a ValueError naming them and the
        known ones (a missing one takes its default)."""
        unknown = sorted(map(repr, set(options) - set(cls.names())))
        if unknown:
            raise ValueError(f"unknown game option(s) {', '.join(unknown)}; the options are {list(cls.names())}")
        return cls(**options)

    @classmethod
    def from_state(cls, state: State) -> GameConfig:
        """The options a position was dealt with (a state records them as flags)."""
        return cls(
            num_players=state.num_players,
            penalty=BLUFFS if state.bluffs else STANDARD,
            strict_bids=state.strict_bids,
            first_player=state.first_player,
            auction_order=PLACED_ORDER if state.auction_order_placed else SHUFFLED_ORDER,
            preset=state.preset,
        )

    @staticmethod
    def names() -> tuple[str, ...]:
        """The option names, in declaration order."""
        return tuple(field.name for field in dataclasses.fields(GameConfig))
