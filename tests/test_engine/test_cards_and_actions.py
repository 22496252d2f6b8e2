"""The card table (RULES §1) and the public action table (the action-space contract)."""

from __future__ import annotations

import pytest

from biblios_env import actions as act
from biblios_env import cards as c

LOW_VALUE_CATEGORIES = (c.Category.HOLY_BOOKS, c.Category.MANUSCRIPTS, c.Category.FORBIDDEN_TOMES)


def test_cards_ids_cover_87_cards_by_kind():
    """87 cards: 45 category, 33 gold, 9 church, in that id order (RULES §1)."""
    assert c.NUM_CARDS == 87
    assert [c.CARD_KIND[i] for i in range(45)] == [c.Kind.CATEGORY] * 45
    assert [c.CARD_KIND[i] for i in range(45, 78)] == [c.Kind.GOLD] * 33
    assert [c.CARD_KIND[i] for i in range(78, 87)] == [c.Kind.CHURCH] * 9
    assert sum(c.IS_GOLD) == 33 and sum(c.IS_CHURCH) == 9


@pytest.mark.parametrize("category", list(c.Category))
def test_cards_category_ids_and_letters(category):
    """Category ``c`` holds ids 9c..9c+8; card 9c+k carries letter "ABCDEFGHI"[k] (RULES §1)."""
    ids = range(9 * category, 9 * category + 9)
    assert [c.CARD_CATEGORY[i] for i in ids] == [category] * 9
    assert "".join(c.LETTERS[c.CARD_LETTER[i]] for i in ids) == "ABCDEFGHI"


@pytest.mark.parametrize(
    ("category", "values", "total"),
    [
        (c.Category.MONKS, (2, 2, 2, 2, 3, 3, 3, 4, 4), 25),
        (c.Category.PIGMENTS, (2, 2, 2, 2, 3, 3, 3, 4, 4), 25),
        *[(cat, (1, 1, 1, 1, 1, 1, 1, 2, 2), 11) for cat in LOW_VALUE_CATEGORIES],
    ],
)
def test_cards_category_values_by_letter(category, values, total):
    """Monks/Pigments: A-D 2, E-G 3, H-I 4; others A-G 1, H-I 2 (RULES §1)."""
    ids = range(9 * category, 9 * category + 9)
    assert tuple(c.CARD_VALUE[i] for i in ids) == values
    assert sum(values) == total


def test_cards_gold_values():
    """Gold 45-55 value 1, 56-66 value 2, 67-77 value 3: 66 coins in all (RULES §1)."""
    assert [c.CARD_VALUE[i] for i in range(45, 56)] == [1] * 11
    assert [c.CARD_VALUE[i] for i in range(56, 67)] == [2] * 11
    assert [c.CARD_VALUE[i] for i in range(67, 78)] == [3] * 11
    assert c.TOTAL_GOLD == 66 == act.MAX_BID
    assert c.gold_value([45, 56, 67, 0, 80]) == 6


def test_cards_church_effects():
    """78-79 +1 one die, 80-81 -1 one die, 82-83 +1 two dice, 84-85 -1 two dice, 86 ±1 (RULES §1)."""
    effects = [c.CARD_CHURCH[i] for i in range(78, 87)]
    e = c.ChurchEffect
    assert effects == [
        e.ONE_UP,
        e.ONE_UP,
        e.ONE_DOWN,
        e.ONE_DOWN,
        e.TWO_UP,
        e.TWO_UP,
        e.TWO_DOWN,
        e.TWO_DOWN,
        e.ONE_EITHER,
    ]
    assert all(c.CARD_CHURCH[i] == -1 for i in range(78))


def test_cards_names_and_check():
    """Readable names use the category, value and letter of RULES §1; bad ids are rejected."""
    assert c.card_name(4) == "Monks 3 (E)"
    assert c.card_name(37) == "Forbidden Tomes 1 (B)"
    assert c.card_name(56) == "Gold 2"
    assert "two dice" in c.card_name(84)
    for bad in (-1, 87, 1.0, True, "3"):
        with pytest.raises(ValueError, match="card id"):
            c.check_card(bad)


@pytest.mark.parametrize(
    ("action", "expected"),
    [
        (act.KEEP, 0),
        (act.AUCTION, 1),
        (act.COMMON, 2),
        (act.take(0), 3),
        (act.take(86), 89),
        (act.PASS, 90),
        (act.bid(1), 91),
        (act.bid(66), 156),
        (act.pay(0), 157),
        (act.pay(86), 243),
        (act.REFUSE, 244),
        (act.CHURCH_DECLINE, 245),
        (act.church_one(0, 1), 246),
        (act.church_one(0, -1), 247),
        (act.church_one(4, -1), 255),
        (act.church_two(0, 1), 256),
        (act.church_two(1, 0), 256),
        (act.church_two(3, 4), 265),
        (act.NUM_ACTIONS, 266),
    ],
)
def test_actions_ids_are_the_public_contract(action, expected):
    """The action ids of the issue's table are stable."""
    assert action == expected


def test_actions_category_pairs_lexicographic():
    """Two-dice actions index the 10 pairs of different categories in lexicographic order (RULES §4)."""
    assert act.CATEGORY_PAIRS == ((0, 1), (0, 2), (0, 3), (0, 4), (1, 2), (1, 3), (1, 4), (2, 3), (2, 4), (3, 4))


@pytest.mark.parametrize(
    ("call", "args"),
    [
        (act.bid, (0,)),
        (act.bid, (67,)),
        (act.take, (87,)),
        (act.pay, (-1,)),
        (act.church_one, (5, 1)),
        (act.church_one, (0, 2)),
        (act.church_two, (2, 2)),
        (act.check_action, (266,)),
        (act.check_action, (-1,)),
        (act.check_action, (2.5,)),
        (act.check_action, (True,)),
    ],
)
def test_actions_encoders_reject_bad_values(call, args):
    """Out-of-range bids, cards, categories, deltas and the same die twice raise ValueError."""
    with pytest.raises(ValueError):
        call(*args)


def test_actions_describe_every_id():
    """Every id has a readable description; a few spot checks."""
    described = [act.describe(a) for a in range(act.NUM_ACTIONS)]
    assert len(set(described)) == act.NUM_ACTIONS
    assert act.describe(act.bid(4)) == "BID 4"
    assert act.describe(act.PASS) == "PASS"
    assert act.describe(act.take(57)) == "TAKE Gold 2 [#57]"
    assert act.describe(act.church_one(2, -1)) == "DIE Holy Books -1"


@pytest.mark.parametrize(
    ("action", "card", "changes"),
    [
        (act.CHURCH_DECLINE, 84, ()),
        (act.church_one(3, 1), 78, ((3, 1),)),  # +1 to one die
        (act.church_one(3, -1), 80, ((3, -1),)),  # -1 to one die
        (act.church_one(0, 1), 86, ((0, 1),)),  # +1 or -1 to one die: either direction
        (act.church_one(0, -1), 86, ((0, -1),)),
        (act.church_two(4, 1), 82, ((1, 1), (4, 1))),  # +1 to two dice: the card gives the direction
        (act.church_two(1, 4), 85, ((1, -1), (4, -1))),
    ],
)
def test_actions_church_changes_decode_the_die_changes(action, card, changes):
    """RULES §4: each church action decodes into (category, delta) changes for its card."""
    assert act.church_changes(action, card) == changes
    assert action in [move for move, _ in act.CHURCH_MOVES[c.CARD_CHURCH[card]]]


@pytest.mark.parametrize(
    ("action", "card", "message"),
    [
        (act.church_two(0, 1), 78, r"action 256 \(DICE Monks & Pigments\) cannot resolve Church \+1 to one die"),
        (act.church_one(0, 1), 80, r"action 246 \(DIE Monks \+1\) cannot resolve Church -1 to one die"),
        (act.PASS, 86, r"action 90 \(PASS\) cannot resolve"),
        (act.CHURCH_DECLINE, 57, r"card 57 \(Gold 2\) is not a church card"),
        (act.CHURCH_DECLINE, 87, r"card id must be an int in 0..86, got 87"),
    ],
)
def test_actions_church_changes_name_what_cannot_resolve(action, card, message):
    with pytest.raises(ValueError, match=message):
        act.church_changes(action, card)


def test_actions_church_moves_cover_every_church_action_once_per_effect():
    """One-die cards offer the 5 dice in their direction(s), two-dice cards the 10 pairs; all decline."""
    sizes = {effect: len(moves) for effect, moves in act.CHURCH_MOVES.items()}
    assert sizes == {c.ChurchEffect.ONE_UP: 6, c.ChurchEffect.ONE_DOWN: 6, c.ChurchEffect.ONE_EITHER: 11,
                     c.ChurchEffect.TWO_UP: 11, c.ChurchEffect.TWO_DOWN: 11}  # fmt: skip
    for moves in act.CHURCH_MOVES.values():
        assert [move for move, _ in moves] == sorted({move for move, _ in moves})
        assert moves[0] == (act.CHURCH_DECLINE, ())
