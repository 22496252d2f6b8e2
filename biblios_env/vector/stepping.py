"""The inner loop of the batched games, compiled with the engine: step many games, write their rows.

:class:`GameBatch` keeps one engine :class:`~biblios_env.engine.game.Game` per slot and writes the
rows of each slot's current decision straight into two flat buffers that numpy reads without a
copy: the acting seat's observation counts (one byte per entry, :func:`encode_state_counts`) and
its action mask. A step applies one action per stepped slot and rewrites only those slots' rows,
so a batch where a few games moved costs a few rows, and no per-step buffer is built or joined:
the working set of a large batch stays one byte per observation entry. The mask is written at
once (every step is checked against it); the observation row too while :attr:`GameBatch.eager`
is set (the game's state is still in the cache then: a loop that reads every position, a
trainer's, pays less than for a second pass over the games), else only when
:meth:`GameBatch.flush` is called before it is read, so a position that nobody looks at (an
opponent playing uniformly at random from the mask) is never encoded. Validation, seeds,
rewards and the numpy arrays live in the interpreted :mod:`biblios_env.vector.games`; this module
trusts its caller.
"""

from __future__ import annotations

from typing import Final

from librt.strings import BytesWriter

from biblios_env.actions import NUM_ACTIONS
from biblios_env.engine.game import Game
from biblios_env.observations import OBSERVATION_SIZE, encode_state_counts

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

    The buffers are allocated once and rewritten in place, never resized (numpy holds views of them).

    Attributes:
        games: the game of each slot (a finished one until :meth:`restart` replaces it).
        observations: row ``i`` (``OBSERVATION_SIZE`` bytes from ``i * OBSERVATION_SIZE``) is slot
            ``i``'s acting seat's observation counts, once :meth:`flush` has run since it changed.
        masks: row ``i`` (``NUM_ACTIONS`` bytes of 0 or 1) is slot ``i``'s acting seat's legal actions.
        seats: per slot, the acting seat (one byte).
        decisions: the decisions taken so far in each slot's game (forced ones not counted).
        eager: whether a changed slot's observation row is written at once (else by :meth:`flush`).
        unwritten: per slot, 1 while its observation row waits for :meth:`flush`.
        waiting: the slots whose ``unwritten`` is 1, in the order they changed.
    """

    games: list[Game]
    observations: bytearray
    masks: bytearray
    seats: bytearray
    decisions: list[int]
    eager: bool
    unwritten: bytearray
    waiting: list[int]

    def __init__(self, games: list[Game]) -> None:
        size = len(games)
        self.games = games
        self.observations = bytearray(size * OBSERVATION_SIZE)
        self.masks = bytearray(size * NUM_ACTIONS)
        self.seats = bytearray(size)
        self.decisions = [0] * size
        self.eager = True
        self.unwritten = bytearray(size)
        self.waiting = []
        for slot in range(size):
            self.write(slot)

    def write(self, slot: int) -> None:
        """Write the mask and seat of ``slot`` for its game's current decision (it must not be
        over), and its observation row now if :attr:`eager`, else at the next :meth:`flush`."""
        game = self.games[slot]
        state = game.state
        seat = state.current_player
        start = slot * NUM_ACTIONS
        self.masks[start : start + NUM_ACTIONS] = mask_row(game.legal_actions())
        self.seats[slot] = seat
        if self.eager:  # a slot still waiting from a lazy step is written again by flush(): harmless
            start = slot * OBSERVATION_SIZE
            self.observations[start : start + OBSERVATION_SIZE] = encode_state_counts(state, seat)
        elif not self.unwritten[slot]:
            self.unwritten[slot] = 1
            self.waiting.append(slot)

    def flush(self) -> None:
        """Write the observation row of every slot that changed since the last flush."""
        observations = self.observations
        for slot in self.waiting:
            state = self.games[slot].state
            start = slot * OBSERVATION_SIZE
            observations[start : start + OBSERVATION_SIZE] = encode_state_counts(state, state.current_player)
            self.unwritten[slot] = 0
        self.waiting = []

    def restart(self, slot: int, game: Game) -> None:
        """Put a new game (at its first decision) in ``slot``."""
        self.games[slot] = game
        self.decisions[slot] = 0
        self.write(slot)

    def first_illegal(self, actions: list[int], stepped: list[int]) -> int:
        """The first slot of ``stepped`` whose action is not an action id (all of them checked
        first), else the first whose action its mask does not allow; -1 when every one is legal.
        Here rather than in numpy: for a few games the check is a few compiled loads, where numpy
        pays microseconds a call."""
        for slot in stepped:
            action = actions[slot]
            if action < 0 or action >= NUM_ACTIONS:
                return slot
        masks = self.masks
        for slot in stepped:
            if not masks[slot * NUM_ACTIONS + actions[slot]]:
                return slot
        return -1

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

    def observe(self, seat: int) -> bytes:
        """Every slot's observation counts for ``seat``, in slot order, as one buffer."""
        return b"".join([encode_state_counts(game.state, seat) for game in self.games])
