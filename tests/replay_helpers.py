"""Saved games for the replay tests (played here, seeded, never read from stored files), and
which cards one seat must not see at a position, decided from the full state and RULES §7
directly (not from a view: the views are what the tests check)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agents import make_agent
from biblios_env.engine.config import GameConfig
from biblios_env.engine.state import NO_CARD, Phase, State
from experiments.common.match import play_game


def save_game(
    path: Path,
    agents: list[str],
    seed: int,
    *,
    penalty: str = "standard",
    strict_bids: bool = False,
    labels: list[str] | None = None,
    metadata: dict[str, Any] | None = None,
) -> Path:
    """Play a seeded game of the registry agents ``agents`` (one per seat) and save its log at ``path``."""
    players = [make_agent(name) for name in agents]
    play_game(
        players,
        seed,
        agent_seeds=[seed * 10 + seat for seat in range(len(agents))],
        labels=labels or agents,
        game_config=GameConfig(len(agents), penalty, strict_bids),
        log_path=path,
        log_metadata=metadata,
    )
    return path


def hidden_from(state: State, seat: int) -> set[int]:
    """The cards ``seat`` does not know the whereabouts of and never saw (RULES §7): the others'
    cards that entered their hands unseen, their face-down discards, the auction pile's cards it
    did not place, a card another player is placing or kept this turn, another's payment in
    progress. Cards moved by a penalty are known to the two players involved; a card anybody saw
    face up is left out (the seat saw it, even if it no longer knows where it is)."""
    others = [other for other in range(state.num_players) if other != seat]
    hidden: set[int] = set()
    for other in others:
        hidden |= set(state.hands[other]) | set(state.private_discard[other])
    hidden |= set(state.auction_pile) - set(state.auction_contributions[seat])
    if state.phase == Phase.GIFT:
        if state.current_player != seat:
            hidden.add(state.drawn_card)
        if state.active_player != seat:
            hidden.add(state.kept_card)
    if state.high_bidder != seat:
        hidden |= set(state.payment)
    hidden -= {card for giver, receiver, card in state.penalty_moves if seat in (giver, receiver)}
    seen = {*state.common_area, *state.public_discard, state.auction_card, state.church_card}
    for cards in state.public_hands:
        seen |= set(cards)
    return hidden - seen - {NO_CARD}


def page_scene(data: dict[str, Any], index: int) -> dict[str, Any]:
    """Scene ``index`` of a page's data, unpacked (the format of :mod:`experiments.replay.page_data`)."""
    packed = data["scenes"][index]
    return {
        field: [data["pieces"][hand] for hand in piece] if field == "hands" else data["pieces"][piece]
        for field, piece in zip(data["sceneFields"], packed, strict=True)
    }


def scene_cards(scene: dict[str, Any]) -> Iterator[int]:
    """Every card a scene shows face up."""
    for hand in scene["hands"]:
        yield from hand["cards"]
        yield from hand.get("maybe", [])
    yield from scene["common"]
    yield from scene["auctionPile"]["cards"]
    yield from scene["discard"]["faceUp"]
    for pile in scene["discard"]["faceDown"]:
        yield from pile["cards"]
    gift, auction, church = scene["gift"], scene["auction"], scene["church"]
    if gift is not None:
        yield from (card for card in (gift["drawn"], gift["kept"]) if card is not None)
    if auction is not None:
        yield auction["card"]
        yield from auction["payment"]
    if church is not None:
        yield church["card"]
