"""Property tests over thousands of random games (RULES §2-§6).

Every game is drawn by hypothesis: player count, penalty variant, strict bids, first
player, auction order, seed and a seeded chooser of legal actions. The properties:

- the 87 cards are always all accounted for in the snapshot (RULES §1);
- the legal set is non-empty, sorted and within ``0..265`` until the end, and empty after;
- every legal action is accepted; every other id is rejected with ``IllegalActionError``
  naming it, and a rejection leaves the game untouched;
- the same seed and actions give the same game, bit for bit;
- games end within the declared :data:`~biblios_env.engine.facts.MAX_GAME_LENGTH` actions;
- dice stay in 1..6 and hands never hold church cards (RULES §4);
- ``clone()`` is independent of its original and replays its chance events exactly;
- a game with ``auto_forced=False`` ends where the ``auto_forced=True`` game does.

Hypothesis is derandomized so the default run is reproducible.
Cheap checks run at every step; the exhaustive ones (all 266 ids, every legal action on
a clone, the full state record) on a sample of steps, to keep the file fast.
"""

from __future__ import annotations

import json
import random
from typing import Any, Final

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from biblios_env.actions import NUM_ACTIONS, PASS, PAY_BASE, REFUSE, describe
from biblios_env.cards import CARD_VALUE, CHURCH_IDS, DIE_MAX, DIE_MIN, IS_CHURCH, IS_GOLD, NUM_CARDS
from biblios_env.engine import Decision, Game, IllegalActionError, State
from biblios_env.engine.facts import MAX_GAME_LENGTH
from biblios_env.engine.log import to_log
from biblios_env.engine.state import STATE_FIELDS, indicator_row
from biblios_env.engine.views import player_view
from biblios_env.observations import decode, encode_state

ALL_CARDS: Final = list(range(NUM_CARDS))
CHURCH: Final = frozenset(CHURCH_IDS)
CARD_LISTS: Final = ("draw_pile", "auction_pile", "common_area", "in_play", "discard", "removed")


def examples(count: int) -> settings:
    """Hypothesis settings: ``count`` derandomized examples, no per-example deadline."""
    return settings(max_examples=count, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])


# --------------------------------------------------------------------------- helpers
@st.composite
def game_configs(draw: st.DrawFn) -> dict[str, Any]:
    """Keyword arguments of a random ``Game``."""
    num_players = draw(st.integers(2, 4))
    return {
        "num_players": num_players,
        "seed": draw(st.integers(0, 2**63 - 1)),
        "penalty": draw(st.sampled_from(["standard", "bluffs"])),
        "strict_bids": draw(st.booleans()),
        "first_player": draw(st.integers(0, num_players - 1)),
        "auction_order": draw(st.sampled_from(["shuffle", "shuffle", "placed"])),
    }


CHOOSERS: Final = st.tuples(st.integers(0, 2**32 - 1), st.sampled_from(["uniform", "thrifty"]))


def choose(rng: random.Random, game: Game, style: str) -> int:
    """A legal action: ``"uniform"`` picks any (wild bids, many penalties); ``"thrifty"``
    passes often, bids low and usually pays, so games also reach payments and wins."""
    legal = game.legal_actions()
    if style == "uniform" or len(legal) == 1:
        return rng.choice(legal)
    decision = game.state.decision
    if decision == Decision.BID:
        if rng.random() < 0.5:
            return PASS
        return legal[1 + min(len(legal) - 2, int(rng.expovariate(0.8)))]
    if decision == Decision.PAY and REFUSE in legal and rng.random() < 0.9:
        return rng.choice([action for action in legal if action != REFUSE])
    return rng.choice(legal)


def check_cards_accounted(snapshot: dict[str, Any]) -> None:
    """RULES §1: every card id is in exactly one place."""
    cards = [card for hand in snapshot["hands"] for card in hand]
    for name in CARD_LISTS:
        cards += snapshot[name]
    assert sorted(cards) == ALL_CARDS, f"cards not all accounted for: {snapshot}"


def check_step(game: Game, snapshot: dict[str, Any]) -> None:
    """The cheap invariants checked after every action."""
    check_cards_accounted(snapshot)
    assert len(snapshot["dice"]) == 5
    assert all(DIE_MIN <= die <= DIE_MAX for die in snapshot["dice"]), snapshot["dice"]
    for seat, hand in enumerate(snapshot["hands"]):
        assert not CHURCH.intersection(hand), f"seat {seat} holds a church card: {hand}"
    legal = game.legal_actions()
    if game.is_over:
        assert legal == []
        assert snapshot["phase"] == "end" and snapshot["current_player"] is None
        assert len(snapshot["vp"]) == game.num_players and snapshot["winners"]
        assert set(snapshot["winners"]) <= set(range(game.num_players))
    else:
        assert legal, f"no legal action before the end: {snapshot}"
        assert legal == sorted(set(legal)) and legal[0] >= 0 and legal[-1] < NUM_ACTIONS
        assert snapshot["phase"] in ("gift", "auction")
        assert snapshot["current_player"] == game.current_player
        assert 0 <= game.current_player < game.num_players
        assert "vp" not in snapshot and "winners" not in snapshot


def full_record(game: Game) -> str:
    """Everything a game holds (every state field, the generator's state, the history)."""
    state = game.state
    fields = {name: getattr(state, name) for name in STATE_FIELDS if not name.startswith("_")}
    fields["rng"] = state.rng.bit_generator.state
    fields["history"] = game.history
    fields["legal"] = game.legal_actions()
    return repr(fields)


def check_rejected(game: Game, action: object, before: dict[str, Any]) -> str:
    """``action`` raises IllegalActionError naming it and changes nothing; returns the message.

    (A plain ``try`` rather than ``pytest.raises``: this runs hundreds of thousands of times.)
    """
    length = len(game.history)
    try:
        game.apply(action)  # type: ignore[arg-type]
    except IllegalActionError as error:
        message = str(error)
    else:
        raise AssertionError(f"illegal action {action!r} was accepted (legal: {game.legal_actions()})")
    assert f"action {action!r}" in message, message
    assert len(game.history) == length
    assert game.snapshot() == before
    return message


def check_all_actions(game: Game) -> None:
    """Every id 0..265: legal ones are accepted (on clones), the rest rejected without effect."""
    before, record = game.snapshot(), full_record(game)
    legal = set(game.legal_actions())
    for action in range(NUM_ACTIONS):
        if action in legal:
            other = game.clone()
            other.apply(action)
            assert other.history[len(game.history)] == action
        else:
            assert describe(action) in check_rejected(game, action, before)
    assert full_record(game) == record


def play(config: dict[str, Any], chooser: tuple[int, str], *, auto_forced: bool = True) -> Game:
    """A complete random game (no checks)."""
    game = Game(**config, auto_forced=auto_forced)
    rng = random.Random(chooser[0])
    while not game.is_over:
        game.apply(choose(rng, game, chooser[1]))
    return game


# --------------------------------------------------------------------------- properties
@examples(400)
@given(config=game_configs(), chooser=CHOOSERS, check_seed=st.integers(0, 2**32 - 1))
def test_random_games_keep_every_invariant(config: dict[str, Any], chooser: tuple[int, str], check_seed: int) -> None:
    game = Game(**config)
    rng = random.Random(chooser[0])
    checks = random.Random(check_seed)
    bound = MAX_GAME_LENGTH[config["num_players"]]
    exhaustive_step = checks.randrange(200)  # one step (often the first or the end) gets every check
    snapshot = game.snapshot()
    check_step(game, snapshot)
    while not game.is_over:
        if len(game.history) >= exhaustive_step:
            check_all_actions(game)
            exhaustive_step = bound
        else:
            action = checks.randrange(NUM_ACTIONS)
            if action not in game.legal_actions():
                check_rejected(game, action, snapshot)
        game.apply(choose(rng, game, chooser[1]))
        snapshot = game.snapshot()
        check_step(game, snapshot)
        assert len(game.history) <= bound, f"game not over after {bound} decisions"
    for action in (0, PASS, REFUSE, NUM_ACTIONS - 1, checks.randrange(NUM_ACTIONS)):
        assert "game is over" in check_rejected(game, action, snapshot)
    if exhaustive_step < bound:
        check_all_actions(game)


@examples(25)
@given(config=game_configs(), chooser=CHOOSERS)
def test_every_action_id_checked_at_many_steps(config: dict[str, Any], chooser: tuple[int, str]) -> None:
    """All 266 ids at every 9th decision: legal ones accepted, the rest rejected unchanged."""
    game = Game(**config)
    rng = random.Random(chooser[0])
    step = 0
    while not game.is_over:
        if step % 9 == 0:
            check_all_actions(game)
        game.apply(choose(rng, game, chooser[1]))
        step += 1
    check_all_actions(game)


def test_apply_rejects_bool_and_non_integer_actions() -> None:
    """Only int action ids are actions: ``True`` is not KEEP/AUCTION even though ``True == 1``
    (``describe`` and game logs reject bools too); nothing is applied."""
    game = Game(3, seed=5)
    assert game.legal_actions() == [0, 1, 2]
    before = game.snapshot()
    for action in (True, False, 0.5, 1.5, "1", None, -1, NUM_ACTIONS, 10**20, [0]):
        check_rejected(game, action, before)


@examples(200)
@given(config=game_configs(), chooser=CHOOSERS)
def test_same_seed_and_actions_give_the_same_game(config: dict[str, Any], chooser: tuple[int, str]) -> None:
    """A game is its config, seed and actions — bit for bit."""
    first = Game(**config)
    second = Game(**config)
    rng = random.Random(chooser[0])
    assert first.snapshot() == second.snapshot()
    while not first.is_over:
        action = choose(rng, first, chooser[1])
        first.apply(action)
        second.apply(action)
        assert second.snapshot() == first.snapshot()
        assert second.legal_actions() == first.legal_actions()
    assert second.history == first.history
    assert second.state.chance == first.state.chance
    assert json.dumps(to_log(second)) == json.dumps(to_log(first))
    assert full_record(second) == full_record(first)


def test_unseeded_game_keeps_its_seed_and_replays() -> None:
    """A game made without a seed draws one and records it, so it can still be reproduced."""
    game = play({"num_players": 3, "seed": None}, (7, "thrifty"))
    assert isinstance(game.seed, int) and game.seed >= 0
    again = Game(3, seed=game.seed)
    assert again.deck == game.deck
    while len(again.history) < len(game.history):
        again.apply(game.history[len(again.history)])
    assert again.history == game.history and again.snapshot() == game.snapshot()


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_different_seeds_deal_different_decks(num_players: int) -> None:
    decks = {Game(num_players, seed=seed).deck for seed in range(20)}
    assert len(decks) == 20


@examples(150)
@given(config=game_configs(), chooser=CHOOSERS, split=st.floats(0.0, 1.0))
def test_clone_is_independent_and_replays_chance(
    config: dict[str, Any], chooser: tuple[int, str], split: float
) -> None:
    """A clone taken at any point plays on without touching the original, and the original
    given the same actions meets the same chance events (auction order, penalties)."""
    full = play(config, chooser)
    cut = int(split * len(full.history))
    original = Game(**config)
    while len(original.history) < cut:
        original.apply(full.history[len(original.history)])
    record = full_record(original)
    snapshot = original.snapshot()

    clone = original.clone()
    assert clone.snapshot() == snapshot and clone.history == original.history
    rng = random.Random(chooser[0] ^ 0x5EED)
    while not clone.is_over:
        clone.apply(choose(rng, clone, "uniform"))
    vandal = original.clone()
    _vandalize(vandal)
    assert original.snapshot() == snapshot
    assert full_record(original) == record

    while len(original.history) < len(clone.history):
        original.apply(clone.history[len(original.history)])
    assert original.history == clone.history
    assert original.state.chance == clone.state.chance
    assert original.snapshot() == clone.snapshot()


def _vandalize(game: Game) -> None:
    """Mutate every mutable part of a game's state in place."""
    state = game.state
    for name in STATE_FIELDS:
        value = getattr(state, name)
        if isinstance(value, list):
            if value and isinstance(value[0], list):
                for inner in value:
                    inner.append(99)
            value.append(99)
            value.reverse()
    state.chance.append(("vandal", [1]))
    game.history.append(99)
    state.rng.integers(1000, size=50)


def test_clone_before_a_penalty_meets_the_same_penalty() -> None:
    """Cloning freezes the generator: whichever copy defaults first, both draw the same cards."""
    found = 0
    for seed in range(200):
        for penalty in ("standard", "bluffs"):
            game = Game(3, seed=seed, penalty=penalty)
            rng = random.Random(seed)
            while not game.is_over and REFUSE not in game.legal_actions():
                game.apply(choose(rng, game, "uniform"))
            if game.is_over or not game.state.hands[game.current_player]:
                continue
            clone = game.clone()
            clone.apply(REFUSE)
            later = game.clone()  # cloned after the first copy used the shared generator state
            game.apply(REFUSE)
            later.apply(REFUSE)
            assert clone.state.chance[-1][0] == "penalty" and clone.state.chance[-1][1]
            assert game.state.chance == clone.state.chance == later.state.chance
            assert game.snapshot() == clone.snapshot() == later.snapshot()
            found += 1
        if found >= 10:
            return
    raise AssertionError(f"only {found} penalties found to test")


@examples(120)
@given(config=game_configs(), chooser=CHOOSERS)
def test_auto_forced_false_replays_to_the_same_end(config: dict[str, Any], chooser: tuple[int, str]) -> None:
    """Exposing forced decisions changes who applies them, not the game."""
    automatic = play(config, chooser)
    exposed = Game(**config, auto_forced=False)
    for action in automatic.history:
        legal = exposed.legal_actions()
        assert action in legal
        exposed.apply(action)
    assert exposed.is_over
    assert exposed.history == automatic.history
    assert exposed.snapshot() == automatic.snapshot()
    assert exposed.state.chance == automatic.state.chance

    # The other way round: choices made in an exposed game replay in an automatic one.
    exposed = play(config, (chooser[0] + 1, chooser[1]), auto_forced=False)
    automatic = Game(**config)
    while len(automatic.history) < len(exposed.history):
        assert automatic.history == exposed.history[: len(automatic.history)]
        assert len(automatic.legal_actions()) > 1, "auto_forced left a forced decision to the caller"
        automatic.apply(exposed.history[len(automatic.history)])
    assert automatic.is_over
    assert automatic.history == exposed.history
    assert automatic.snapshot() == exposed.snapshot()


@examples(120)
@given(config=game_configs(), chooser=CHOOSERS)
def test_exposed_forced_decisions_keep_the_invariants(config: dict[str, Any], chooser: tuple[int, str]) -> None:
    """With ``auto_forced=False`` every decision, forced or not, is a normal decision."""
    game = Game(**config, auto_forced=False)
    rng = random.Random(chooser[0])
    bound = MAX_GAME_LENGTH[config["num_players"]]
    forced = 0
    while not game.is_over:
        forced += len(game.legal_actions()) == 1
        game.apply(choose(rng, game, chooser[1]))
        check_step(game, game.snapshot())
        assert len(game.history) <= bound
    assert forced > 0, "every game has forced decisions (the last card of a gift turn)"


# --------------------------------------------------------------------------- payments
def payment_covered(lot: int, bid: int, picks: list[int]) -> bool:
    """Whether ``picks`` complete the payment of ``bid`` for ``lot`` (RULES §5): exactly ``bid``
    cards of any kind for a gold card, gold worth at least ``bid`` for anything else."""
    if IS_GOLD[lot]:
        return len(picks) == bid
    return sum(CARD_VALUE[card] for card in picks if IS_GOLD[card]) >= bid


def check_public_hands_consistent(state: State) -> None:
    """Public hand lists and their indicator rows agree, and no card seen going to the discard is
    still listed as publicly known in any hand (RULES §7)."""
    for seat, (public, row) in enumerate(zip(state.public_hands, state.public_hand_rows, strict=True)):
        assert row == indicator_row(public), f"seat {seat}: public hand row differs from {public}"
        assert not set(public) & set(state.public_discard), f"seat {seat} still lists discarded {public}"


def check_no_view_lists(state: State, cards: list[int]) -> None:
    """No seat's view or observation places any of ``cards`` in a hand (opponents' or its own)."""
    n = state.num_players
    for viewer in range(n):
        view = player_view(state, viewer)
        listed = set(view.own_public_cards).union(*view.opponent_cards)
        assert not listed & set(cards), f"seat {viewer} still sees {sorted(listed & set(cards))} in a hand"
        opponents = decode(encode_state(state, viewer))["opponent_cards"].reshape(-1, NUM_CARDS)
        assert not opponents[:, cards].any(), f"seat {viewer}'s observation lists {cards} in a hand"


class PaymentWatch:
    """Follows one payment pick by pick and checks, when it completes, that it cost exactly the
    picked cards: no change, no credit, nothing else moved (RULES §5)."""

    def __init__(self, state: State) -> None:
        self.payer = state.current_player
        self.lot = state.auction_card
        self.bid = state.high_bid
        self.hand_at_start = sorted(state.hands[self.payer])
        self.picks: list[int] = []

    def pick(self, game: Game, card: int) -> bool:
        """Apply the pick of ``card``; ``True`` once the payment is complete (and checked)."""
        before = game.state.clone()
        self.picks.append(card)
        game.apply(PAY_BASE + card)
        state = game.state
        covered = payment_covered(self.lot, self.bid, self.picks)
        assert (state.decision != Decision.PAY) == covered, (
            f"payment of {self.picks} for a bid of {self.bid} on card {self.lot}: "
            f"{'not ' if covered else ''}completed after a pick that {'covers' if covered else 'does not cover'} it"
        )
        if covered:
            self.check_completed(before, state)
        return covered

    def check_completed(self, before: State, after: State) -> None:
        picks, payer = self.picks, self.payer
        won = [] if IS_CHURCH[self.lot] else [self.lot]  # a church card is resolved at once (RULES §4)
        remaining = [card for card in self.hand_at_start if card not in picks]
        assert sorted(after.hands[payer]) == sorted(remaining + won), "the payer's hand gained or lost other cards"
        for seat in range(after.num_players):
            if seat != payer:
                assert sorted(after.hands[seat]) == sorted(before.hands[seat]), f"seat {seat}'s hand changed"
        assert sorted(after.discard) == sorted(before.discard + picks), "the discard did not gain exactly the payment"
        assert sorted(after.removed) == sorted(before.removed)
        if IS_GOLD[self.lot]:
            assert len(picks) == self.bid
            assert after.public_discard == before.public_discard, "a face-down payment was shown"
        else:
            coins = [CARD_VALUE[card] for card in picks if IS_GOLD[card]]
            assert len(coins) == len(picks) and sum(coins) >= self.bid > sum(coins[:-1])
            assert after.public_discard == before.public_discard + picks
            check_no_view_lists(after, picks)


@examples(100)
@given(config=game_configs(), chooser=st.tuples(st.integers(0, 2**32 - 1), st.just("thrifty")))
def test_every_completed_payment_costs_exactly_the_picked_cards(
    config: dict[str, Any], chooser: tuple[int, str]
) -> None:
    """Over random games (every decision exposed), each payment completes exactly when the picked
    cards cover the bid, removes exactly the picked cards from the payer's hand, lets no card into
    it but the won card, and moves no other card; gold paid face up leaves every seat's public
    knowledge of hands; and public hands never list a card seen discarded (RULES §5, §7)."""
    game = Game(**config, auto_forced=False)
    rng = random.Random(chooser[0])
    watch: PaymentWatch | None = None
    completed = 0
    while not game.is_over:
        state = game.state
        action = choose(rng, game, chooser[1])
        if state.decision == Decision.PAY and action != REFUSE:
            watch = watch or PaymentWatch(state)
            if watch.pick(game, action - PAY_BASE):
                watch, completed = None, completed + 1
        else:
            watch = None  # a refusal abandons the payment; the next one starts afresh
            game.apply(action)
        check_public_hands_consistent(game.state)
    assert completed, "no payment was completed: the property was not exercised"
