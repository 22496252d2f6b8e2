"""The determinization sampler (biblios_env.engine.sampling): a sampled state never contradicts
the observer's information, accounts for all 87 cards, covers every hidden card, varies, never
hands over the real hidden cards, and is reproducible from its generator."""

from __future__ import annotations

import functools
import math
import random
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from typing import Final

import numpy as np
import pytest

from biblios_env.actions import BID_BASE, PASS
from biblios_env.cards import CARD_VALUE, GOLD_IDS_BY_VALUE, IS_CHURCH, IS_GOLD, NUM_CARDS
from biblios_env.engine import Game, auctions
from biblios_env.engine.sampling import (
    InconsistentViewError,
    sample_game,
    sample_state,
    unseen_cards,
)
from biblios_env.engine.setup import GOLD_REMOVED_PER_VALUE
from biblios_env.engine.state import NO_CARD, NO_SEAT, Decision, Phase, State
from biblios_env.engine.views import PlayerView, player_view

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
def test_samples_never_put_a_church_card_in_a_hand(num_players: int) -> None:
    """A church card is resolved at once and never stays in a hand (RULES §4), so no sampled
    hand, face-down discard or kept card may hold one."""
    rng = np.random.default_rng(4)
    for game in positions({"num_players": num_players}, seed=6, every=0.1):
        for seat in range(num_players):
            sample = sample_state(player_view(game.state, seat), rng)
            held = [card for hand in sample.hands for card in hand]
            held += [card for cards in sample.private_discard for card in cards]
            held += [sample.kept_card] if sample.kept_card != NO_CARD else []
            assert not [card for card in held if IS_CHURCH[card]], "a church card in a hand or face-down discard"


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
        if IS_CHURCH[card]:  # never in a hand (RULES §4)
            assert not any(place.startswith("hand") for place in places[card]), (card, places[card])
            assert places[card] >= {place for place in expected if not place.startswith("hand")}
        else:
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


# --------------------------------------------------------------------------- the sampler, statistically
#: Samples per position in the statistical leak test, and the one-sided z-score above which a
#: sampler is judged to favour the real hidden cards (a fair sampler exceeds 5 about 3 times in 10**7).
LEAK_SAMPLES: Final = 300
LEAK_Z_LIMIT: Final = 5.0
#: The kinds of hidden place the leak test scores separately (so a failure says where the leak is).
PLACE_KINDS: Final = ("opponent hand", "opponent face down", "removed", "draw pile", "auction pile", "placing")

Place = tuple[str, int]
Sampler = Callable[[PlayerView, np.random.Generator], State]


def hidden_places(state: State, viewer: int) -> dict[int, Place]:
    """Where each card lies that ``viewer`` may not see (RULES §7), as ``(kind, seat or index)``.

    An opponent's payment in progress counts as in its hand: that is how it looks to the others
    and how the sampler deals it (paying is one act, RULES §5). Piles are indexed, so a sampler
    that leaks the real order of the draw or auction pile is caught too.
    """
    places: dict[int, Place] = {}
    for seat in range(state.num_players):
        if seat != viewer:
            places.update((card, ("opponent hand", seat)) for card in state.hands[seat])
            places.update((card, ("opponent face down", seat)) for card in state.private_discard[seat])
    if state.high_bidder not in (viewer, NO_SEAT):
        places.update((card, ("opponent hand", state.high_bidder)) for card in state.payment)
    places.update((card, ("removed", 0)) for card in state.removed)
    places.update((card, ("draw pile", index)) for index, card in enumerate(state.draw_pile))
    places.update((card, ("auction pile", index)) for index, card in enumerate(state.auction_pile))
    for index, card in enumerate((state.drawn_card, state.kept_card)):
        if card != NO_CARD:
            places.setdefault(card, ("placing", index))
    return places


def card_class(card: int) -> str:
    """Cards a card-counting observer cannot tell apart by the rules: church cards (they never stay
    in a hand, RULES §4), gold cards of one value (setup removes gold by value, RULES §2), and
    category cards."""
    if IS_CHURCH[card]:
        return "church"
    return f"gold {CARD_VALUE[card]}" if IS_GOLD[card] else "category"


def never_seen_cards(view: PlayerView) -> list[int]:
    """The cards ``view.seat`` has never seen anywhere: its unseen cards, less those publicly seen
    entering an opponent's hand and those it gave away in a penalty (the sampler places these by
    their own rules, so they are not interchangeable with the rest)."""
    public = {card for cards in view.opponent_cards for card in cards}
    given = {card for _, _, card in view.penalty_moves if card != NO_CARD}
    return [card for card in unseen_cards(view) if card not in public and card not in given]


def leak_evidence(state: State, viewer: int, sampler: Sampler, seed: int) -> dict[str, list[float]]:
    """Per kind of place, one number per sample: how many more real hidden cards sit in their real
    places than card counting predicts.

    Card counting cannot tell a never-seen card from another of its class (:func:`card_class`), so
    a sampler that uses only the view puts the real card in its real place exactly as often as any
    other never-seen card of its class. Each sample scores, for every never-seen card, "in its real
    place" (0 or 1) minus the fraction of the other cards of its class found in that place: the
    expected score is 0 for a fair sampler, positive for one that favours the truth.
    """
    view = player_view(state, viewer)
    real = hidden_places(state, viewer)
    by_class: dict[str, list[int]] = defaultdict(list)
    for card in never_seen_cards(view):
        by_class[card_class(card)].append(card)
    scored = [
        (card, real[card], name, len(cards) - 1) for name, cards in by_class.items() if len(cards) > 1 for card in cards
    ]
    rng = np.random.default_rng(seed)
    evidence: dict[str, list[float]] = {kind: [] for kind in PLACE_KINDS}
    for _ in range(LEAK_SAMPLES):
        places = hidden_places(sampler(view, rng), viewer)
        in_place = Counter((places[card], name) for name, cards in by_class.items() for card in cards)
        score = dict.fromkeys(PLACE_KINDS, 0.0)
        for card, place, name, others in scored:
            hit = places[card] == place
            score[place[0]] += hit - (in_place[place, name] - hit) / others
        for kind in PLACE_KINDS:
            evidence[kind].append(score[kind])
    return evidence


def pooled_z_scores(evidence: list[dict[str, list[float]]]) -> dict[str, float]:
    """One z-score per kind of place, pooling positions by inverse variance (the positions with
    the least noise, such as an opponent holding a single hidden card, weigh most)."""
    scores = {}
    for kind in PLACE_KINDS:
        weighted_sum = weight = 0.0
        for position in evidence:
            values = position[kind]
            variance = sum(value * value for value in values) / len(values)
            if variance > 0:
                weighted_sum += sum(values) / variance
                weight += len(values) / variance
        scores[kind] = weighted_sum / math.sqrt(weight) if weight else 0.0
    return scores


@functools.cache
def leak_positions() -> tuple[tuple[State, int], ...]:
    """Positions of real games (every player count; early and late gifts, early and late auctions)
    and the seat viewing each one. A position seen early in the gifts, an opponent holding one or
    two hidden cards, shows a leak best."""
    found = []
    for num_players in (2, 3, 4):
        moments = [(steps, "standard") for steps in (num_players + 2, 6 * (num_players + 1), 40 * num_players)]
        moments.append((90 * num_players, "bluffs"))  # blind discards: opponents' face-down cards
        for steps, penalty in moments:
            rng = random.Random(100 * num_players + steps)
            game = Game(num_players, seed=100 * num_players + steps, penalty=penalty)
            for _ in range(steps):
                game.apply(choose(game, rng))
            found.append((game.state.clone(), steps % num_players))
    return tuple(found)


def leak_z_scores(sampler_for: Callable[[State, int], Sampler]) -> dict[str, float]:
    """The pooled z-scores of the sampler ``sampler_for(real state, viewer)`` over :func:`leak_positions`."""
    evidence = [
        leak_evidence(state, viewer, sampler_for(state, viewer), seed=index)
        for index, (state, viewer) in enumerate(leak_positions())
    ]
    return pooled_z_scores(evidence)


def slipping_sampler(real: State, viewer: int, kind: str, rate: float = 0.1) -> Sampler:
    """A planted bug: ``sample_state``, except that one sample in ten (``rate``) puts one real
    hidden card of the given kind of place into its real place, read from the real state."""
    slips = random.Random(0)
    real_places = hidden_places(real, viewer)

    def sampler(view: PlayerView, rng: np.random.Generator) -> State:
        sample = sample_state(view, rng)
        if slips.random() >= rate:
            return sample
        never_seen = set(never_seen_cards(view))
        places = hidden_places(sample, viewer)
        misplaced = [card for card in never_seen if real_places[card][0] == kind and places[card] != real_places[card]]
        if misplaced:
            card = misplaced[slips.randrange(len(misplaced))]
            place = real_places[card]
            room = [other for other in never_seen if places[other] == place and real_places[other] != place]
            if room:
                swap_cards(sample, card, room[slips.randrange(len(room))])
        return sample

    return sampler


def swap_cards(state: State, first: int, second: int) -> None:
    """Exchange the places of two cards wherever they lie in ``state`` (hidden places only)."""
    swapped = {first: second, second: first}
    lists = [*state.hands, *state.private_discard, *state.auction_contributions]
    lists += [state.removed, state.draw_pile, state.auction_pile]
    for cards in lists:
        cards[:] = [swapped.get(card, card) for card in cards]
    state.drawn_card = swapped.get(state.drawn_card, state.drawn_card)
    state.kept_card = swapped.get(state.kept_card, state.kept_card)
    state.discard = state.public_discard + [card for cards in state.private_discard for card in cards]
    state.init_derived()


def test_sampler_puts_real_hidden_cards_in_place_no_more_often_than_card_counting_predicts() -> None:
    """Over thousands of samples from positions of real games, every real hidden card sits in its
    real place (an opponent's hand, face-down discards, the removed cards, a pile position, the
    card being placed) no more often than the other never-seen cards of its class: the sampler
    uses the view only (RULES §7)."""
    scores = leak_z_scores(lambda state, viewer: sample_state)
    assert max(scores.values()) < LEAK_Z_LIMIT, scores


def test_leak_test_catches_a_sampler_that_slips_one_real_card_in_ten_samples() -> None:
    """Control: a sampler that, one sample in ten, puts one real hidden card of an opponent's hand
    into that hand is caught with a wide margin (z about 12 over ten reseeded runs, never below
    11.7; the limit is 5), so a fair sampler's pass means something."""
    scores = leak_z_scores(lambda state, viewer: slipping_sampler(state, viewer, "opponent hand"))
    assert scores["opponent hand"] > LEAK_Z_LIMIT, scores


@pytest.mark.slow
@pytest.mark.parametrize(
    ("kind", "rate"),
    [("auction pile", 0.1), ("opponent face down", 0.25), ("draw pile", 0.25), ("removed", 0.25), ("placing", 0.25)],
)
def test_leak_test_catches_leaks_into_every_kind_of_hidden_place(kind: str, rate: float) -> None:
    """Controls for the other kinds of place. The auction pile is scored per position, so a leak one
    sample in ten is caught (z about 12). Face-down discards, the draw pile and the removed cards
    hold many cards or occur in few positions: a leak one sample in ten gives z about 5.5 there
    (caught about half the time), one in four about 10.5; the card being placed, about 8."""
    scores = leak_z_scores(lambda state, viewer: slipping_sampler(state, viewer, kind, rate))
    assert scores[kind] > LEAK_Z_LIMIT, scores
