"""The engine's public face: a :class:`Game` validates actions, applies forced decisions,
keeps the action history and chance outcomes, and can be cloned, snapshotted and logged.

It knows nothing about PettingZoo; seats are plain ints.
"""

from __future__ import annotations

import secrets
from bisect import bisect_left
from collections.abc import Sequence
from typing import Any, Final, SupportsIndex

import numpy as np

from biblios_env.actions import check_action, describe
from biblios_env.engine import rules
from biblios_env.engine.config import GameConfig, check_bool, check_seed
from biblios_env.engine.flow import CHANCE_KINDS, NO_CHANCE, PHASE_END
from biblios_env.engine.setup import new_state
from biblios_env.engine.state import NO_CARD, Decision, State

PHASE_NAMES: Final = ("gift", "auction", "end")


class IllegalActionError(ValueError):
    """An action id that is not legal for the current decision."""


class Game:
    """One game of Biblios from setup to scoring.

    Args:
        num_players: 2, 3 or 4.
        seed: seeds the single ``numpy.random.Generator`` behind every chance event
            (removal, shuffles, penalty picks); a random seed is drawn when ``None``,
            and kept in :attr:`seed` so the game can still be logged and replayed.
        penalty: ``"standard"`` or ``"bluffs"`` (the "medieval bluffs" variant, RULES §5).
        strict_bids: mask bids to what the bidder can pay and remove REFUSE.
        first_player: the seat that starts the gift phase and the auction phase.
        auction_order: ``"shuffle"`` (the rules) or ``"placed"`` (auction cards in the
            order they were put on the pile, to reproduce rulebook scenarios).
        preset: ``"standard"`` (the rules' cards) or ``"mini"`` (a two-player game of five
            cards for exact methods, :data:`~biblios_env.engine.setup.MINI_CARDS`).
        deck: the exact draw pile after removal, top first (see ``setup.check_deck``).
        auto_forced: apply decisions that have a single legal action automatically.
        explicit_chance: stop at every random event (the removals, each draw, each auction's
            card, each card a penalty takes) until the caller applies its outcome, a card id
            from :meth:`chance_outcomes` (OpenSpiel's explicit chance). By default the seeded
            generator gives each outcome at once and the caller sees only the players' decisions.

    The options are kept, checked, as :attr:`config` (a frozen
    :class:`~biblios_env.engine.config.GameConfig`); :meth:`from_config` starts a game from one.
    """

    __slots__ = ("_legal", "auto_forced", "config", "deck", "deck_given", "history", "seed", "state")

    config: GameConfig
    seed: int
    deck: tuple[int, ...]
    deck_given: bool
    auto_forced: bool
    state: State
    history: list[int]
    _legal: list[int] | None

    def __new__(cls, *args: object, **kwargs: object) -> Game:
        """An instance with no field set: :meth:`from_state` and :meth:`clone` fill every field
        through :meth:`_fill`, and a compiled class (mypyc) can skip ``__init__`` only through a
        ``__new__`` of its own."""
        return super().__new__(cls)

    # The arguments are typed as what is accepted (numpy ints among the ints) and checked in
    # the body, so that a bad value gets the same named ValueError on both builds: a compiled
    # parameter typed ``int``, ``str`` or ``bool`` would reject it with a bare TypeError first.
    def __init__(
        self,
        num_players: SupportsIndex = 2,
        *,
        seed: SupportsIndex | None = None,
        penalty: object = "standard",
        strict_bids: object = False,
        first_player: SupportsIndex = 0,
        auction_order: object = "shuffle",
        preset: object = "standard",
        deck: Sequence[int] | None = None,
        auto_forced: object = True,
        explicit_chance: object = False,
    ) -> None:
        config = GameConfig(num_players, penalty, strict_bids, first_player, auction_order, preset)  # type: ignore[arg-type]
        self._start(config, seed, deck, auto_forced, explicit_chance)

    @classmethod
    def from_config(
        cls,
        config: GameConfig,
        *,
        seed: SupportsIndex | None = None,
        deck: Sequence[int] | None = None,
        auto_forced: object = True,
        explicit_chance: object = False,
    ) -> Game:
        """A new game with the options of ``config`` (the other arguments as for :class:`Game`)."""
        if not isinstance(config, GameConfig):
            raise TypeError(f"config must be a GameConfig, got {config!r}")
        game = cls.__new__(cls)
        game._start(config, seed, deck, auto_forced, explicit_chance)
        return game

    def _start(
        self,
        config: GameConfig,
        seed: SupportsIndex | None,
        deck: Sequence[int] | None,
        auto_forced: object,
        explicit_chance: object,
    ) -> None:
        """Deal and start: the one path of ``__init__`` and :meth:`from_config`."""
        game_seed = secrets.randbits(63) if seed is None else check_seed(seed)
        state = new_state(
            config.num_players,
            np.random.default_rng(game_seed),
            first_player=config.first_player,
            bluffs=config.bluffs,
            strict_bids=config.strict_bids,
            auction_order_placed=config.auction_order_placed,
            deck=deck,
            explicit_chance=check_bool("explicit_chance", explicit_chance),
            preset=config.preset,
        )
        deck_as_dealt = () if state.explicit_chance else tuple(state.draw_pile[::-1])  # drawn as the game goes
        forced = check_bool("auto_forced", auto_forced)
        self._fill(config, game_seed, deck_as_dealt, deck is not None, forced, state, [])
        rules.start_game(state)
        self.apply_forced()

    @classmethod
    def from_state(cls, state: State, seed: int, *, auto_forced: bool = True) -> Game:
        """A game around a position built elsewhere (a determinization sampled from a view): its
        options are read from the state, ``seed`` is recorded for its log, and the history starts
        empty. The draw pile as dealt is unknown there, so :attr:`deck` is empty."""
        config = GameConfig.from_state(state)
        game = cls.__new__(cls)
        game._fill(config, seed, (), False, auto_forced, state, [])
        return game

    def _fill(
        self,
        config: GameConfig,
        seed: int,
        deck: tuple[int, ...],
        deck_given: bool,
        auto_forced: bool,
        state: State,
        history: list[int],
        legal: list[int] | None = None,
    ) -> None:
        """Set every field: the one list of them, for ``__init__``, :meth:`from_state` and :meth:`clone`."""
        self.config = config
        self.seed = seed
        #: The draw pile as dealt, top first (a chance outcome of the game log).
        self.deck = deck
        self.deck_given = deck_given
        self.auto_forced = auto_forced
        self.state = state
        #: Every action applied, forced ones included, so a log replays without ``auto_forced``.
        self.history = history
        self._legal = legal

    # ----------------------------------------------------------------- queries
    @property
    def num_players(self) -> int:
        return self.state.num_players

    @property
    def current_player(self) -> int:
        """The seat to act, or -1 once the game is over."""
        return self.state.current_player

    @property
    def is_over(self) -> bool:
        return self.state.phase == PHASE_END

    @property
    def is_chance_node(self) -> bool:
        """A random event awaits its outcome (explicit chance only); :attr:`current_player` is -1
        meanwhile, and :meth:`apply` takes one of :meth:`chance_outcomes`' cards."""
        return self.state.chance_kind != NO_CHANCE

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """The awaited random event's outcomes as ``(card id, probability)``, ascending; every
        random event of the game is uniform over its outcomes. Empty at a player's decision."""
        if self.state.chance_kind == NO_CHANCE:
            return []
        outcomes = self.legal_actions()
        return [(card, 1.0 / len(outcomes)) for card in outcomes]

    @property
    def phase_name(self) -> str:
        return PHASE_NAMES[self.state.phase]

    def legal_actions(self) -> list[int]:
        """Legal action ids, ascending, computed once per decision (do not mutate the list)."""
        legal = self._legal
        if legal is None:
            legal = self._legal = rules.legal_actions(self.state)
        return legal

    # ----------------------------------------------------------------- stepping
    def apply(self, action: SupportsIndex) -> None:
        """Apply ``action`` for :attr:`current_player`; raise IllegalActionError if it is not legal."""
        legal = self._legal
        if legal is None:
            legal = self.legal_actions()
        if type(action) is int:
            chosen = action
        else:  # numpy ints are fine; bools, floats and strings are not
            try:
                chosen = check_action(action)
            except ValueError as error:
                raise IllegalActionError(
                    f"action {action!r} is not an action id ({error}); legal: {self._legal_text(legal)}"
                ) from None
        index = bisect_left(legal, chosen)  # legal is ascending; a list scan costs far more on bids
        if index == len(legal) or legal[index] != chosen:
            raise IllegalActionError(self._illegal_message(chosen, legal))
        state = self.state
        rules.apply(state, chosen)
        self.history.append(chosen)
        legal = self._legal = rules.legal_actions(state)  # apply_forced(), inlined: it runs at every decision
        if len(legal) == 1 and self.auto_forced:
            self._apply_single_options(legal)

    def apply_forced(self) -> None:
        """Cache the next decision's legal actions and, when ``auto_forced``, apply
        single-option decisions until a real choice (or the end)."""
        legal = self._legal = rules.legal_actions(self.state)
        if len(legal) == 1 and self.auto_forced:
            self._apply_single_options(legal)

    def _apply_single_options(self, legal: list[int]) -> None:
        """Apply decisions while they have a single legal action, caching the next decision's."""
        state = self.state
        while len(legal) == 1:
            rules.apply(state, legal[0])
            self.history.append(legal[0])
            legal = self._legal = rules.legal_actions(state)

    def _illegal_message(self, action: object, legal: list[int]) -> str:
        if self.is_chance_node:
            kind = CHANCE_KINDS[self.state.chance_kind]
            return f"{action!r} is not an outcome of the awaited {kind}: the outcomes are the cards {legal}"
        try:
            what = f"action {action!r} ({describe(check_action(action))})"
        except ValueError as error:
            what = f"{error}; action {action!r}"
        if self.is_over:
            return f"{what} was given, but the game is over"
        return (
            f"{what} is not legal for seat {self.current_player} in the {self.phase_name} phase "
            f"(decision {Decision(self.state.decision).name}); legal: {self._legal_text(legal)}"
        )

    @staticmethod
    def _legal_text(legal: list[int]) -> str:
        shown = ", ".join(f"{action} {describe(action)}" for action in legal[:6])
        return shown + (f", ... ({len(legal) - 6} more)" if len(legal) > 6 else "") if legal else "none"

    def clone(self, rng: np.random.Generator | None = None) -> Game:
        """An independent copy (history included); see :meth:`State.clone` for ``rng``."""
        other = Game.__new__(Game)
        other._fill(
            self.config, self.seed, self.deck, self.deck_given, self.auto_forced, self.state.clone(rng),
            self.history[:], self._legal,
        )  # fmt: skip
        return other

    def __deepcopy__(self, memo: dict[int, Any]) -> Game:
        """``copy.deepcopy(game)`` is :meth:`clone`: the same independent copy, without walking
        every field generically (OpenSpiel clones a Python game's state this way, at every node
        its algorithms visit)."""
        return self.clone()

    # ----------------------------------------------------------------- reporting
    def snapshot(self) -> dict[str, Any]:
        """The full (omniscient) state as a JSON-ready dict; the card lists always hold every card
        the game was dealt from (all 87 in the standard game)."""
        state = self.state
        in_play = [state.drawn_card, state.kept_card, state.auction_card, state.church_card]
        in_play = [card for card in in_play if card != NO_CARD] + state.payment
        snapshot: dict[str, Any] = {
            "num_players": state.num_players,
            "phase": self.phase_name,
            "dice": state.dice[:],
            "current_player": None if self.is_over else state.current_player,
            "hands": [sorted(hand) for hand in state.hands],
            "draw_pile": state.draw_pile[::-1],
            "auction_pile": state.auction_pile[::-1],
            "common_area": state.common_area[:],
            "in_play": in_play,
            "discard": state.discard[:],
            "removed": state.removed[:],
        }
        if self.is_over:
            snapshot["vp"] = state.vp[:]
            snapshot["winners"] = state.winners[:]
        return snapshot
