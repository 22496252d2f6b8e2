"""End of the game (RULES §6): category winners, victory points, the winner tie-breaks, and
the rewards the environments pay for a result."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final

from biblios_env.cards import CARD_CATEGORY, CARD_LETTER, CARD_VALUE, NUM_CATEGORIES, gold_value

NO_WINNER = -1
NO_LETTER = 99  # ranks below every real letter
#: The reward schemes: ``"win"`` (zero-sum shares of the win) and ``"vp"`` (the VP margin).
REWARDS: Final = ("win", "vp")


def category_totals(hand: Iterable[int]) -> tuple[list[int], list[int]]:
    """Per category: the sum of card values and the earliest letter held (``NO_LETTER`` if none)."""
    totals = [0] * NUM_CATEGORIES
    letters = [NO_LETTER] * NUM_CATEGORIES
    for card in hand:
        category = CARD_CATEGORY[card]
        if category >= 0:
            totals[category] += CARD_VALUE[card]
            if CARD_LETTER[card] < letters[category]:
                letters[category] = CARD_LETTER[card]
    return totals, letters


def score(hands: list[list[int]], dice: list[int]) -> tuple[list[int], list[int], list[int]]:
    """Return ``(vp per seat, winning seats, category winner per category)``.

    A category goes to the highest total, ties to the earliest letter; nobody wins a
    category nobody holds. Most VP wins; ties go to most gold, then category by category
    in Scriptorium order to the higher total or, if equal and non-zero, the earlier letter;
    players still tied share the win.
    """
    stats = [category_totals(hand) for hand in hands]
    category_winners = []
    vp = [0] * len(hands)
    for category in range(NUM_CATEGORIES):
        best_seat, best_key = NO_WINNER, (0, 0)
        for seat, (totals, letters) in enumerate(stats):
            key = (totals[category], -letters[category])
            if totals[category] > 0 and key > best_key:
                best_seat, best_key = seat, key
        category_winners.append(best_seat)
        if best_seat != NO_WINNER:
            vp[best_seat] += dice[category]
    ranks = []
    for seat, (totals, letters) in enumerate(stats):
        gold = gold_value(hands[seat])
        per_category = tuple(
            (totals[category], -letters[category] if totals[category] else 0) for category in range(NUM_CATEGORIES)
        )
        ranks.append((vp[seat], gold, per_category))
    best = max(ranks)
    winners = [seat for seat, rank in enumerate(ranks) if rank == best]
    return vp, winners, category_winners


def check_reward(reward: object) -> str:
    """``reward`` if it names a reward scheme, else ValueError naming it and :data:`REWARDS`."""
    if reward not in REWARDS:
        raise ValueError(f"reward must be one of {', '.join(map(repr, REWARDS))}, got {reward!r}")
    return str(reward)


def rewards(reward: str, vp: Sequence[int], winners: Sequence[int]) -> list[float]:
    """Terminal rewards per seat of a finished game for the reward scheme ``reward``.

    ``"win"``: winners share +1 and the others share -1 (each winner gets ``1/len(winners)``,
    each loser ``-1/len(losers)``; a game won by everybody gives 0). ``"vp"``: own VP minus the
    best VP among the others. Bounds: :data:`biblios_env.engine.facts.REWARD_BOUNDS`.
    """
    n = len(vp)
    if reward == "vp":
        return [float(vp[seat] - max([*vp[:seat], *vp[seat + 1 :]])) for seat in range(n)]
    check_reward(reward)
    if len(winners) == n:
        return [0.0] * n
    win, lose = 1.0 / len(winners), -1.0 / (n - len(winners))
    return [win if seat in winners else lose for seat in range(n)]
