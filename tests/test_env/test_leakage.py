"""Hidden information stays hidden (RULES §7).

Two games that differ only in what a player cannot know must give that player identical
observations: the :class:`PlayerView`, its encoding, the PettingZoo ``observe()`` vector
and action mask, and the rendered table. The pairs differ in a removed card swapped with a
card an opponent keeps, in the order of the undrawn draw pile, in the order of the auction
pile, in an opponent's face-down cards, and in the seed (penalty picks, auction shuffle).
Both games get the same actions; a seat is compared at every step until a card that
differs between the games reaches a place it can see (its hand, the common area, the card
under auction, ...) — from then on the games legitimately look different to it.

Controls show the comparison can fail: a difference in the observer's own cards changes
its observation, and a planted leak in the view is caught. A last test follows random
games and checks that no seat's view ever holds a card it has not seen, an opponent's
drawn or kept card, or another player's face-down payment or penalty card.
"""

from __future__ import annotations

import dataclasses
import random
from typing import Any, Final

import numpy as np
import pytest

import biblios_env.pettingzoo_env as pettingzoo_env
from biblios_env import raw_env
from biblios_env.actions import KEEP, PASS, PAY_BASE, REFUSE
from biblios_env.cards import IS_CHURCH, IS_GOLD, NUM_CARDS
from biblios_env.engine import Decision, Game, Phase
from biblios_env.engine.setup import STANDARD_PRESET, check_deck, setup_rules
from biblios_env.engine.state import NO_CARD, State
from biblios_env.engine.views import PlayerView, player_view
from biblios_env.observations import PIECES, SLICES, decode, encode
from biblios_env.text import table_text

PLAYER_COUNTS: Final = (2, 3, 4)
SEEDS: Final = (1, 2, 3)
#: Observation pieces that are card indicators (87 wide, or 3 x 87 for opponents).
CARD_PIECES: Final = tuple(piece.name for piece in PIECES if piece.size % NUM_CARDS == 0)


# --------------------------------------------------------------------------- playing
def choose(rng: random.Random, game: Game) -> int:
    """A legal action from thrifty random play (low bids, payments usually made)."""
    legal = game.legal_actions()
    if len(legal) == 1:
        return legal[0]
    decision = game.state.decision
    if decision == Decision.BID:
        return PASS if rng.random() < 0.5 else legal[min(len(legal) - 1, 1 + int(rng.expovariate(0.8)))]
    if decision == Decision.PAY and rng.random() < 0.85:
        return rng.choice([action for action in legal if action != REFUSE] or legal)
    return rng.choice(legal)


def new_env(num_players: int, seed: int, deck: list[int] | None = None, **options: Any) -> raw_env:
    """A reset ``raw_env``; ``deck`` goes through the ``"deck"`` reset option. Forced decisions
    are exposed so that every position (e.g. a card drawn and forced onto the auction pile)
    is observed, and an environment step is one entry of the game's history."""
    auction_order = options.pop("auction_order", None)
    env = raw_env(num_players, expose_forced=True, **options)
    reset_options: dict[str, Any] = {}
    if deck is not None:
        reset_options["deck"] = deck
    if auction_order is not None:
        reset_options["auction_order"] = auction_order
    env.reset(seed=seed, options=reset_options)
    return env


def advance(env: raw_env, rng: random.Random, steps: int) -> None:
    game = env.game
    for _ in range(steps):
        if game.is_over:
            return
        env.step(choose(rng, game))


def new_game(num_players: int, seed: int, deck: list[int] | None = None, **options: Any) -> Game:
    """The engine game ``new_env`` plays."""
    return Game(num_players, seed=seed, deck=deck, auto_forced=False, **options)


def twin(env: raw_env) -> raw_env:
    """A second environment at the same position (its game a clone), ready to be perturbed."""
    game = env.game
    other = new_env(game.num_players, game.seed, list(game.deck), **_env_options(game))
    other.game = game.clone()
    other.agent_selection = env.agent_selection
    return other


def _env_options(game: Game) -> dict[str, Any]:
    options = game.config.to_dict()
    return {key: options[key] for key in ("penalty", "strict_bids", "first_player", "auction_order")}


# --------------------------------------------------------------------------- what a seat sees
def seen_now(state: State, seat: int) -> set[int]:
    """The cards ``seat`` sees at this moment, by RULES §7 (independent of ``views.py``)."""
    cards = set(state.hands[seat]) | set(state.common_area)
    if state.phase == Phase.GIFT:
        if state.current_player == seat and state.drawn_card != NO_CARD:
            cards.add(state.drawn_card)
        if state.active_player == seat and state.kept_card != NO_CARD:
            cards.add(state.kept_card)
    if state.auction_card != NO_CARD:
        cards.add(state.auction_card)
        if not IS_GOLD[state.auction_card] or state.high_bidder == seat:
            cards.update(state.payment)
    if state.church_card != NO_CARD:
        cards.add(state.church_card)
    return cards


def maybe_visible(state: State, seat: int) -> set[int]:
    """What ``seat`` sees, plus (conservatively) the whole discard pile."""
    return seen_now(state, seat) | set(state.discard)


def locations(state: State) -> dict[int, tuple]:
    """Where each card is, with pile positions (the full, omniscient picture)."""
    where: dict[int, tuple] = {}
    for seat, hand in enumerate(state.hands):
        for card in hand:
            where[card] = ("hand", seat)
    for index, card in enumerate(state.draw_pile):
        where[card] = ("draw pile", index)
    for index, card in enumerate(state.auction_pile):
        where[card] = ("auction pile", index)
    for index, card in enumerate(state.common_area):
        where[card] = ("common area", index)
    for index, card in enumerate(state.payment):
        where[card] = ("payment", index)
    for card in state.discard:
        where[card] = ("discard",)
    for card in state.removed:
        where[card] = ("removed",)
    for name in ("drawn_card", "kept_card", "auction_card", "church_card"):
        card = getattr(state, name)
        if card != NO_CARD:
            where[card] = (name,)
    assert len(where) == NUM_CARDS
    return where


def differing_cards(first: State, second: State) -> set[int]:
    a, b = locations(first), locations(second)
    return {card for card in range(NUM_CARDS) if a[card] != b[card]}


# --------------------------------------------------------------------------- comparing
def assert_same_observation(first: raw_env, second: raw_env, seat: int, where: str, *, text: bool = True) -> None:
    """Every form of ``seat``'s observation is identical in both environments: the
    ``observe()`` vector and mask, the :class:`PlayerView` and (if ``text``) the rendered table."""
    agent = f"player_{seat}"
    observed_a, observed_b = first.observe(agent), second.observe(agent)
    vector_a, vector_b = observed_a["observation"], observed_b["observation"]
    if not np.array_equal(vector_a, vector_b):
        pieces_a, pieces_b = decode(vector_a), decode(vector_b)
        differing = [name for name in SLICES if not np.array_equal(pieces_a[name], pieces_b[name])]
        raise AssertionError(f"{where}: seat {seat}'s observation differs in {differing}")
    mask_a, mask_b = observed_a["action_mask"], observed_b["action_mask"]
    assert np.array_equal(mask_a, mask_b), f"{where}: seat {seat}'s action mask differs"
    legal = first.game.legal_actions() if first.game.current_player == seat else []
    assert np.flatnonzero(mask_a).tolist() == legal
    view_a, view_b = first.view(agent), second.view(agent)
    assert view_a == view_b, f"{where}: seat {seat}'s view differs"
    if text:
        assert np.array_equal(encode(player_view(first.game.state, seat)), vector_a)
        assert table_text(view_a) == table_text(view_b), f"{where}: seat {seat}'s rendered table differs"


def play_pair(first: raw_env, second: raw_env, seed: int, *, label: str = "") -> list[int]:
    """Play the same actions in both environments, comparing each seat's observation while
    every differing card is hidden from it. Returns the number of steps compared per seat."""
    rng = random.Random(seed)
    game_a, game_b = first.game, second.game
    n = game_a.num_players
    revealed = [False] * n
    compared = [0] * n
    differing: set[int] = set()
    while True:
        differing |= differing_cards(game_a.state, game_b.state)
        for seat in range(n):
            if revealed[seat]:
                continue
            own_pile_a = set(game_a.state.auction_contributions[seat])
            own_pile_b = set(game_b.state.auction_contributions[seat])
            if own_pile_a != own_pile_b or differing & (
                maybe_visible(game_a.state, seat) | maybe_visible(game_b.state, seat)
            ):
                revealed[seat] = True
                continue
            step = len(game_a.history)
            assert_same_observation(first, second, seat, f"{label} step {step}", text=step % 8 == 0)
            compared[seat] += 1
        if game_a.is_over or game_b.is_over or all(revealed):
            return compared
        action = choose(rng, game_a)
        if action not in game_b.legal_actions():
            return compared
        first.step(action)
        second.step(action)


def kept_cards(num_players: int, seed: int, deck: list[int], **options: Any) -> list[tuple[int, int, int]]:
    """``(step, seat, card)`` for each non-church card kept in the gift phase of the game that
    ``play_pair(seed)`` plays on this deck (the same actions, so the same keeps)."""
    game = new_game(num_players, seed, deck, **options)
    rng = random.Random(seed)
    kept = []
    while game.state.phase == Phase.GIFT:
        state = game.state
        action = choose(rng, game)
        if state.decision == Decision.PLACE and action == KEEP and not IS_CHURCH[state.drawn_card]:
            kept.append((len(game.history), state.active_player, state.drawn_card))
        game.apply(action)
    return kept


def gift_phase_length(num_players: int, seed: int, deck: list[int], **options: Any) -> int:
    """Observation points (decisions) of the gift phase of that same game."""
    game = new_game(num_players, seed, deck, **options)
    rng = random.Random(seed)
    steps = 0
    while game.state.phase == Phase.GIFT:
        game.apply(choose(rng, game))
        steps += 1
    return steps


def swapped_deck(deck: list[int], card: int, replacement: int) -> list[int]:
    return [replacement if entry == card else entry for entry in deck]


def valid_replacements(deck: list[int], card: int, num_players: int) -> list[int]:
    """Removed non-church cards that can take ``card``'s place in a deck setup could deal."""
    removed = sorted(set(range(NUM_CARDS)) - set(deck))
    found = []
    for other in removed:
        if IS_CHURCH[other]:
            continue
        try:
            check_deck(swapped_deck(deck, card, other), setup_rules(STANDARD_PRESET, num_players))
        except ValueError:
            continue
        found.append(other)
    return found


def configs() -> list[tuple[int, int, dict[str, Any]]]:
    """(players, seed, options) covering both penalties, strict bids and first players."""
    cases = []
    for num_players in PLAYER_COUNTS:
        for seed in SEEDS:
            options = {
                "penalty": ("standard", "bluffs")[seed % 2],
                "strict_bids": seed == 3,
                "first_player": seed % num_players,
            }
            cases.append((num_players, seed, options))
    return cases


CASES: Final = configs()
CASE_IDS: Final = [f"{n}p-seed{seed}" for n, seed, _ in CASES]


# --------------------------------------------------------------------------- pairs
@pytest.mark.parametrize(("num_players", "seed", "options"), CASES, ids=CASE_IDS)
def test_removed_card_swapped_with_a_kept_card_is_invisible_to_the_others(
    num_players: int, seed: int, options: dict[str, Any]
) -> None:
    """Which card an opponent keeps face down is theirs alone: swapping it with a removed
    card changes nothing for the others, through the whole gift phase and beyond."""
    deck = list(Game(num_players, seed=seed * 7919).deck)
    kept = kept_cards(num_players, seed, deck, **options)
    rng = random.Random(seed)
    step, keeper, card = rng.choice(kept)
    replacement = rng.choice(valid_replacements(deck, card, num_players))
    other_deck = swapped_deck(deck, card, replacement)
    first = new_env(num_players, seed, deck, **options)
    second = new_env(num_players, seed, other_deck, **options)
    compared = play_pair(first, second, seed, label=f"keep swap {card}->{replacement}")
    gift = gift_phase_length(num_players, seed, deck, **options)
    for seat in range(num_players):
        if seat != keeper:
            assert compared[seat] >= gift, (seat, compared, gift)
    assert compared[keeper] == step  # the keeper sees the card when drawing it


@pytest.mark.parametrize(("num_players", "seed", "options"), CASES, ids=CASE_IDS)
def test_order_of_the_undrawn_draw_pile_is_invisible(num_players: int, seed: int, options: dict[str, Any]) -> None:
    """The draw pile's order is hidden from all (RULES §7): permute it beyond a point."""
    deck = list(Game(num_players, seed=seed * 104729).deck)
    rng = random.Random(seed)
    cut = rng.randrange(len(deck) // 2)
    tail = deck[cut:]
    while tail == deck[cut:]:
        rng.shuffle(tail)
    first = new_env(num_players, seed, deck, **options)
    second = new_env(num_players, seed, deck[:cut] + tail, **options)
    compared = play_pair(first, second, seed, label=f"draw pile permuted from {cut}")
    # Every seat is compared at least until the first moved card is drawn.
    first_moved = cut + next(i for i, (a, b) in enumerate(zip(deck[cut:], tail)) if a != b)
    game = new_game(num_players, seed, deck, **options)
    choices = random.Random(seed)
    before_draw = 0
    while len(game.state.draw_pile) > len(deck) - first_moved - 1:
        game.apply(choose(choices, game))
        before_draw += 1
    assert before_draw >= first_moved
    assert min(compared) >= before_draw, (compared, before_draw)


@pytest.mark.parametrize(("num_players", "seed", "options"), CASES, ids=CASE_IDS)
def test_draw_pile_shuffled_mid_game_is_invisible(num_players: int, seed: int, options: dict[str, Any]) -> None:
    """Shuffling what is left of the draw pile in the middle of the gift phase shows nowhere."""
    first = new_env(num_players, seed, **options)
    advance(first, random.Random(seed + 50), 15 + 5 * seed)
    second = twin(first)
    pile = second.game.state.draw_pile
    random.Random(seed).shuffle(pile)
    assert differing_cards(first.game.state, second.game.state)
    compared = play_pair(first, second, seed, label="draw pile shuffled")
    assert min(compared) >= 1


@pytest.mark.parametrize(("num_players", "seed", "options"), CASES, ids=CASE_IDS)
def test_auction_pile_order_is_invisible(num_players: int, seed: int, options: dict[str, Any]) -> None:
    """The auction pile's order is hidden from all, before and during the auction phase —
    including each player's own face-down cards in it (RULES §7)."""
    for auction_order in ("shuffle", "placed"):
        first = new_env(num_players, seed, auction_order=auction_order, **options)
        rng = random.Random(seed)
        while len(first.game.state.auction_pile) < 3:
            advance(first, rng, 1)
        second = twin(first)
        second.game.state.auction_pile.reverse()
        compared = play_pair(first, second, seed, label=f"{auction_order} auction pile reversed in the gift phase")
        assert min(compared) >= 1

        first = new_env(num_players, seed, auction_order=auction_order, **options)
        rng = random.Random(seed)
        while first.game.state.phase != Phase.AUCTION or len(first.game.state.auction_pile) < 3:
            assert not first.game.is_over
            advance(first, rng, 1)
        second = twin(first)
        pile = second.game.state.auction_pile  # top last: swap the two bottom cards
        pile[0], pile[1] = pile[1], pile[0]
        assert differing_cards(first.game.state, second.game.state)
        compared = play_pair(first, second, seed, label=f"{auction_order} auction pile changed mid-auction")
        assert min(compared) >= 1


@pytest.mark.parametrize(("num_players", "seed", "options"), CASES, ids=CASE_IDS)
def test_seed_alone_changes_nothing_visible_until_it_acts(num_players: int, seed: int, options: dict[str, Any]) -> None:
    """Same deck, other seed: the auction shuffle and penalty picks differ, all hidden until
    their outcomes show; the whole gift phase looks the same to everybody."""
    deck = list(Game(num_players, seed=seed).deck)
    first = new_env(num_players, seed, deck, **options)
    second = new_env(num_players, seed + 1000, deck, **options)
    compared = play_pair(first, second, seed, label="other seed")
    assert min(compared) >= gift_phase_length(num_players, seed, deck, **options)


@pytest.mark.parametrize(("num_players", "seed", "options"), CASES, ids=CASE_IDS)
def test_opponents_face_down_cards_are_invisible(num_players: int, seed: int, options: dict[str, Any]) -> None:
    """Mid-game: replace a hand card nobody else has seen (or a face-down auction pile card)
    by a removed card; the other seats' observations stay the same."""
    rng = random.Random(seed)
    base = new_env(num_players, seed, **options)
    advance(base, random.Random(seed), rng.randrange(20, 150))
    assert not base.game.is_over
    state = base.game.state
    # What each seat has seen so far: replay the game's history from the start.
    replayed = new_game(num_players, seed, **options)
    seen: list[set[int]] = [set() for _ in range(num_players)]
    for action in [*base.game.history, None]:
        for viewer in range(num_players):
            seen[viewer] |= seen_now(replayed.state, viewer)
        if action is not None:
            replayed.apply(action)
    assert replayed.snapshot() == base.game.snapshot()

    removed = [card for card in state.removed if not IS_CHURCH[card]]
    perturbed = 0
    for owner in rng.sample(range(num_players), num_players):
        others = set().union(*(seen[viewer] for viewer in range(num_players) if viewer != owner))
        hidden_in_hand = [card for card in state.hands[owner] if card not in others]
        hidden_in_pile = [card for card in state.auction_pile if card in state.auction_contributions[owner]]
        for place, hidden in (("hand", hidden_in_hand), ("auction pile", hidden_in_pile)):
            if not hidden or perturbed == 3:
                continue
            card, replacement = rng.choice(hidden), rng.choice(removed)
            first, second = twin(base), twin(base)
            other_state = second.game.state
            if place == "hand":
                hand = other_state.hands[owner]
                hand[hand.index(card)] = replacement
            else:
                pile, mine = other_state.auction_pile, other_state.auction_contributions[owner]
                pile[pile.index(card)] = replacement
                mine[mine.index(card)] = replacement
            other_state.removed = sorted(set(other_state.removed) - {replacement} | {card})
            label = f"seat {owner}'s {place} card {card}->{replacement}"
            compared = play_pair(first, second, seed, label=label)
            for seat in range(num_players):
                if seat != owner:
                    assert compared[seat] >= 1, (label, compared)
            perturbed += 1
    assert perturbed, "nothing hidden to perturb"


@pytest.mark.parametrize("num_players", [3, 4])
def test_cards_swapped_between_two_opponents_hands_are_invisible(num_players: int) -> None:
    """A third player cannot tell which of two opponents holds which face-down card."""
    tested = 0
    for seed in range(40):
        if tested == 6:
            return
        first = new_env(num_players, seed)
        rng = random.Random(seed)
        while first.game.state.phase == Phase.GIFT:
            advance(first, rng, 1)
        hidden = []
        for seat in range(num_players):
            public = set(first.game.state.public_hands[seat])
            hidden.append([card for card in first.game.state.hands[seat] if card not in public])
        observer = 0
        holders = [seat for seat in range(1, num_players) if hidden[seat]][:2]
        if len(holders) < 2:
            continue
        second = twin(first)
        (p, q), hands = holders, second.game.state.hands
        a, b = hidden[p][0], hidden[q][0]
        hands[p][hands[p].index(a)], hands[q][hands[q].index(b)] = b, a
        compared = play_pair(first, second, seed, label=f"swap {a}<->{b} between seats {p} and {q}")
        assert compared[observer] >= 1
        tested += 1
    raise AssertionError(f"only {tested} games with two opponents holding hidden cards")


# --------------------------------------------------------------------------- controls
@pytest.mark.parametrize("num_players", PLAYER_COUNTS)
def test_observers_own_kept_card_does_change_its_observation(num_players: int) -> None:
    """Control: a swap the observer *can* see (the card it draws and keeps) changes its
    observation at that very step, while the other seats still see no difference."""
    seed = 5
    deck = list(Game(num_players, seed=seed).deck)
    step, keeper, card = kept_cards(num_players, seed, deck)[0]
    replacement = valid_replacements(deck, card, num_players)[0]
    first = new_env(num_players, seed, deck)
    second = new_env(num_players, seed, swapped_deck(deck, card, replacement))
    advance(first, random.Random(seed), step)
    advance(second, random.Random(seed), step)
    assert first.game.state.drawn_card == card and second.game.state.drawn_card == replacement
    agent = f"player_{keeper}"
    assert not np.array_equal(first.observe(agent)["observation"], second.observe(agent)["observation"])
    pieces_a, pieces_b = decode(first.observe(agent)["observation"]), decode(second.observe(agent)["observation"])
    assert pieces_a["drawn_card"][card] == 1 and pieces_b["drawn_card"][replacement] == 1
    with pytest.raises(AssertionError, match="drawn_card"):
        assert_same_observation(first, second, keeper, "control")
    for seat in range(num_players):
        if seat != keeper:
            assert_same_observation(first, second, seat, "control")


def test_observers_own_hand_does_change_its_observation() -> None:
    first = new_env(3, 9)
    advance(first, random.Random(9), 30)
    second = twin(first)
    seat = 1
    hand = second.game.state.hands[seat]
    assert hand
    replacement = next(card for card in second.game.state.removed if not IS_CHURCH[card])
    second.game.state.removed.remove(replacement)
    second.game.state.removed.append(hand[0])
    hand[0] = replacement
    with pytest.raises(AssertionError, match="hand"):
        assert_same_observation(first, second, seat, "control")


def test_a_planted_leak_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """Control: a view that shows opponents' whole hands must fail the pair comparison."""

    def leaky_view(state: State, seat: int) -> PlayerView:
        view = player_view(state, seat)
        n = state.num_players
        everything = [sorted(state.hands[(seat + offset) % n]) for offset in range(1, n)]
        return dataclasses.replace(view, opponent_cards=everything)

    num_players, seed = 3, 2
    deck = list(Game(num_players, seed=seed).deck)
    _, _, card = kept_cards(num_players, seed, deck)[0]
    replacement = valid_replacements(deck, card, num_players)[0]
    monkeypatch.setattr(pettingzoo_env, "player_view", leaky_view)
    first = new_env(num_players, seed, deck)
    second = new_env(num_players, seed, swapped_deck(deck, card, replacement))
    with pytest.raises(AssertionError, match="opponent_cards"):
        play_pair(first, second, seed, label="planted leak")


# --------------------------------------------------------------------------- views never expose
@pytest.mark.parametrize("penalty", ["standard", "bluffs"])
@pytest.mark.parametrize("num_players", PLAYER_COUNTS)
def test_views_never_expose_hidden_cards(num_players: int, penalty: str) -> None:
    """Over random games, every card in a seat's view (and every card bit of its observation)
    is one that seat has seen; opponents' drawn and kept cards, face-down payments and penalty
    cards never appear; penalties make nothing public."""
    checked = {"gold payments": 0, "penalties": 0}
    for seed in range(4):
        env = new_env(num_players, seed, penalty=penalty)
        assert not env.auto_forced
        game = env.game
        rng = random.Random(seed)
        seen: list[set[int]] = [set() for _ in range(num_players)]
        face_down: list[set[int]] = [set() for _ in range(num_players)]  # per owner
        while True:
            state = game.state
            views = []
            for seat in range(num_players):
                seen[seat] |= seen_now(state, seat)
                view = player_view(state, seat)
                views.append(view)
                check_view(state, seat, view, seen[seat], face_down)
                observed = env.observe(f"player_{seat}")
                check_vector(observed["observation"], seen[seat], face_down, seat)
                if state.current_player != seat:
                    assert not observed["action_mask"].any()
            if game.is_over:
                break
            action = choose(rng, game) if rng.random() < 0.8 else rng.choice(game.legal_actions())
            payer, auction_card = state.current_player, state.auction_card
            gold_auction = auction_card != NO_CARD and IS_GOLD[auction_card]
            hand_before = list(state.hands[payer])
            paying = state.decision == Decision.PAY and action != REFUSE
            picked = list(state.payment) + ([action - PAY_BASE] if paying else [])
            refusing = state.decision == Decision.PAY and action == REFUSE
            env.step(action)
            if paying and not state.payment:  # the payment is complete
                if gold_auction:  # paid face down: the others learn how many, not which
                    face_down[payer] |= set(picked)
                    checked["gold payments"] += 1
                else:  # gold shown to everyone (RULES §5), including the card that completed it
                    for seen_by in seen:
                        seen_by |= set(picked)
            if refusing:
                checked["penalties"] += 1
                lost = set(hand_before) | set(picked)
                lost -= set(state.hands[payer])
                for seat in range(num_players):
                    after = player_view(state, seat)
                    assert after.opponent_cards == views[seat].opponent_cards, "a penalty made cards public"
                    # Only the card itself is discarded face up if every bidder has now defaulted.
                    shown = set(after.public_discard) - set(views[seat].public_discard) - {auction_card}
                    assert not shown, f"a penalty discard was shown: {sorted(shown)}"
                if penalty == "bluffs":
                    face_down[payer] |= lost & set(state.discard)
    assert checked["gold payments"] > 0 and checked["penalties"] > 0, checked


def check_view(state: State, seat: int, view: PlayerView, seen: set[int], face_down: list[set[int]]) -> None:
    where = f"seat {seat} at decision {Decision(state.decision).name}"
    cards = {
        "hand": set(view.hand),
        "common_area": set(view.common_area),
        "own_auction_cards": set(view.own_auction_cards),
        "payment_cards": set(view.payment_cards),
        "public_discard": set(view.public_discard),
        "own_face_down_discard": set(view.own_face_down_discard),
        "opponent_cards": {card for cards in view.opponent_cards for card in cards},
        "single cards": {view.drawn_card, view.kept_card, view.auction_card, view.church_card} - {NO_CARD},
        # Public facts kept for determinization samplers, where the view has them.
        "own_public_cards": set(getattr(view, "own_public_cards", [])),
        "public_at_last_loss": {card for cards in getattr(view, "public_at_last_loss", []) for card in cards},
        "penalty_moves": {card for _, _, card in getattr(view, "penalty_moves", [])} - {NO_CARD},
    }
    for giver, receiver, card in getattr(view, "penalty_moves", []):
        # Which card moved in a penalty is known to the two seats involved only (RULES §7).
        assert card == NO_CARD or 0 in (giver, receiver), f"{where}: sees a penalty card between opponents"
    for name, found in cards.items():
        assert found <= seen, f"{where}: {name} shows unseen cards {sorted(found - seen)}"
    assert sorted(view.hand) == sorted(state.hands[seat])
    placing = state.phase == Phase.GIFT and state.current_player == seat
    assert view.drawn_card == (state.drawn_card if placing else NO_CARD), where
    keeping = state.phase == Phase.GIFT and state.active_player == seat
    assert view.kept_card == (state.kept_card if keeping else NO_CARD), where
    paying = state.payment and state.high_bidder != seat
    if state.high_bidder != seat:  # paying is one act: only the payer sees a payment in progress (RULES §5)
        assert view.payment_cards == [], f"{where}: sees another seat's payment in progress"
        assert (view.payment_count, view.payment_value) == (0, 0), f"{where}: sees another seat's payment progress"
    for owner, cards_down in enumerate(face_down):
        if owner != seat:
            shown = cards_down & (cards["public_discard"] | cards["own_face_down_discard"] | cards["payment_cards"])
            assert not shown, f"{where}: sees seat {owner}'s face-down cards {sorted(shown)}"
    assert len(view.opponent_cards) == state.num_players - 1
    n = state.num_players
    sizes = [len(state.hands[(seat + k) % n]) for k in range(n)]
    if paying:  # cards picked for a payment in progress still count as in the payer's hand for the others
        sizes[(state.high_bidder - seat) % n] += len(state.payment)
    assert view.hand_sizes == sizes, where


def check_vector(vector: np.ndarray, seen: set[int], face_down: list[set[int]], seat: int) -> None:
    pieces = decode(vector)
    for name in CARD_PIECES:
        cards = {int(index) % NUM_CARDS for index in np.flatnonzero(pieces[name])}
        assert cards <= seen, f"seat {seat}: observation piece {name} holds unseen cards {sorted(cards - seen)}"
    known_discard = set(np.flatnonzero(pieces["known_discard"]).tolist())
    for owner, cards_down in enumerate(face_down):
        if owner != seat:
            assert not cards_down & known_discard, f"seat {seat} sees seat {owner}'s face-down discards"


# --------------------------------------------------------------------------- the batched games
def check_batched_games(games: Any, steps: int, seed: int) -> int:
    """Step a :class:`VectorGame` with random legal actions; at every step every slot's batch
    observation (the acting seat's) and, every few steps, every seat's ``observe()`` row hold only
    cards that seat has seen (its hands, the table, the card under auction, public discards and its
    own face-down ones). Returns the observations checked."""
    n, size = games.num_players, games.num_games
    rng = np.random.default_rng(seed)
    seen = [[set[int]() for _ in range(n)] for _ in range(size)]
    no_face_down: list[set[int]] = [set() for _ in range(n)]
    batch = games.reset(seed=seed)
    checked = 0
    for step in range(steps):
        every_seat = [games.observe(seat) for seat in range(n)] if step % 5 == 0 else None
        for slot in range(size):
            state = games.game(slot).state
            for seat in range(n):
                # Discards are tracked by the engine's public and private records here (the env
                # pair tests above check those records themselves).
                seen[slot][seat] |= seen_now(state, seat) | set(state.public_discard) | set(state.private_discard[seat])
            acting = int(batch.current_player[slot])
            check_vector(batch.observation[slot], seen[slot][acting], no_face_down, acting)
            checked += 1
            if every_seat is not None:
                for seat in range(n):
                    check_vector(every_seat[seat][slot], seen[slot][seat], no_face_down, seat)
        batch = games.step(np.argmax(rng.random(batch.action_mask.shape) * batch.action_mask, axis=1))
        for slot in np.flatnonzero(batch.terminated):
            seen[slot] = [set() for _ in range(n)]
    return checked


@pytest.mark.parametrize("num_players", PLAYER_COUNTS)
def test_the_batched_observations_never_show_unseen_cards(num_players: int) -> None:
    from biblios_env.vector import VectorGame

    # Forced decisions exposed, so that every position a seat has seen is a step of the batch.
    games = VectorGame(4, num_players, seed=1, penalty="bluffs" if num_players == 3 else "standard", expose_forced=True)
    assert check_batched_games(games, 400, seed=num_players) == 1600


def test_a_planted_leak_in_the_batched_observations_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """Control: batch observations that show the left neighbour's whole hand must fail the check."""
    import biblios_env.vector.games as vector_games
    from biblios_env.vector import VectorGame

    games = VectorGame(3, 2, seed=1, expose_forced=True)
    honest = vector_games._counts_to_observations

    def leaky(joined: bytes, out: np.ndarray) -> np.ndarray:
        counts = honest(joined, out)
        if out is games.batch.observation:
            for slot in range(games.num_games):
                state = games.game(slot).state
                neighbour = (state.current_player + 1) % state.num_players
                out[slot, SLICES["opponent_cards"].start + np.asarray(state.hands[neighbour], int)] = 1.0
        return counts

    monkeypatch.setattr(vector_games, "_counts_to_observations", leaky)
    with pytest.raises(AssertionError, match="opponent_cards holds unseen cards"):
        check_batched_games(games, 200, seed=3)
