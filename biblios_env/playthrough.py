"""Golden playthroughs: one readable, diffable text file per game configuration.

Modelled on OpenSpiel's ``integration_tests/playthroughs``: a whole game per configuration
(2/3/4 players, both penalty variants, strict bids), played through the PettingZoo env from
a fixed seed. At every decision the file shows the acting seat, its rendered view
(:mod:`biblios_env.text`), the non-zero pieces of its observation
(:func:`biblios_env.observations.decode`), every legal action described
(:func:`biblios_env.actions.describe`) and the action applied, then the single-option
decisions the env applied by itself and the chance events, and a digest of what every other
seat sees; at the end the rewards, the full table, each seat's final observation, what the
game exercised and the digest of the reached position.

The files in ``tests/playthroughs/`` are a behaviour contract: ``tests/test_env/test_playthroughs.py``
regenerates each one by replaying the actions it records (as OpenSpiel does, so a change
that only alters what is shown gives a diff of just those lines) and fails with a unified
diff on any difference. A change that alters observations, legal actions or the rules
shows up there and needs a version bump (``CHANGELOG.md``); a refactor must leave them be.

Usage::

    python -m biblios_env.playthrough --update   # rewrite every file (fresh games from the fixed seeds)
    python -m biblios_env.playthrough --check    # exit 1 with a unified diff if any file differs
    python -m biblios_env.playthrough NAME       # print one configuration's playthrough
    python -m biblios_env.playthrough NAME --all-seats  # ... with every seat's view and observation

Actions are chosen by a seeded chooser that favours the moves the rules treat specially
(taking and keeping church cards, using rather than declining them, bidding on cards,
bluffing beyond one's means and refusing to pay, so penalties happen), while keeping the
games of ordinary length.
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import random
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import numpy as np

from biblios_env import actions
from biblios_env.cards import DIE_MAX, DIE_MIN, IS_CHURCH, IS_GOLD, NUM_CARDS, NUM_CATEGORIES, gold_value
from biblios_env.engine import Decision, Game, IllegalActionError, PlayerView, player_view
from biblios_env.engine.config import GameConfig
from biblios_env.engine.log import ACTION_LAYOUT, game_digest
from biblios_env.layout import LAYOUT_FINGERPRINT
from biblios_env.observations import PIECES, Piece, decode
from biblios_env.pettingzoo_env import raw_env
from biblios_env.text import FULL_TABLE, game_text, table_text


@dataclass(frozen=True)
class Configuration:
    """One golden game: its name, the game's options and the seed of both the deal and the chooser."""

    name: str
    game: GameConfig
    seed: int

    def options_text(self) -> str:
        game = self.game
        return (
            f"num_players={game.num_players} penalty={game.penalty} strict_bids={game.strict_bids} "
            f"first_player={game.first_player} seed={self.seed}"
        )


#: Every golden configuration. Seeds were picked among 1..79 so that each game shows a penalty
#: refused by choice (impossible with strict bids), a church card resolved with a die at 1 or 6,
#: a gold card auctioned and paid for; they also vary the favourite die of the chooser.
CONFIGURATIONS: Final[tuple[Configuration, ...]] = (
    Configuration("2p_standard", GameConfig(2, "standard", strict_bids=False, first_player=0), 15),
    Configuration("3p_standard", GameConfig(3, "standard", strict_bids=False, first_player=0), 5),
    Configuration("4p_standard", GameConfig(4, "standard", strict_bids=False, first_player=0), 8),
    Configuration("2p_bluffs", GameConfig(2, "bluffs", strict_bids=False, first_player=1), 16),
    Configuration("3p_bluffs", GameConfig(3, "bluffs", strict_bids=False, first_player=2), 12),
    Configuration("4p_bluffs", GameConfig(4, "bluffs", strict_bids=False, first_player=3), 9),
    Configuration("2p_strict_bids", GameConfig(2, "standard", strict_bids=True, first_player=0), 6),
    Configuration("3p_strict_bids", GameConfig(3, "standard", strict_bids=True, first_player=1), 10),
)
#: Where the golden files live (in the repository's tests).
DEFAULT_DIRECTORY: Final = Path(__file__).resolve().parent.parent / "tests" / "playthroughs"
#: The line that records an applied action; replay reads the action ids back from these lines.
ACTION_PREFIX: Final = "action: "
_ACTION_LINE: Final = re.compile(rf"^{ACTION_PREFIX}(\d+) ", re.MULTILINE)


def configuration(name: str) -> Configuration:
    """The configuration called ``name``, or ValueError listing the names."""
    for candidate in CONFIGURATIONS:
        if candidate.name == name:
            return candidate
    raise ValueError(f"no playthrough configuration {name!r}; configurations: {[c.name for c in CONFIGURATIONS]}")


# ----------------------------------------------------------------------------- choosing actions
class InterestingChooser:
    """A seeded random legal action, biased towards the moves with rules of their own.

    It reads only the acting seat's view, like an agent. Bids are small raises within what
    the bidder can pay, with a one-in-twelve bluff above it (a penalty follows unless strict bids
    forbid it), and one payment in twenty is refused on purpose. One-die church cards mostly
    push one favourite die one way, so that dice reach 1 or 6 and the bounds of RULES §4 come
    into play.
    """

    def __init__(self, seed: int) -> None:
        self.random = random.Random(seed)
        self.favourite_category = seed % NUM_CATEGORIES
        self.favourite_delta = 1 if (seed // NUM_CATEGORIES) % 2 == 0 else -1

    def choose(self, view: PlayerView, legal: list[int]) -> int:
        if len(legal) == 1:
            return legal[0]
        decision = view.decision
        if decision == Decision.BID:
            return self._bid(view, legal)
        if decision == Decision.PAY:
            return self._pay(legal)
        if decision == Decision.CHURCH:
            return self._church(legal)
        if decision == Decision.TAKE:
            return self._take(legal)
        return self._place(view, legal)

    def _bid(self, view: PlayerView, legal: list[int]) -> int:
        interesting = IS_CHURCH[view.auction_card] or IS_GOLD[view.auction_card]
        if self.random.random() < (0.3 if interesting else 0.45):
            return actions.PASS
        bids = legal[1:]  # legal[0] is PASS, then every allowed bid in ascending order
        means = len(view.hand) if IS_GOLD[view.auction_card] else gold_value(view.hand)
        if self.random.random() < 1 / 12:
            above_means = [bid for bid in bids if bid - actions.BID_BASE > means]
            if above_means:
                return above_means[min(len(above_means) - 1, self.random.randrange(3))]
        affordable = [bid for bid in bids if bid - actions.BID_BASE <= means]
        if not affordable:
            return actions.PASS
        return affordable[min(len(affordable) - 1, self.random.randrange(3))]

    def _pay(self, legal: list[int]) -> int:
        cards = [action for action in legal if action != actions.REFUSE]
        if actions.REFUSE in legal and self.random.random() < 1 / 20:
            return actions.REFUSE
        return self.random.choice(cards)

    def _church(self, legal: list[int]) -> int:
        changes = [action for action in legal if action != actions.CHURCH_DECLINE]
        if not changes or self.random.random() < 0.2:
            return actions.CHURCH_DECLINE
        push = actions.church_one(self.favourite_category, self.favourite_delta)
        if push in changes and self.random.random() < 0.8:
            return push
        return self.random.choice(changes)

    def _take(self, legal: list[int]) -> int:
        churches = [action for action in legal if IS_CHURCH[action - actions.TAKE_BASE]]
        if churches and self.random.random() < 0.6:
            return self.random.choice(churches)
        return self.random.choice(legal)

    def _place(self, view: PlayerView, legal: list[int]) -> int:
        if IS_CHURCH[view.drawn_card] and actions.KEEP in legal and self.random.random() < 0.5:
            return actions.KEEP
        return self.random.choice(legal)


# ----------------------------------------------------------------------------- text of one step
def observation_lines(observation: np.ndarray) -> list[str]:
    """The observation's non-zero pieces, one line each (pieces not listed are all zeros).

    Card pieces list their card ids (the view above names the cards); 0/1 pieces the indices
    of their ones; scaled pieces their raw counts with the scale (``hand_gold ×1/66: 7``), so a
    rescaled piece shows as a changed label rather than as changed decimals.
    """
    lines = []
    pieces = decode(observation)
    for piece in PIECES:
        values = pieces[piece.name]
        if not values.any():
            continue
        if piece.size % NUM_CARDS == 0:
            lines += _card_piece_lines(piece, values)
        elif piece.scale == 1.0:
            lines.append(f"  {piece.name}: {_flag_text(values)}")
        else:
            lines.append(f"  {piece.name} {_scale_label(piece)}: {_counts_text(piece, values)}")
    return lines


def _card_piece_lines(piece: Piece, values: np.ndarray) -> list[str]:
    """A card-set piece as card ids; a piece of several 87-card slots (the opponents) one line per slot."""
    slots = values.reshape(piece.size // NUM_CARDS, NUM_CARDS)
    lines = []
    for slot, row in enumerate(slots):
        if not row.any():
            continue
        label = piece.name if len(slots) == 1 else f"{piece.name} seat +{slot + 1}"
        odd = [f"{card}={row[card]:g}" for card in np.flatnonzero(row) if row[card] != 1.0]
        cards = " ".join(map(str, np.flatnonzero(row)))
        lines.append(f"  {label}: {cards}" + (f" (values {odd})" if odd else ""))
    return lines


def _flag_text(values: np.ndarray) -> str:
    """Indices of the ones, or ``index=value`` for an entry that is neither 0 nor 1."""
    return " ".join(
        str(index) if values[index] == 1.0 else f"{index}={values[index]:g}" for index in np.flatnonzero(values)
    )


def _scale_label(piece: Piece) -> str:
    scales = piece.scale if isinstance(piece.scale, tuple) else (piece.scale,)
    return "(" + ", ".join("×1" if scale == 1.0 else f"×1/{round(1 / scale)}" for scale in scales) + ")"


def _counts_text(piece: Piece, values: np.ndarray) -> str:
    """Each entry as its raw count (value / scale): whole numbers, or the value itself if not."""
    scales = np.broadcast_to(np.asarray(piece.scale, dtype=np.float64), values.shape)
    texts = []
    for value, scale in zip(values.astype(np.float64), scales):
        count = value / scale
        texts.append(str(round(count)) if abs(count - round(count)) < 1e-4 else f"{value:g}")
    return " ".join(texts)


def legal_text(legal: list[int]) -> str:
    """Every legal action as ``id description``; a run of consecutive bids is one range."""
    parts, index = [], 0
    while index < len(legal):
        end = index
        while _is_bid(legal[index]) and end + 1 < len(legal) and legal[end + 1] == legal[end] + 1:
            end += 1
        if end - index >= 2:
            first, last = legal[index], legal[end]
            parts.append(f"{first}..{last} BID {first - actions.BID_BASE}..{last - actions.BID_BASE}")
        else:
            parts += [f"{action} {actions.describe(action)}" for action in legal[index : end + 1]]
        index = end + 1
    return f"legal ({len(legal)}): " + ", ".join(parts)


def _is_bid(action: int) -> bool:
    return actions.BID_BASE < action <= actions.BID_BASE + actions.MAX_BID


def _actions_text(applied: Sequence[int]) -> str:
    return ", ".join(f"{action} {actions.describe(action)}" for action in applied)


# ----------------------------------------------------------------------------- coverage
@dataclass
class Coverage:
    """How often a game used each rule the golden files must exercise (counted by replaying it)."""

    penalties_chosen: int = 0  # REFUSE picked while a payment was possible
    penalties_forced: int = 0  # REFUSE as the only option: the winner could not pay
    church_changes: int = 0
    church_declines: int = 0
    church_at_bound: int = 0  # church cards resolved while a die showed 1 or 6 (RULES §4: dice stay in 1..6)
    gold_card_auctions: int = 0
    payments: int = 0
    gold_card_payments: int = 0

    @property
    def penalties(self) -> int:
        return self.penalties_chosen + self.penalties_forced

    def lines(self) -> list[str]:
        return [
            f"  penalties: {self.penalties} ({self.penalties_chosen} refused by choice, "
            f"{self.penalties_forced} could not pay)",
            f"  church cards resolved: {self.church_changes + self.church_declines} "
            f"({self.church_changes} changed dice, {self.church_declines} declined, "
            f"{self.church_at_bound} with a die at 1 or 6)",
            f"  gold cards auctioned: {self.gold_card_auctions}",
            f"  payments completed: {self.payments} ({self.gold_card_payments} for gold cards)",
        ]


def coverage(game: Game) -> Coverage:
    """Count the rules ``game`` exercised, by replaying its history one decision at a time."""
    replay = Game.from_config(game.config, seed=game.seed, auto_forced=False)
    counts = Coverage()
    auctioned: set[int] = set()
    for action in game.history:
        view = player_view(replay.state, replay.current_player)
        legal = replay.legal_actions()
        replay.apply(action)
        if view.decision == Decision.BID and IS_GOLD[view.auction_card]:
            auctioned.add(view.auction_card)
        elif view.decision == Decision.CHURCH:
            counts.church_declines += action == actions.CHURCH_DECLINE
            counts.church_changes += action != actions.CHURCH_DECLINE
            counts.church_at_bound += DIE_MIN in view.dice or DIE_MAX in view.dice
        elif action == actions.REFUSE:
            counts.penalties_forced += len(legal) == 1
            counts.penalties_chosen += len(legal) > 1
        elif view.decision == Decision.PAY and replay.state.auction_card != view.auction_card:
            counts.payments += 1  # the card left the auction: this pick completed the payment
            counts.gold_card_payments += IS_GOLD[view.auction_card]
    counts.gold_card_auctions = len(auctioned)
    return counts


# ----------------------------------------------------------------------------- whole playthrough
def playthrough(
    config: Configuration, recorded_actions: Sequence[int] | None = None, *, all_seats: bool = False
) -> str:
    """The text of one configuration's game.

    With ``recorded_actions`` (read from a golden file) the game replays them instead of
    choosing; if one is no longer legal, or they run out before the game ends, the text says
    so there and stops, so the difference is plain in a diff. The other seats' views and
    observations are shown as digests (any change to what they see shows at the step it
    happens), or in full with ``all_seats`` to investigate such a change.
    """
    options = config.game
    env = raw_env(
        options.num_players,
        "ansi",
        penalty=options.penalty,
        strict_bids=options.strict_bids,
        first_player=options.first_player,
    )
    env.reset(seed=config.seed)
    game = env.game
    if game is None:
        raise RuntimeError("raw_env.reset() made no game")
    chooser = InterestingChooser(config.seed)
    lines = _header_lines(config)
    step = 0
    while not all(env.terminations.values()):
        agent = env.agent_selection
        view = env.view(agent)
        legal = np.flatnonzero(env.observe(agent)["action_mask"]).tolist()
        lines += _decision_lines(env, step, all_seats)
        if recorded_actions is None:
            action = chooser.choose(view, legal)
        elif step < len(recorded_actions):
            action = recorded_actions[step]
        else:
            lines.append(f"!! the recorded actions end here, before the game does ({len(recorded_actions)} recorded)")
            return "\n".join(lines) + "\n"
        applied_before, chance_before = len(game.history), len(game.state.chance)
        try:
            env.step(action)
        except IllegalActionError as error:
            lines.append(f"!! recorded action {action} is not legal for {agent} here: {error}")
            return "\n".join(lines) + "\n"
        lines.append(f"{ACTION_PREFIX}{action} {actions.describe(action)}")
        lines += _consequence_lines(game.history[applied_before + 1 :], game.state.chance[chance_before:])
        step += 1
    if recorded_actions is not None and step < len(recorded_actions):
        lines.append(f"!! the game ended with {len(recorded_actions) - step} recorded actions left unplayed")
    lines += _ending_lines(env, game)
    return "\n".join(lines) + "\n"


def _decision_lines(env: raw_env, step: int, all_seats: bool) -> list[str]:
    """What the acting seat sees and may do; what the other seats see, as digests or in full."""
    agent = env.agent_selection
    observed = env.observe(agent)
    view = env.view(agent)
    lines = [
        f"### step {step}: {agent} to act ({Decision(view.decision).name})",
        table_text(view),
        "observation:",
        *observation_lines(observed["observation"]),
        legal_text(np.flatnonzero(observed["action_mask"]).tolist()),
    ]
    others = [other for other in env.possible_agents if other != agent]
    if all_seats:
        for other in others:
            observation = env.observe(other)["observation"]
            lines += [f"view of {other}:", table_text(env.view(other)), f"observation of {other}:"]
            lines += observation_lines(observation)
    else:
        digests = (f"{other} {seat_digest(env, other)}" for other in others)
        lines.append("other seats' views and observations (digests): " + ", ".join(digests))
    return lines


def seat_digest(env: raw_env, agent: str) -> str:
    """A short hash of ``agent``'s rendered view, observation and action mask: equal digests,
    equal views and observations (``--all-seats`` shows them in full)."""
    observed = env.observe(agent)
    content = table_text(env.view(agent)).encode() + observed["observation"].tobytes()
    return hashlib.sha256(content + observed["action_mask"].tobytes()).hexdigest()[:10]


def _consequence_lines(forced: Sequence[int], chance: Sequence[tuple[str, Sequence[int]]]) -> list[str]:
    """The single-option decisions the env applied after an action, and the chance events."""
    lines = [f"then forced: {_actions_text(forced)}"] if forced else []
    lines += [f"chance: {kind} {' '.join(map(str, cards)) or '-'}" for kind, cards in chance]
    return lines


def _header_lines(config: Configuration) -> list[str]:
    return [
        f"# Biblios golden playthrough {config.name}: {config.options_text()}",
        "# Written by `python -m biblios_env.playthrough --update`; do not edit by hand (see its docstring).",
        "# Each step: the acting seat, its view (biblios_env.text), its observation's non-zero pieces",
        "# (scaled pieces as raw counts; card pieces by card id), the legal actions, the action applied and",
        "# the single-option decisions the env then applied by itself, and the chance events that followed.",
        "# The other seats' views and observations are digests; `python -m biblios_env.playthrough NAME",
        "# --all-seats` prints them in full.",
        f"layout: {LAYOUT_FINGERPRINT}",
        f"game log action layout: {ACTION_LAYOUT}",
        "",
    ]


def _ending_lines(env: raw_env, game: Game) -> list[str]:
    info = env.infos[env.possible_agents[0]]
    lines = [
        "### game over",
        game_text(game, FULL_TABLE),
        f"rewards: {', '.join(f'{agent} {env.rewards[agent]:+g}' for agent in env.possible_agents)}",
        f"category winners (seats, -1 nobody): {info['category_winners']}",
    ]
    for agent in env.possible_agents:
        lines += [f"final observation of {agent}:", *observation_lines(env.observe(agent)["observation"])]
    lines += [
        f"actions applied: {len(game.history)} (forced ones included)",
        "exercised:",
        *coverage(game).lines(),
        f"position digest: {game_digest(game)}",
    ]
    return lines


# ----------------------------------------------------------------------------- golden files
def recorded_actions_of(text: str) -> list[int]:
    """The action ids a playthrough's ``action:`` lines record, in order."""
    return [int(match) for match in _ACTION_LINE.findall(text)]


def golden_path(config: Configuration, directory: Path = DEFAULT_DIRECTORY) -> Path:
    return directory / f"{config.name}.txt"


def check(config: Configuration, directory: Path = DEFAULT_DIRECTORY) -> str:
    """A unified diff between the golden file and its regeneration ('' if they agree).

    The regeneration replays the golden file's own actions, so a change shows where it is.
    """
    path = golden_path(config, directory)
    if not path.exists():
        return f"{path} is missing: run `python -m biblios_env.playthrough --update`\n"
    expected = path.read_text()
    regenerated = playthrough(config, recorded_actions_of(expected))
    diff = difflib.unified_diff(
        expected.splitlines(keepends=True),
        regenerated.splitlines(keepends=True),
        fromfile=f"{path} (golden)",
        tofile=f"{path} (this code)",
    )
    return "".join(diff)


def stale_files(directory: Path = DEFAULT_DIRECTORY) -> list[Path]:
    """Text files in ``directory`` that no configuration writes (a renamed or removed one)."""
    names = {golden_path(config, directory).name for config in CONFIGURATIONS}
    return sorted(path for path in directory.glob("*.txt") if path.name not in names)


def update(directory: Path = DEFAULT_DIRECTORY) -> list[Path]:
    """Write every configuration's playthrough with fresh chooser games; return the paths."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for config in CONFIGURATIONS:
        path = golden_path(config, directory)
        path.write_text(playthrough(config))
        paths.append(path)
    return paths


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m biblios_env.playthrough", description=__doc__.split("\n\n")[0] if __doc__ else None
    )
    parser.add_argument("name", nargs="?", help=f"print one playthrough: {', '.join(c.name for c in CONFIGURATIONS)}")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--update", action="store_true", help="rewrite every golden file")
    mode.add_argument("--check", action="store_true", help="exit 1 with a unified diff if any golden file differs")
    parser.add_argument("--all-seats", action="store_true", help="with NAME: every seat's observation in full")
    parser.add_argument("--directory", type=Path, default=DEFAULT_DIRECTORY, help="the golden files' folder")
    arguments = parser.parse_args(argv)
    if arguments.update:
        for path in update(arguments.directory):
            print(f"wrote {path} ({path.stat().st_size // 1024} KB)")
        return 0
    if arguments.check:
        return _check_all(arguments.directory)
    if arguments.name is None:
        parser.error("give a configuration name, --update or --check")
    print(playthrough(configuration(arguments.name), all_seats=arguments.all_seats), end="")
    return 0


def _check_all(directory: Path) -> int:
    failed = False
    for config in CONFIGURATIONS:
        diff = check(config, directory)
        if diff:
            failed = True
            sys.stdout.write(diff)
    for path in stale_files(directory):
        failed = True
        print(f"{path} belongs to no configuration: delete it or add its configuration")
    if not failed:
        print(f"all {len(CONFIGURATIONS)} playthroughs match ({directory})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
