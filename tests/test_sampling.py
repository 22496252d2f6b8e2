"""The determinization sampler (biblios_env.engine.sampling): a sampled state never contradicts
the observer's information, accounts for all 87 cards, covers every hidden card, varies, never
hands over the real hidden cards, and is reproducible from its generator."""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterator

import numpy as np
import pytest

from biblios_env.actions import BID_BASE, PASS
from biblios_env.cards import GOLD_IDS_BY_VALUE, NUM_CARDS
from biblios_env.engine import Game, auctions
from biblios_env.engine.sampling import (
    InconsistentViewError,
    sample_game,
    sample_state,
    unseen_cards,
)
from biblios_env.engine.setup import GOLD_REMOVED_PER_VALUE
from biblios_env.engine.state import NO_CARD, Decision, Phase, State
from biblios_env.engine.views import player_view

CONFIGS = [
    dict(num_players=n, penalty=penalty, auction_order=order, strict_bids=strict)
    for n in (2, 3, 4)
    for penalty in ("standard", "bluffs")
    for order, strict in (("shuffle", False), ("placed", False), ("shuffle", True))
]


def all_cards(state: State) -> list[int]:
    """Every card of a state, wherever it is (the 87 ids, each once, if the state is sound)."""
    cards = [card for hand in state.hands for card in hand]
    cards += state.draw_pile + state.auction_pile + state.common_area + state.discard + state.removed + state.payment
    cards += [c for c in (state.drawn_card, state.kept_card, state.auction_card, state.church_card) if c != NO_CARD]
    return cards


def choose(game: Game, rng: random.Random) -> int:
    """A random legal action that mostly bids low, so auctions finish and penalties still happen."""
    legal = game.legal_actions()
    action = legal[rng.randrange(len(legal))]
    if BID_BASE < action <= BID_BASE + 66 and rng.random() < 0.85:
        action = legal[1] if len(legal) > 1 and legal[1] != PASS else legal[0]
    return action


def positions(config: dict, seed: int, every: float = 0.15) -> Iterator[Game]:
    """Positions of one seeded game with random low-bid play."""
    rng = random.Random(seed)
    game = Game(config["num_players"], seed=seed, **{k: v for k, v in config.items() if k != "num_players"})
    while not game.is_over:
        if rng.random() < every:
            yield game
        game.apply(choose(game, rng))
    yield game


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: "-".join(str(v) for v in c.values()))
def test_sample_never_contradicts_the_observer(config: dict) -> None:
    """The observer's view of every sample equals its real view; all 87 cards are there once;
    opponents' public cards acquired since their last unseen loss stay in their hands."""
    rng = np.random.default_rng(11)
    checked = 0
    for seed in range(2):
        for game in positions(config, seed, every=0.1):
            for seat in range(game.num_players):
                view = player_view(game.state, seat)
                sample = sample_state(view, rng)
                assert player_view(sample, seat) == view
                assert sorted(all_cards(sample)) == list(range(NUM_CARDS))
                known = set(all_cards(sample)) - set(unseen_cards(view))
                for other in range(game.num_players):
                    if other == seat:
                        continue
                    certain = set(sample.public_hands[other]) - set(sample.public_at_last_loss[other]) - known
                    assert certain <= set(sample.hands[other])
                    public = set(sample.public_hands[other]) - known
                    assert not public & set(sample.draw_pile + sample.auction_pile + sample.removed)
                checked += 1
    assert checked > 40


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_sample_keeps_setup_gold_removals(num_players: int) -> None:
    """2 (3) players remove two (one) gold cards of each value at setup (RULES §2)."""
    rng = np.random.default_rng(3)
    for game in positions({"num_players": num_players}, seed=5, every=0.3):
        sample = sample_state(player_view(game.state, 0), rng)
        for ids in GOLD_IDS_BY_VALUE.values():
            assert sum(card in sample.removed for card in ids) >= GOLD_REMOVED_PER_VALUE[num_players]


def midgame(num_players: int, seed: int, phase: int) -> Game:
    """A position in the given phase with cards in every hidden place."""
    rng = random.Random(seed)
    game = Game(num_players, seed=seed)
    while game.state.phase != phase or (phase == Phase.GIFT and len(game.state.draw_pile) > 30):
        game.apply(choose(game, rng))
    if phase == Phase.AUCTION:
        for _ in range(6):
            game.apply(choose(game, rng))
    return game


@pytest.mark.parametrize("num_players", [2, 3, 4])
@pytest.mark.parametrize("phase", [Phase.GIFT, Phase.AUCTION])
def test_samples_cover_every_hidden_card_and_vary(num_players: int, phase: int) -> None:
    """Over many samples every never-seen card turns up in every hidden place that could hold
    it, samples differ, and the real hidden hands are not handed over."""
    game = midgame(num_players, seed=21 + num_players, phase=phase)
    real = game.state
    view = player_view(real, 0)
    rng = np.random.default_rng(7)
    places: dict[int, set[str]] = defaultdict(set)
    hidden_hands = set()
    real_hands_seen = 0
    samples = 400
    for _ in range(samples):
        sample = sample_state(view, rng)
        for seat in range(1, num_players):
            for card in sample.hands[seat]:
                places[card].add(f"hand{seat}")
        for name, pile in (("removed", sample.removed), ("draw", sample.draw_pile), ("auction", sample.auction_pile)):
            for card in pile:
                places[card].add(name)
        hands = tuple(tuple(sorted(sample.hands[seat])) for seat in range(1, num_players))
        hidden_hands.add(hands)
        real_hands_seen += hands == tuple(tuple(sorted(real.hands[seat])) for seat in range(1, num_players))
    assert len(hidden_hands) > samples * 0.9
    assert real_hands_seen <= 1
    public = {card for cards in view.opponent_cards for card in cards}
    fresh = [card for card in unseen_cards(view) if card not in public]
    expected = {"removed"}
    if view.draw_pile_size:
        expected.add("draw")
    if view.auction_pile_size > len(view.own_auction_cards):
        expected.add("auction")
    for seat in range(1, num_players):
        if view.hand_sizes[seat] > len(view.opponent_cards[seat - 1]):
            expected.add(f"hand{seat}")
    assert len(expected) >= 3
    for card in fresh:
        assert places[card] >= expected, (card, places[card], expected)


def test_sampling_is_reproducible_from_the_generator() -> None:
    game = midgame(3, seed=2, phase=Phase.AUCTION)
    view = player_view(game.state, 1)
    first = sample_state(view, np.random.default_rng(99))
    again = sample_state(view, np.random.default_rng(99))
    other = sample_state(view, np.random.default_rng(100))
    assert first.hands == again.hands and first.draw_pile == again.draw_pile and first.removed == again.removed
    assert first.auction_pile == again.auction_pile
    assert first.hands != other.hands or first.auction_pile != other.auction_pile
    # A python random.Random works as well, and also reproducibly.
    assert sample_state(view, random.Random(5)).hands == sample_state(view, random.Random(5)).hands


def test_sample_depends_only_on_the_view() -> None:
    """Swapping an opponent's hidden card with a draw-pile card leaves the observer's view, and
    so every sample drawn with the same generator, unchanged: no hidden card leaks in."""
    game = midgame(2, seed=4, phase=Phase.GIFT)
    state = game.state
    hidden = [card for card in state.hands[1] if card not in state.public_hands[1]]
    assert hidden and state.draw_pile
    other = state.clone()
    i = other.hands[1].index(hidden[0])
    other.hands[1][i], other.draw_pile[0] = other.draw_pile[0], other.hands[1][i]
    assert player_view(other, 0) == player_view(state, 0)
    a = sample_state(player_view(state, 0), np.random.default_rng(1))
    b = sample_state(player_view(other, 0), np.random.default_rng(1))
    assert a.hands == b.hands and a.draw_pile == b.draw_pile and a.removed == b.removed


def test_own_auction_cards_keep_their_places_when_auctions_follow_the_placed_order() -> None:
    game = Game(3, seed=8, auction_order="placed")
    rng = random.Random(8)
    while game.state.phase != Phase.AUCTION:
        game.apply(choose(game, rng))
    for _ in range(5):
        game.apply(choose(game, rng))
    real = game.state
    for seat in range(3):
        sample = sample_state(player_view(real, seat), np.random.default_rng(seat))
        own = set(real.auction_contributions[seat])
        assert [c if c in own else None for c in sample.auction_pile] == [
            c if c in own else None for c in real.auction_pile
        ]


def test_strict_bids_sample_lets_the_high_bidder_pay() -> None:
    """With strict bids an opponent's standing bid shows it holds that much gold."""
    rng = random.Random(0)
    found = 0
    for seed in range(30):
        game = Game(2, seed=seed, strict_bids=True)
        while not game.is_over and found < 20:
            state = game.state
            if state.decision == Decision.BID and state.high_bidder not in (-1, state.current_player):
                view = player_view(state, state.current_player)
                for index in range(5):
                    sample = sample_state(view, np.random.default_rng(index))
                    high = sample.high_bidder
                    auction_card = sample.auction_card
                    capacity = auctions.capacity(sample, high)
                    assert capacity >= sample.high_bid, (seed, auction_card)
                found += 1
            legal = game.legal_actions()
            bids = [a for a in legal if a != PASS]
            game.apply(bids[-1] if bids and rng.random() < 0.5 else legal[rng.randrange(len(legal))])
    assert found >= 10


def test_sampled_positions_play_to_the_end() -> None:
    """A sample is a sound game state: it plays on to scoring with every card accounted for,
    and the observer's legal actions are the real ones."""
    rng = random.Random(3)
    generator = np.random.default_rng(3)
    for config in CONFIGS[::2]:
        for game in positions(config, seed=1, every=0.05):
            seat = game.current_player if not game.is_over else 0
            sampled = sample_game(player_view(game.state, seat), generator)
            if not game.is_over:
                assert sampled.legal_actions() == game.legal_actions()
            while not sampled.is_over:
                sampled.apply(choose(sampled, rng))
            assert sorted(all_cards(sampled.state)) == list(range(NUM_CARDS))


def test_a_view_whose_counts_do_not_add_up_is_rejected() -> None:
    game = midgame(3, seed=1, phase=Phase.GIFT)
    view = player_view(game.state, 0)
    view.draw_pile_size += 1
    with pytest.raises(InconsistentViewError, match="do not add up"):
        sample_state(view, np.random.default_rng(0))
