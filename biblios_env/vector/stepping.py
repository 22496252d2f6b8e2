"""The inner loop of the batched games, compiled with the engine: step many games, write their rows.

:class:`GameBatch` keeps one engine :class:`~biblios_env.engine.game.Game` per slot and, per
slot, the rows of its current decision as ``bytes``: the acting seat's observation counts (one
byte per entry, :func:`encode_state_counts`) and its action mask. A step applies one action per
slot and rewrites the stepped slots' rows; the rows of the whole batch are then joined into one
buffer each, so a batch crosses into numpy once per step instead of once per game. Validation,
seeds, rewards and the numpy arrays live in the interpreted :mod:`biblios_env.vector.games`; this
module trusts its caller.
"""

from __future__ import annotations

from typing import Final

from librt.strings import BytesWriter

from biblios_env.actions import NUM_ACTIONS
from biblios_env.engine.game import Game
from biblios_env.observations import encode_state_counts

#: ``_ZEROS[k]`` and ``_ONES[k]``: ``k`` bytes of 0 or of 1, the pieces of a mask row.
_ZEROS: Final = tuple(bytes(length) for length in range(NUM_ACTIONS + 1))
_ONES: Final = tuple(b"\x01" * length for length in range(NUM_ACTIONS + 1))


def mask_row(legal: list[int]) -> bytes:
    """The action mask of the ascending ``legal`` ids: one piece per run of consecutive ids (a bid
    decision is PASS and one run of bids), so its cost grows with the runs, not the ids."""
    writer = BytesWriter()
    written = 0
    index = 0
    count = len(legal)
    while index < count:
        start = legal[index]
        end = start + 1
        index += 1
        while index < count and legal[index] == end:
            end += 1
            index += 1
        writer.write(_ZEROS[start - written])
        writer.write(_ONES[end - start])
        written = end
    writer.write(_ZEROS[NUM_ACTIONS - written])
    return writer.getvalue()


class GameBatch:
    """Slots of games stepped together; the rows of slot ``i`` describe its game's current decision.

    Attributes:
        games: the game of each slot (a finished one until :meth:`restart` replaces it).
        observations: per slot, the acting seat's observation counts (``OBSERVATION_SIZE`` bytes).
        masks: per slot, the acting seat's legal actions (``NUM_ACTIONS`` bytes of 0 or 1).
        seats: per slot, the acting seat (one byte).
        decisions: the decisions taken so far in each slot's game (forced ones not counted).
    """

    games: list[Game]
    observations: list[bytes]
    masks: list[bytes]
    seats: bytearray
    decisions: list[int]

    def __init__(self, games: list[Game]) -> None:
        size = len(games)
        self.games = games
        self.observations = [b""] * size
        self.masks = [b""] * size
        self.seats = bytearray(size)
        self.decisions = [0] * size
        for slot in range(size):
            self.write(slot)

    def write(self, slot: int) -> None:
        """Write the rows of ``slot`` for its game's current decision (it must not be over)."""
        game = self.games[slot]
        state = game.state
        seat = state.current_player
        self.observations[slot] = encode_state_counts(state, seat)
        self.masks[slot] = mask_row(game.legal_actions())
        self.seats[slot] = seat

    def restart(self, slot: int, game: Game) -> None:
        """Put a new game (at its first decision) in ``slot``."""
        self.games[slot] = game
        self.decisions[slot] = 0
        self.write(slot)

    def step(self, actions: list[int], stepped: list[int]) -> list[int]:
        """Apply ``actions[i]`` in each slot ``i`` of ``stepped`` (legal: the caller checked) and
        rewrite its rows; returns the slots whose game ended, left for the caller to restart."""
        games = self.games
        decisions = self.decisions
        finished: list[int] = []
        for slot in stepped:
            game = games[slot]
            game.apply(actions[slot])
            decisions[slot] += 1
            if game.is_over:
                finished.append(slot)
            else:
                self.write(slot)
        return finished

    def joined_observations(self) -> bytes:
        """Every slot's observation row, in slot order, as one buffer (one numpy conversion)."""
        return b"".join(self.observations)

    def joined_masks(self) -> bytes:
        """Every slot's mask row, in slot order, as one buffer."""
        return b"".join(self.masks)

    def observe(self, seat: int) -> bytes:
        """Every slot's observation counts for ``seat``, in slot order, as one buffer."""
        return b"".join([encode_state_counts(game.state, seat) for game in self.games])
