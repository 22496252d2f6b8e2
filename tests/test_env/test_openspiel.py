"""The OpenSpiel game ``python_biblios`` (``biblios_env.openspiel``): OpenSpiel's own checks, the
same game as the PettingZoo env step for step, IS-MCTS playing it, and observers that keep to
what a seat may see."""

from __future__ import annotations

import random
import re
from collections import Counter
from typing import Final

import numpy as np
import pytest
from optional_extras import require

pyspiel = require("pyspiel")
require("biblios_env.openspiel")  # registers python_biblios

import test_leakage as leakage  # noqa: E402  (the leakage harness, applied to the OpenSpiel observers below)

from biblios_env.cards import GOLD_IDS_BY_VALUE, GOLD_VALUES  # noqa: E402
from biblios_env.engine import Game  # noqa: E402
from biblios_env.engine.flow import CHANCE_DRAW, CHANCE_PENALTY_PICK, CHANCE_REMOVAL, CHANCE_REVEAL  # noqa: E402
from biblios_env.engine.setup import setup_rules  # noqa: E402
from biblios_env.engine.state import NO_CARD, NO_SEAT, State  # noqa: E402
from biblios_env.engine.views import PlayerView, player_view  # noqa: E402
from biblios_env.openspiel import BibliosState  # noqa: E402
from biblios_env.pettingzoo_env import raw_env  # noqa: E402

CONFIGS = [(players, penalty) for players in (2, 3, 4) for penalty in ("standard", "bluffs")]


def load(players: int, penalty: str = "standard", **options: object) -> pyspiel.Game:
    return pyspiel.load_game("python_biblios", {"players": players, "penalty": penalty, **options})


@pytest.mark.parametrize(("players", "penalty"), CONFIGS)
def test_openspiel_random_simulations(players: int, penalty: str) -> None:
    pyspiel.random_sim_test(load(players, penalty), num_sims=2, serialize=players == 2, verbose=False)


def test_the_game_type_and_facts_follow_the_parameters() -> None:
    win, vp = load(3), load(3, reward="vp")
    assert win.get_type().utility == pyspiel.GameType.Utility.ZERO_SUM
    assert vp.get_type().utility == pyspiel.GameType.Utility.GENERAL_SUM
    assert win.get_type().chance_mode == pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC
    assert (win.num_players(), win.min_utility(), win.max_utility()) == (3, -1.0, 1.0)
    assert win.num_distinct_actions() == 266 and win.max_chance_outcomes() == 87
    with pytest.raises(ValueError, match="penalty must be one of 'standard', 'bluffs', got 'soft'"):
        load(2, "soft")


def _removals(removed: list[int], players: int, preset: str = "standard") -> list[int]:
    per_value = setup_rules(preset, players).gold_removed_per_value
    golds = [[card for card in removed if card in GOLD_IDS_BY_VALUE[value]][:per_value] for value in GOLD_VALUES]
    first = [card for cards in golds for card in cards]
    return first + [card for card in removed if card not in first]


class Mirror:
    """The OpenSpiel state that follows a seeded engine game: given the seeded game's random
    outcomes as they happen, and its players' actions."""

    def __init__(self, game: Game) -> None:
        config = game.config
        self.game = game
        spiel_game = load(config.num_players, config.penalty, strict_bids=config.strict_bids, preset=config.preset)
        engine = Game.from_config(config, seed=0, auto_forced=False, explicit_chance=True)  # any first player
        self.state = BibliosState(spiel_game, engine)
        self.removals = iter(_removals(game.state.removed, config.num_players, config.preset))

    def feed_chance(self) -> None:
        """Apply the seeded game's outcomes until the OpenSpiel state awaits a player."""
        state, seeded = self.state, self.game.state
        while state.is_chance_node():
            engine = state.game_.state
            kind = engine.chance_kind
            if kind == CHANCE_REMOVAL:
                state.apply_action(next(self.removals))
            elif kind == CHANCE_DRAW:
                state.apply_action(seeded.drawn_card)
            elif kind == CHANCE_REVEAL:
                state.apply_action(seeded.auction_card)
            else:
                assert kind == CHANCE_PENALTY_PICK
                state.apply_action(seeded.chance[-1][1][len(engine.chance[-1][1])])


@pytest.mark.parametrize(
    ("players", "penalty", "preset"), [*[(*config, "standard") for config in CONFIGS], (2, "standard", "mini")]
)
@pytest.mark.parametrize("seed", [0, 1])
def test_openspiel_and_pettingzoo_agree_at_every_step(players: int, penalty: str, preset: str, seed: int) -> None:
    """The PettingZoo env deals from its seed; the OpenSpiel state is given the same random
    outcomes. At every decision both name the same player, legal actions and observations."""
    env = raw_env(players, penalty=penalty, expose_forced=True, preset=preset)
    env.reset(seed=seed)
    game = env.game
    assert game is not None
    mirror = Mirror(game)
    state = mirror.state
    choices = random.Random(seed)
    while not state.is_terminal():
        if state.is_chance_node():
            mirror.feed_chance()
            continue
        player = state.current_player()
        agent = env.agent_selection
        assert agent == f"player_{player}"
        seen = env.observe(agent)
        assert state.legal_actions() == np.flatnonzero(seen["action_mask"]).tolist()
        assert np.array_equal(np.asarray(state.observation_tensor(player), np.float32), seen["observation"])
        action = choices.choice(state.legal_actions())
        state.apply_action(action)
        env.step(action)
    assert all(env.terminations.values())
    assert state.returns() == [env._cumulative_rewards[f"player_{seat}"] for seat in range(players)]


def _random_state(players: int, seed: int, steps: int) -> pyspiel.State:
    state = load(players).new_initial_state()
    choices = random.Random(seed)
    for _ in range(steps):
        if state.is_terminal():
            break
        if state.is_chance_node():
            state.apply_action(choices.choice(state.chance_outcomes())[0])
        else:
            state.apply_action(choices.choice(state.legal_actions()))
    return state


@pytest.mark.parametrize("players", [2, 3, 4])
def test_a_resampled_state_keeps_the_seats_information_and_changes_what_it_cannot_see(players: int) -> None:
    """The leakage check for the observers: only hidden things differ between a state and its
    resamples, and the seat's information state (string and tensor) and observation stay."""
    sampler = random.Random(7)
    changed = 0
    for seed in range(6):
        state = _random_state(players, seed, steps=150 + 40 * seed)
        if state.is_chance_node() or state.is_terminal():
            continue
        seat = state.current_player()
        for _ in range(3):
            other = state.resample_from_infostate(seat, sampler.random)
            assert other.information_state_string(seat) == state.information_state_string(seat)
            assert other.information_state_tensor(seat) == state.information_state_tensor(seat)
            assert other.observation_string(seat) == state.observation_string(seat)
            assert other.legal_actions() == state.legal_actions()
            hidden = [sorted(hand) for other_seat, hand in enumerate(state.game_.state.hands) if other_seat != seat]
            resampled = [sorted(hand) for s, hand in enumerate(other.game_.state.hands) if s != seat]
            changed += hidden != resampled
    assert changed > 0  # the resamples did change what the seat cannot see


def test_openspiels_ismcts_bot_plays_biblios_with_legal_moves() -> None:
    from open_spiel.python.algorithms import ismcts, mcts

    game = load(2)
    evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=np.random.RandomState(0))
    bot = ismcts.ISMCTSBot(game, evaluator, uct_c=2.0, max_simulations=3, random_state=np.random.RandomState(1))
    state = game.new_initial_state()
    choices = random.Random(0)
    moves = 0
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(choices.choice(state.chance_outcomes())[0])
        elif state.current_player() == 0:
            action = bot.step(state)
            assert action in state.legal_actions()
            state.apply_action(action)
            moves += 1
        else:
            state.apply_action(choices.choice(state.legal_actions()))
    assert moves > 20 and sum(state.returns()) == 0.0


# --------------------------------------------------------------------------- leakage
def _observers_checked(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Make the leakage harness's observation check also compare the OpenSpiel observers of the
    two games it plays: the seat's information state string and tensor, and its observation
    string, wherever the PettingZoo observation must not differ. Returns a counter of checks."""
    mirrors: dict[int, Mirror] = {}
    checks = [0]
    original = leakage.assert_same_observation

    def synced(env: raw_env) -> BibliosState:
        game = env.game
        assert game is not None
        mirror = mirrors.get(id(game))
        if mirror is None:
            mirror = mirrors[id(game)] = Mirror(Game(**_seeded_options(game)))
        while True:
            mirror.feed_chance()
            done = len(mirror.game.history)
            if done == len(game.history):
                return mirror.state
            action = game.history[done]
            mirror.game.apply(action)
            mirror.state.apply_action(action)

    def checked(first: raw_env, second: raw_env, seat: int, where: str, *, text: bool = True) -> None:
        original(first, second, seat, where, text=text)
        state_a, state_b = synced(first), synced(second)
        assert state_a.information_state_string(seat) == state_b.information_state_string(seat), where
        assert state_a.information_state_tensor(seat) == state_b.information_state_tensor(seat), where
        assert state_a.observation_string(seat) == state_b.observation_string(seat), where
        checks[0] += 1

    monkeypatch.setattr(leakage, "assert_same_observation", checked)
    return checks


def _seeded_options(game: Game) -> dict[str, object]:
    """The arguments that deal ``game`` again (the same seed and deck), forced moves exposed."""
    config = game.config.to_dict()
    return {**config, "seed": game.seed, "deck": list(game.deck) if game.deck_given else None, "auto_forced": False}


@pytest.mark.parametrize(("num_players", "seed", "options"), leakage.CASES[::2], ids=leakage.CASE_IDS[::2])
def test_the_openspiel_observers_pass_the_leakage_harness(
    monkeypatch: pytest.MonkeyPatch, num_players: int, seed: int, options: dict[str, object]
) -> None:
    """A card kept face down, swapped with a removed card: nothing changes for the other seats,
    in the OpenSpiel information states either, through the gift phase and beyond."""
    checks = _observers_checked(monkeypatch)
    leakage.test_removed_card_swapped_with_a_kept_card_is_invisible_to_the_others(num_players, seed, dict(options))
    assert checks[0] > 0


def test_a_planted_leak_in_the_information_state_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The harness must be able to fail: an information state that shows the removed cards leaks."""
    import biblios_env.openspiel as spiel

    original = spiel.BibliosObserver.string_from

    def leaky(self: spiel.BibliosObserver, state: BibliosState, player: int) -> str:
        return original(self, state, player) + f" removed {state.game_.state.removed}"

    monkeypatch.setattr(spiel.BibliosObserver, "string_from", leaky)
    _observers_checked(monkeypatch)
    num_players, seed, options = leakage.CASES[0]
    with pytest.raises(AssertionError, match="keep swap"):
        leakage.test_removed_card_swapped_with_a_kept_card_is_invisible_to_the_others(num_players, seed, dict(options))


# --------------------------------------------------------------------------- penalties at 3-4 players
#: A penalty's card as a seat's information state records it: who gave it to whom (standard) or who
#: discarded it face down (bluffs), and the card, or ``?`` when the seat did not see it.
PENALTY_EVENT: Final = re.compile(r"p(\d) (?:gave (\d+|\?) to p(\d)|discarded (\d+|\?) face down)")
PENALTY_CONFIGS: Final = [(players, penalty) for players in (3, 4) for penalty in ("standard", "bluffs")]


def _seen_events(state: BibliosState, seat: int) -> list[str]:
    """The seat's record of past events, read back from its information state string."""
    return state.information_state_string(seat).split("\nseen: ", 1)[1].split(" | ")


def _pick_as_seen(before: PlayerView, after: PlayerView) -> tuple[int, int, int]:
    """``(giver, receiver, card)`` of the penalty pick between two views of one seat, as that view
    records it (absolute seats; receiver -1 for a blind discard, card -1 when the seat did not see
    it): the reference the information state must follow."""
    n, seat = after.num_players, after.seat
    if after.bluffs:
        (giver,) = [k for k in range(n) if after.face_down_counts[k] == before.face_down_counts[k] + 1]
        new = after.own_face_down_discard[len(before.own_face_down_discard) :]
        return (seat + giver) % n, NO_SEAT, new[0] if new else NO_CARD
    assert len(after.penalty_moves) == len(before.penalty_moves) + 1, "the view records one move per pick"
    giver, receiver, card = after.penalty_moves[-1]
    return (seat + giver) % n, (seat + receiver) % n, card


def check_penalty_pick(state: BibliosState, before: list[PlayerView]) -> None:
    """The event every seat's information state recorded for the penalty pick just applied names
    the giver, the receiver and the card exactly as the seat's own view records them."""
    engine = state.game_.state
    for seat, seen_before in enumerate(before):
        event = _seen_events(state, seat)[-1]
        match = PENALTY_EVENT.fullmatch(event)
        assert match, f"seat {seat}'s last event {event!r} is not a penalty pick's"
        giver, given, receiver, discarded = match.groups()
        card = given or discarded
        named = (int(giver), NO_SEAT if receiver is None else int(receiver), NO_CARD if card == "?" else int(card))
        expected = _pick_as_seen(seen_before, player_view(engine, seat))
        assert named == expected, f"seat {seat}'s information state records {event!r}, its view {expected}"


def _apply(state: BibliosState, action: int) -> list[PlayerView] | None:
    """Apply ``action``; for a penalty pick, return every seat's view from before it."""
    engine = state.game_.state
    picking = state.is_chance_node() and engine.chance_kind == CHANCE_PENALTY_PICK
    before = [player_view(engine, seat) for seat in range(engine.num_players)] if picking else None
    state.apply_action(action)
    return before


def _act(state: BibliosState, choices: random.Random) -> int:
    """A random outcome at a chance node; otherwise the leakage harness's thrifty play, with one
    move in five uniformly random (bids beyond the bidder's gold, refusals: many penalties)."""
    if state.is_chance_node():
        return choices.choice(state.chance_outcomes())[0]
    if choices.random() < 0.8:
        return leakage.choose(choices, state.game_)
    return choices.choice(state.legal_actions())


def check_penalty_events(players: int, penalty: str, seeds: range) -> int:
    """Play seeded random games; at every penalty pick, :func:`check_penalty_pick`. Returns the picks checked."""
    game = load(players, penalty)
    picks = 0
    for seed in seeds:
        state, choices = game.new_initial_state(), random.Random(seed)
        while not state.is_terminal():
            before = _apply(state, _act(state, choices))
            if before is not None:
                check_penalty_pick(state, before)
                picks += 1
    return picks


@pytest.mark.parametrize(("players", "penalty"), PENALTY_CONFIGS)
def test_the_information_state_names_each_penalty_card_as_the_seats_view_does(players: int, penalty: str) -> None:
    """Who gave a penalty card to whom, and which card, only to the seats that saw it (RULES §7):
    over seeded random games, each seat's record of each pick follows the engine's view of that seat."""
    assert check_penalty_events(players, penalty, range(20)) > 300


def play_penalty_pair(players: int, penalty: str, seed: int) -> Counter[str]:
    """Two games given the same actions and random outcomes except the cards penalties take, each
    drawn on its own. The engine's view is the reference: while a seat's views have been the same
    in both games at every step, its information state (string, and every few steps tensor) must
    be the same; once they have differed, its information state string must differ too (perfect
    recall). Stops when an action is not legal in both games. Counts each case met."""
    game = load(players, penalty)
    first, second = game.new_initial_state(), game.new_initial_state()
    choices = random.Random(seed)
    told_apart = [False] * players
    met: Counter[str] = Counter()
    while not first.is_terminal():
        action = _act(first, choices)
        other = action
        if first.is_chance_node() and first.game_.state.chance_kind == CHANCE_PENALTY_PICK:
            other = _act(second, choices)
            met["different picks"] += other != action
        elif action not in second.legal_actions():
            break
        _apply(first, action)
        _apply(second, other)
        step = len(first.history())
        for seat in range(players):
            told_apart[seat] |= player_view(first.game_.state, seat) != player_view(second.game_.state, seat)
            where = f"seed {seed}, step {step}, seat {seat}"
            strings = first.information_state_string(seat), second.information_state_string(seat)
            if told_apart[seat]:
                assert strings[0] != strings[1], f"{where}: its views differed, its information states do not"
                met["told apart"] += 1
            else:
                assert strings[0] == strings[1], f"{where}: its views are the same, its information states differ"
                if step % 8 == 0:  # the tensor encodes the current view: checked now and then, like the table text
                    tensors = first.information_state_tensor(seat), second.information_state_tensor(seat)
                    assert tensors[0] == tensors[1], f"{where}: information state tensors differ"
                met["same"] += 1
    return met


@pytest.mark.parametrize(("players", "penalty"), PENALTY_CONFIGS)
def test_penalty_cards_a_seat_did_not_see_leave_its_information_state_unchanged(players: int, penalty: str) -> None:
    """A seat that the engine's view cannot tell two penalty picks apart for has one information
    state for both; a seat that saw which card moved (giver, receiver) has two."""
    met = sum((play_penalty_pair(players, penalty, seed) for seed in range(4)), Counter[str]())
    assert met["different picks"] >= 3 and met["same"] > 0 and met["told apart"] > 0, met


def test_a_penalty_card_told_to_the_wrong_seat_or_to_every_seat_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """Controls: an information state that names the seat to the receiver's left as the receiver
    (and tells it the card), or that tells every seat the card, fails both the check against the
    view and the pair comparison."""
    import biblios_env.openspiel as spiel

    def wrong_receiver(state: State, giver: int, seat: int) -> str:
        _, receiver, card = state.penalty_moves[-1]
        receiver = (receiver + 1) % state.num_players
        return f"p{giver} gave {card if seat in (giver, receiver) else '?'} to p{receiver}"

    def every_seat(state: State, giver: int, seat: int) -> str:
        return honest(state, giver, giver)

    honest = spiel.penalty_seen
    for penalty, planted in (("standard", wrong_receiver), ("standard", every_seat), ("bluffs", every_seat)):
        monkeypatch.setattr(spiel, "penalty_seen", planted)
        with pytest.raises(AssertionError, match="information state records"):
            check_penalty_events(3, penalty, range(1))
        with pytest.raises(AssertionError, match="its views are the same, its information states differ"):
            for seed in range(4):
                play_penalty_pair(3, penalty, seed)


# --------------------------------------------------------------------------- the mini preset: exact methods
def test_the_mini_and_small_presets_pass_openspiels_checks() -> None:
    for preset in ("mini", "small"):
        for strict in (False, True):
            game = load(2, preset=preset, strict_bids=strict)
            pyspiel.random_sim_test(game, num_sims=5, serialize=True, verbose=False)
    with pytest.raises(ValueError, match="the 'mini' preset is for 2 players, got 3"):
        load(3, preset="mini")
    with pytest.raises(ValueError, match="the 'small' preset is for 2 players, got 4"):
        load(4, preset="small")
