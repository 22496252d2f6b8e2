"""Biblios as an OpenSpiel game: ``import biblios_env.openspiel`` registers ``python_biblios``.

    import pyspiel
    import biblios_env.openspiel  # noqa: F401  (registers the game)

    game = pyspiel.load_game("python_biblios", {"players": 3, "penalty": "bluffs"})
    state = game.new_initial_state()   # a chance node: the first card removed unseen

The game is the engine's, stepped with explicit chance (:class:`~biblios_env.engine.Game` with
``explicit_chance=True``): every random event — each card removed unseen at setup, each draw,
each auction's card, each card a penalty takes — is a chance node whose outcomes are card ids,
all equally likely. Player actions are the engine's action ids, and every decision is asked,
those with one legal action included. Parameters: ``players`` (2-4), ``penalty``
(``"standard"`` or ``"bluffs"``), ``strict_bids`` and ``reward`` (``"win"``, zero-sum, or
``"vp"``, general-sum); the facts (number of actions, longest game, utilities) come from
:mod:`biblios_env.engine.facts`.

Observers (:meth:`BibliosGame.make_py_observer`) are built from what the PettingZoo env shows:

* the **observation** of a seat is the PettingZoo observation (tensor, with the same pieces and
  names as ``biblios_env.observations.PIECES``) and the table as the seat sees it (string);
* the **information state** (``perfect_recall=True``) adds to the string every past event as
  the seat saw it (the seat's own draws, the public moves, who gave a penalty card to whom and,
  if the seat was one of the two, which card), so two histories the seat cannot tell apart give
  the same string. Its tensor is the observation tensor, which holds the current knowledge but
  not the order of past events.

Both are computed from the seat's view alone (:mod:`biblios_env.engine.visibility`).
:meth:`BibliosState.resample_from_infostate` draws a state the seat cannot tell from this one
with the project's determinization sampler, so OpenSpiel's IS-MCTS bot can play Biblios.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any, Final

import numpy as np
import pyspiel

from biblios_env.actions import NUM_ACTIONS, TAKE_BASE, describe
from biblios_env.cards import NUM_CARDS, card_name
from biblios_env.engine import Game, player_view, sample_state
from biblios_env.engine.config import GameConfig
from biblios_env.engine.facts import REWARD_BOUNDS, ZERO_SUM, game_info
from biblios_env.engine.flow import CHANCE_DRAW, CHANCE_KINDS, CHANCE_PENALTY_PICK, CHANCE_REVEAL, DECISION_PAY
from biblios_env.engine.scoring import REWARDS, rewards
from biblios_env.engine.setup import PLAYER_COUNTS
from biblios_env.engine.state import NO_CARD, State
from biblios_env.engine.visibility import payment_face_up, placement_face_up
from biblios_env.observations import OBSERVATION_SIZE, SLICES, encode_state
from biblios_env.text import table_text

SHORT_NAME: Final = "python_biblios"
#: The game's parameters and their defaults.
PARAMETERS: Final[dict[str, Any]] = {
    "players": 2,
    "penalty": "standard",
    "strict_bids": False,
    "reward": "win",
    "preset": "standard",
}
#: What a seat that sees nothing private is told (the other seats' tokens in a resampled state).
PUBLIC: Final = -1


def _game_type(utility: pyspiel.GameType.Utility) -> pyspiel.GameType:
    return pyspiel.GameType(
        short_name=SHORT_NAME,
        long_name="Python Biblios",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=utility,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=max(PLAYER_COUNTS),
        min_num_players=min(PLAYER_COUNTS),
        provides_information_state_string=True,
        provides_information_state_tensor=True,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification=PARAMETERS,
    )


class BibliosGame(pyspiel.Game):
    """``python_biblios``: checks its parameters (a bad one is a ValueError naming it)."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        options = {**PARAMETERS, **(params or {})}
        unknown = sorted(set(options) - set(PARAMETERS))
        if unknown:
            raise ValueError(f"unknown python_biblios parameter(s) {unknown}; the parameters are {list(PARAMETERS)}")
        if options["reward"] not in REWARDS:
            raise ValueError(f"reward must be one of {', '.join(map(repr, REWARDS))}, got {options['reward']!r}")
        #: The engine's options for every game dealt (checked now).
        self.config = GameConfig(
            options["players"], options["penalty"], options["strict_bids"], preset=options["preset"]
        )
        self.reward = str(options["reward"])
        #: The position before the first random event, cloned for every new state: OpenSpiel
        #: makes a new initial state at every clone, so dealing one afresh would dominate.
        self.start = Game.from_config(self.config, seed=0, auto_forced=False, explicit_chance=True)
        facts = game_info(self.config.num_players, self.config.preset)
        low, high = REWARD_BOUNDS[self.reward]
        zero_sum = ZERO_SUM[self.reward]
        utility = pyspiel.GameType.Utility.ZERO_SUM if zero_sum else pyspiel.GameType.Utility.GENERAL_SUM
        info = pyspiel.GameInfo(
            num_distinct_actions=NUM_ACTIONS,
            max_chance_outcomes=NUM_CARDS,
            num_players=facts.num_players,
            min_utility=low,
            max_utility=high,
            utility_sum=0.0 if zero_sum else None,
            max_game_length=facts.max_game_length,
        )
        super().__init__(_game_type(utility), info, options)

    def new_initial_state(self) -> BibliosState:
        return BibliosState(self)

    def make_py_observer(
        self, iig_obs_type: pyspiel.IIGObservationType | None = None, params: dict[str, Any] | None = None
    ) -> BibliosObserver:
        if params:
            raise ValueError(f"python_biblios observers take no parameters, got {params}")
        perfect_recall = iig_obs_type is not None and iig_obs_type.perfect_recall
        return BibliosObserver(perfect_recall)


class SeenEvents(dict[int, list[str]]):
    """Per seat (and :data:`PUBLIC`), every past event as that seat saw it. OpenSpiel clones a
    state by deep-copying its attributes at every node its algorithms visit: copying the lists
    of strings directly costs a fraction of a generic deep copy."""

    def __deepcopy__(self, memo: dict[int, Any]) -> SeenEvents:
        return SeenEvents({seat: events[:] for seat, events in self.items()})


class BibliosState(pyspiel.State):
    """A position of the engine's game, with each seat's record of the events it saw."""

    def __init__(self, game: BibliosGame, engine_game: Game | None = None) -> None:
        super().__init__(game)
        self._reward = game.reward
        self.game_ = engine_game or game.start.clone()
        seats = range(game.config.num_players)
        self.seen = SeenEvents({seat: [] for seat in [*seats, PUBLIC]})

    # ------------------------------------------------------------------ the OpenSpiel API
    def current_player(self) -> int:
        if self.game_.is_over:
            return pyspiel.PlayerId.TERMINAL
        if self.game_.is_chance_node:
            return pyspiel.PlayerId.CHANCE
        return self.game_.current_player

    def _legal_actions(self, player: int) -> list[int]:
        return self.game_.legal_actions()

    def chance_outcomes(self) -> list[tuple[int, float]]:
        return self.game_.chance_outcomes()

    def _apply_action(self, action: int) -> None:
        game = self.game_
        if game.is_chance_node and game.state.chance_kind == CHANCE_PENALTY_PICK:
            giver = game.state.high_bidder  # the bidding reopens after the last card: read it first
            game.apply(action)  # raises IllegalActionError before anything is recorded
            for seat, seen in self.seen.items():
                seen.append(penalty_seen(game.state, giver, seat))
            return
        events = {seat: event_seen(game, action, seat) for seat in self.seen}
        game.apply(action)  # raises IllegalActionError before anything is recorded
        for seat, event in events.items():
            self.seen[seat].append(event)

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return f"chance: {card_name(action)} [#{action}]"
        return describe(action)

    def is_terminal(self) -> bool:
        return self.game_.is_over

    def returns(self) -> list[float]:
        state = self.game_.state
        if not self.game_.is_over:
            return [0.0] * state.num_players
        return rewards(self._reward, state.vp, state.winners)

    def __str__(self) -> str:
        return "\n".join(table_text(player_view(self.game_.state, seat)) for seat in range(self.game_.num_players))

    def resample_from_infostate(self, player_id: int, probability_sampler: Any) -> BibliosState:
        """A state ``player_id`` cannot tell from this one: its hidden cards drawn by the
        determinization sampler (seeded from ``probability_sampler``), the seat's record of past
        events kept, the other seats' records reduced to what the whole table saw."""
        seed = int(probability_sampler() * 2**53)
        sampled = sample_state(player_view(self.game_.state, player_id), np.random.default_rng(seed))
        sampled.explicit_chance = True  # what is left to draw stays a random event
        state = BibliosState(self.get_game(), Game.from_state(sampled, seed, auto_forced=False))
        state.seen = SeenEvents({seat: events[:] for seat, events in self.seen.items() if seat in (player_id, PUBLIC)})
        for seat in range(self.game_.num_players):
            state.seen.setdefault(seat, self.seen[PUBLIC][:])
        return state


def event_seen(game: Game, action: int, seat: int) -> str:
    """How ``seat`` sees ``action`` about to be applied to ``game`` (``PUBLIC``: what everyone sees);
    a penalty's card is :func:`penalty_seen`, once applied."""
    state = game.state
    if game.is_chance_node:
        kind = state.chance_kind
        if kind == CHANCE_REVEAL:
            return f"revealed {action}"
        if kind == CHANCE_DRAW:
            return f"drew {action if seat == state.active_player else '?'}"
        return CHANCE_KINDS[kind]  # a removal: nobody sees it
    actor = state.current_player
    if actor == seat:
        return f"p{actor} {action}"
    if action < TAKE_BASE:  # a placement: the slot is public, the card only if it lands face up
        shown = state.drawn_card if placement_face_up(action, state.drawn_card) else "?"
        return f"p{actor} placed {shown} in slot {action}"
    if state.decision == DECISION_PAY and not payment_face_up(state.auction_card):  # a face-down payment card
        return f"p{actor} paid"
    return f"p{actor} {action}"


def penalty_seen(state: State, giver: int, seat: int) -> str:
    """How ``seat`` saw the card a penalty just took from ``giver`` (``PUBLIC``: what everyone saw).

    Read from the engine's own records of the move, the ones the seat's view is built from, rather
    than worked out again here: who took the card and whether the seat saw it follow the engine's
    rules by construction (RULES §5, §7). Who defaulted and who received the card are public; which
    card moved only the giver and the receiver know (with "medieval bluffs", only the giver).
    """
    if state.bluffs:
        card = state.private_discard[giver][-1] if seat == giver else NO_CARD
        return f"p{giver} discarded {_card_seen(card)} face down"
    if seat == PUBLIC:
        giver, receiver, _ = state.penalty_moves[-1]
        return f"p{giver} gave ? to p{receiver}"
    relative_giver, relative_receiver, card = state.penalty_views[seat][-1]
    n = state.num_players
    return f"p{(seat + relative_giver) % n} gave {_card_seen(card)} to p{(seat + relative_receiver) % n}"


def _card_seen(card: int) -> str:
    return "?" if card == NO_CARD else str(card)


class BibliosObserver:
    """OpenSpiel's observer for Biblios: the PettingZoo observation as the tensor (``dict`` holds
    its named pieces), the seat's table as the string, and with ``perfect_recall`` the seat's
    record of past events too (see the module doc)."""

    def __init__(self, perfect_recall: bool) -> None:
        self.perfect_recall = perfect_recall
        self.tensor = np.zeros(OBSERVATION_SIZE, np.float32)
        self.dict = {name: self.tensor[where] for name, where in SLICES.items()}

    def set_from(self, state: BibliosState, player: int) -> None:
        self.tensor[:] = encode_state(state.game_.state, player)

    def string_from(self, state: BibliosState, player: int) -> str:
        text = table_text(player_view(state.game_.state, player))
        if self.perfect_recall:
            text += "\nseen: " + " | ".join(state.seen[player])
        return text


pyspiel.register_game(_game_type(pyspiel.GameType.Utility.ZERO_SUM), BibliosGame)

#: The most histories :func:`efg_text` writes before it gives up: a tree this size is a file of
#: hundreds of megabytes, and the standard game's tree is astronomically larger.
EFG_MAX_HISTORIES: Final = 5_000_000


#: Called once per information set as the export first meets it: the state, the information
#: state string the loaded ``efg_game`` gives it, and each legal engine action's ``efg_game`` id.
InformationSetVisitor = Callable[[BibliosState, str, dict[int, int]], None]


def efg_text(
    params: dict[str, Any] | None = None,
    max_histories: int = EFG_MAX_HISTORIES,
    visit: InformationSetVisitor | None = None,
) -> str:
    """The whole game tree of ``python_biblios`` with ``params``, in Gambit's extensive-form
    (``.efg``) text format: ``pyspiel.load_efg_game`` turns it into a C++ game (CFR, best
    responses and NashConv at C++ speed) and ``pygambit.read_efg`` reads it too.

    Chance nodes keep the engine's exact probabilities (written as fractions); each player's
    information sets are numbered by their OpenSpiel information state strings, so the export
    has exactly ``python_biblios``'s information sets; player actions are labelled with
    :func:`biblios_env.actions.describe` and chance outcomes with the card's name and id.
    Payoffs are the game's ``reward``. Only small trees are exported (the ``mini`` and
    ``small`` presets): past ``max_histories`` it raises ValueError. ``visit`` sees every
    information set once, with the ids the loaded game uses: how a policy defined on the engine's
    positions (an agent's) becomes a tabular policy of the exported game.
    """
    game = BibliosGame(params)
    writer = _EfgWriter(game.num_players(), max_histories, visit)
    writer.write(game.new_initial_state())
    title = ", ".join(f"{name}={value}" for name, value in game.get_parameters().items())
    players = " ".join(f'"Player {seat + 1}"' for seat in range(game.num_players()))
    return "\n".join([f'EFG 2 R "Biblios ({title})" {{ {players} }}', '""', *writer.lines, ""])


class _EfgWriter:
    """Writes a tree depth-first, as Gambit's format lists it.

    OpenSpiel's reader numbers action labels in the order they first appear in the file, sorts a
    node's action numbers, and indexes the node's children by that sorted position: a node must
    list its actions in increasing action number or its children are swapped. The writer keeps
    the same numbering and lists every node's labels in that order (new labels last).
    """

    def __init__(self, num_players: int, max_histories: int, visit: InformationSetVisitor | None) -> None:
        self.lines: list[str] = []
        self.max_histories = max_histories
        self.visit = visit
        self.infosets: list[dict[str, int]] = [{} for _ in range(num_players)]
        self.action_numbers: dict[str, int] = {}
        self.chance_numbers: dict[str, int] = {}
        self.outcomes: dict[tuple[float, ...], int] = {}
        self.chance_nodes = 0

    def write(self, state: pyspiel.State) -> None:
        if len(self.lines) >= self.max_histories:
            raise ValueError(
                f"the game tree has more than {self.max_histories:,} histories: too large to export "
                "(export the 'mini' or 'small' preset with strict_bids=True)"
            )
        if state.is_terminal():
            payoffs = tuple(state.returns())
            outcome = self.outcomes.setdefault(payoffs, len(self.outcomes) + 1)
            values = " ".join(map(repr, payoffs))
            self.lines.append(f't "" {outcome} "" {{ {values} }}')
            return
        if state.is_chance_node():
            probabilities = dict(state.chance_outcomes())
            labels = {f"{card_name(card)} [#{card}]": card for card in probabilities}
            order = self._ordered(labels, self.chance_numbers)
            self.chance_nodes += 1
            branches = " ".join(f'"{label}" {_fraction(probabilities[labels[label]])}' for label in order)
            self.lines.append(f'c "" {self.chance_nodes} "" {{ {branches} }} 0')
        else:
            player = state.current_player()
            infosets = self.infosets[player]
            known = len(infosets)
            infoset = infosets.setdefault(state.information_state_string(), known + 1)
            labels = {describe(action): action for action in state.legal_actions()}
            order = self._ordered(labels, self.action_numbers)
            if self.visit is not None and infoset > known:  # OpenSpiel's efg_game names it so
                ids = {labels[label]: self.action_numbers[label] for label in order}
                self.visit(state, f"{player}-{player}-{infoset}-", ids)
            quoted = " ".join(f'"{label}"' for label in order)
            self.lines.append(f'p "" {player + 1} {infoset} "" {{ {quoted} }} 0')
        for label in order:
            self.write(state.child(labels[label]))

    @staticmethod
    def _ordered(labels: dict[str, int], numbers: dict[str, int]) -> list[str]:
        """``labels`` in the reader's increasing action number, numbering the new ones."""
        known = sorted((label for label in labels if label in numbers), key=numbers.__getitem__)
        new = [label for label in labels if label not in numbers]
        for label in new:
            numbers[label] = len(numbers)
        return known + new


def _fraction(probability: float) -> str:
    """A chance probability as Gambit's exact fraction (the engine's are 1/k)."""
    exact = Fraction(probability).limit_denominator(10_000)
    if float(exact) != probability:
        raise ValueError(f"chance probability {probability!r} is not a simple fraction")
    return f"{exact.numerator}/{exact.denominator}"


__all__ = ["PARAMETERS", "SHORT_NAME", "BibliosGame", "BibliosObserver", "BibliosState", "efg_text"]
