"""Many games of Biblios stepped in one call: numpy arrays in, numpy arrays out.

A training loop that steps one game per call spends most of its time around the game (one
framework call and one policy forward per decision). :class:`VectorGame` steps ``num_games``
games per call, one action each for its acting seat, and hands back one :class:`Batch` of arrays
that a batched policy reads at once; the loop over games runs in the compiled core
(:mod:`biblios_env.vector.stepping`). The usage, the rules below and the speed:
``docs/vector.md``.

- Every observation is byte-identical to ``raw_env.observe(acting agent)["observation"]`` of the
  same game at the same point, and every mask to its ``action_mask``; forced single-option
  decisions are applied automatically (unless ``expose_forced=True``), as in the env.
- A game that ends is dealt anew at once, in the same step: ``terminated[i]`` says so, the
  finished game's ``rewards``, ``final_vp``, ``winners`` and ``game_length`` are in row ``i``,
  and the other arrays already show the new game's first decision.
- Game ``k`` of slot ``i`` (``k = 0`` at ``reset(seed=s)``) is dealt with
  :func:`deal_seed` ``(s, i, k)``, whatever ``num_games`` is: a batch of 8 and a batch of 256 with
  the same seed play the same games in their first 8 slots, and ``raw_env().reset(seed=seeds[i])``
  deals the game of slot ``i`` again (to replay, log or render it with the other tools).
- A step checks the whole batch before it changes anything: a wrong shape or dtype and an action
  out of 0..265 are a ValueError, an illegal action an
  :class:`~biblios_env.engine.game.IllegalActionError` naming the slot, the seat, the action and the
  legal ones.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable, Sequence
from typing import Any, Final

import numpy as np

from biblios_env.actions import NUM_ACTIONS, describe
from biblios_env.engine.config import GameConfig, check_bool, check_seed
from biblios_env.engine.game import Game, IllegalActionError
from biblios_env.engine.log import replay, to_log
from biblios_env.engine.scoring import check_reward, rewards
from biblios_env.observations import (
    OBSERVATION_SCALE,
    OBSERVATION_SIZE,
    SCALED_FROM,
    STATE_SIZE,
    encode_global_state,
)
from biblios_env.vector.stepping import GameBatch

#: The format of :meth:`VectorGame.checkpoint`, checked by :meth:`VectorGame.restore`.
CHECKPOINT_FORMAT: Final = "biblios-vector-game"
CHECKPOINT_VERSION: Final = 1


def deal_seed(seed: int, slot: int, index: int) -> int:
    """The seed of game ``index`` of ``slot`` in a :class:`VectorGame` seeded with ``seed``.

    A hash of the three numbers alone (BLAKE2b), so a slot's games do not depend on the batch size
    or on the other slots; a 63-bit int, as the engine takes.
    """
    digest = hashlib.blake2b(f"{seed}/{slot}/{index}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") >> 1


class Batch:
    """The arrays of one step; row ``i`` belongs to game slot ``i``.

    :class:`VectorGame` allocates them once and overwrites them in place at every call, so keep
    :meth:`copy` of a batch that must outlive the next step. ``observation`` is converted from the
    games' integer counts when it is first read after a step (and only in the rows that changed):
    a loop that reads only :meth:`VectorGame.observation_counts` never pays for the float32 batch,
    four times the counts' size (and after a step with ``eager=False`` the counts too are written
    only when asked for). Read it from the batch after every step rather than keeping the array
    from an earlier one.

    Attributes:
        observation: ``(num_games, 1134)`` float32, the acting seat's observation.
        action_mask: ``(num_games, 266)`` int8, the acting seat's legal actions (read-only).
        current_player: ``(num_games,)`` int64, the acting seat.
        terminated: ``(num_games,)`` bool, the game ended with this step (and a new one began).
        rewards: ``(num_games, num_players)`` float32, the finished game's rewards (the env's
            ``reward`` option) in a terminated row, zeros elsewhere.
        final_vp: ``(num_games, num_players)`` int64, the finished game's victory points.
        winners: ``(num_games, num_players)`` bool, the finished game's winners.
        game_length: ``(num_games,)`` int64, the finished game's decisions (forced ones not counted).
        seeds: ``(num_games,)`` int64, the seed of each slot's current game.
    """

    #: The arrays, in the order the constructor takes them.
    FIELDS: Final = (
        "observation",
        "action_mask",
        "current_player",
        "terminated",
        "rewards",
        "final_vp",
        "winners",
        "game_length",
        "seeds",
    )

    def __init__(
        self,
        observation: np.ndarray,
        action_mask: np.ndarray,
        current_player: np.ndarray,
        terminated: np.ndarray,
        rewards: np.ndarray,
        final_vp: np.ndarray,
        winners: np.ndarray,
        game_length: np.ndarray,
        seeds: np.ndarray,
    ) -> None:
        self._observation = observation
        self._convert: Callable[[], None] | None = None
        self.action_mask = action_mask
        self.current_player = current_player
        self.terminated = terminated
        self.rewards = rewards
        self.final_vp = final_vp
        self.winners = winners
        self.game_length = game_length
        self.seeds = seeds

    @property
    def observation(self) -> np.ndarray:
        convert, self._convert = self._convert, None
        if convert is not None:
            convert()
        return self._observation

    def convert_on_read(self, convert: Callable[[], None]) -> None:
        """Have ``convert`` bring ``observation`` up to date before it is next read."""
        self._convert = convert

    def copy(self) -> Batch:
        """A snapshot: every array copied."""
        return Batch(*(getattr(self, name).copy() for name in self.FIELDS))


def _check_count(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise ValueError(f"{name} must be a positive int, got {value!r}")
    return int(value)


class VectorGame:
    """``num_games`` games of ``num_players`` stepped together; see the module docstring.

    Args:
        num_games: the batch size.
        num_players: 2, 3 or 4.
        seed: the seed of every deal (:func:`deal_seed`); drawn at random when ``None``.
        penalty, strict_bids, reward, first_player, preset, expose_forced: the PettingZoo env's
            options of the same names.
    """

    def __init__(
        self,
        num_games: int,
        num_players: int = 2,
        seed: int | None = None,
        *,
        penalty: str = "standard",
        strict_bids: bool = False,
        reward: str = "win",
        first_player: int = 0,
        preset: str = "standard",
        expose_forced: bool = False,
    ) -> None:
        self.num_games = _check_count("num_games", num_games)
        self.config = GameConfig(num_players, penalty, strict_bids, first_player, preset=preset)
        self.num_players = self.config.num_players
        self.reward = check_reward(reward)
        self.auto_forced = not check_bool("expose_forced", expose_forced)
        self.seed = secrets.randbits(63) if seed is None else check_seed(seed)
        #: How many games each slot has dealt since the last seeded reset (the next one's index).
        self.games_dealt = np.zeros(self.num_games, dtype=np.int64)
        #: Every decision applied since construction, all slots together.
        self.decisions = 0
        self._all_slots = list(range(self.num_games))
        self._finished: list[Game | None] = [None] * self.num_games
        self._core = GameBatch([self._deal(slot) for slot in self._all_slots])
        self.games_dealt[:] = 0  # those games only fill the buffers: reset() deals game 0 again
        # Views of the core's buffers: they follow every step without a copy.
        self._seats = np.frombuffer(self._core.seats, np.uint8)
        self._counts = _read_only(self._core.observations, np.uint8, OBSERVATION_SIZE)
        self._observation = np.zeros((self.num_games, OBSERVATION_SIZE), np.float32)
        #: The rows of the float32 observation behind the counts (converted when it is next read).
        self._stale_rows = np.ones(self.num_games, bool)
        shape = (self.num_games, self.num_players)
        self.batch = Batch(
            observation=self._observation,
            action_mask=_read_only(self._core.masks, np.int8, NUM_ACTIONS),
            current_player=np.zeros(self.num_games, np.int64),
            terminated=np.zeros(self.num_games, bool),
            rewards=np.zeros(shape, np.float32),
            final_vp=np.zeros(shape, np.int64),
            winners=np.zeros(shape, bool),
            game_length=np.zeros(self.num_games, np.int64),
            seeds=np.zeros(self.num_games, np.int64),
        )
        self._started = False
        #: The slots whose game ended in the last step, ascending (the rows ``terminated`` marks).
        self.ended: list[int] = []

    # ----------------------------------------------------------------- dealing
    def _deal(self, slot: int) -> Game:
        """The next game of ``slot``, at its first decision."""
        seed = deal_seed(self.seed, slot, int(self.games_dealt[slot]))
        self.games_dealt[slot] += 1
        game = Game.from_config(self.config, seed=seed, auto_forced=self.auto_forced)
        if game.is_over:  # no deal of the rules ends without a decision; a guard for the invariant
            raise RuntimeError(f"the game of seed {seed} ended before its first decision")
        return game

    def reset(self, seed: int | None = None) -> Batch:
        """Deal a new game in every slot. With ``seed``, the deals restart from game 0 of that
        seed; without, each slot deals its next game of the current seed."""
        if seed is not None:
            self.seed = check_seed(seed)
            self.games_dealt[:] = 0
        for slot in self._all_slots:
            self._core.restart(slot, self._deal(slot))
        self._started = True
        self._clear_results()
        self.batch.seeds[:] = [game.seed for game in self._core.games]
        self._refresh(None)
        return self.batch

    # ----------------------------------------------------------------- stepping
    def step(self, actions: Any, active: Any = None, *, eager: bool = True) -> Batch:
        """Apply one action per game for its acting seat and return the batch after it.

        Args:
            actions: ``(num_games,)`` integer array (or sequence) of action ids.
            active: optional ``(num_games,)`` bool array: step only these games (the others keep
                their decision, and their entries of ``actions`` are ignored), for loops where
                different policies act in different games.
            eager: encode the positions reached now, while each game is in the cache (a loop
                that reads every observation), or, ``False``, only when the counts or the
                observation are next read (a loop where many positions are never read, such as
                one whose opponents move from the masks alone). The same values either way.
        """
        if not self._started:
            raise RuntimeError("call reset() before step()")
        chosen = self._checked_actions(actions).tolist()
        return self._step_rows(chosen, None if active is None else self._checked_active(active), bool(eager))

    def _step_rows(self, actions: list[int], rows: np.ndarray | None, eager: bool = True) -> Batch:
        """:meth:`step` once its arguments are checked: ``actions`` one per game, ``rows`` the
        ascending distinct slots to step (``None``: all). The adapters' opponent rounds call it
        with the rows they already hold, and ``eager=False``: the positions reached are encoded
        only when read (never, where an opponent playing from the mask alone moves next); each
        action is still checked against its game's mask."""
        stepped = self._all_slots if rows is None else rows.tolist()
        self._check_legal(actions, stepped)
        self._core.eager = eager
        try:
            finished = self._core.step(actions, stepped)
            self.decisions += len(stepped)
            self._clear_results()
            for slot in finished:
                self._finish(slot)
        finally:
            self._core.eager = True
        self.ended = finished
        self._refresh(rows)
        return self.batch

    def _checked_actions(self, actions: Any) -> np.ndarray:
        chosen = np.asarray(actions)
        if chosen.shape != (self.num_games,):
            raise ValueError(f"actions must have shape ({self.num_games},), one per game, got {chosen.shape}")
        if chosen.dtype.kind not in "iu":
            raise ValueError(f"actions must be integer action ids, got dtype {chosen.dtype}")
        return chosen

    def _checked_active(self, active: Any) -> np.ndarray:
        """The slots ``active`` marks, ascending."""
        chosen = np.asarray(active)
        if chosen.shape != (self.num_games,) or chosen.dtype != bool:
            raise ValueError(
                f"active must be a bool array of shape ({self.num_games},), got {chosen.dtype} {chosen.shape}"
            )
        return np.flatnonzero(chosen)

    def _check_legal(self, actions: list[int], stepped: list[int]) -> None:
        """Raise for the first stepped game whose action is out of range or illegal."""
        slot = self._core.first_illegal(actions, stepped)
        if slot < 0:
            return
        action = actions[slot]
        if not 0 <= action < NUM_ACTIONS:
            raise ValueError(f"game {slot}: action {action} is not an action id in 0..{NUM_ACTIONS - 1}")
        legal = ", ".join(f"{a} {describe(a)}" for a in np.flatnonzero(self.batch.action_mask[slot]).tolist())
        raise IllegalActionError(
            f"game {slot}: action {action} ({describe(action)}) is not legal for seat {self._seats[slot]}; "
            f"legal: {legal}"
        )

    def _finish(self, slot: int) -> None:
        """Record the finished game of ``slot`` in the batch and deal its next game."""
        game = self._core.games[slot]
        state = game.state
        batch = self.batch
        batch.terminated[slot] = True
        batch.rewards[slot] = rewards(self.reward, state.vp, state.winners)
        batch.final_vp[slot] = state.vp
        batch.winners[slot, state.winners] = True
        batch.game_length[slot] = self._core.decisions[slot]
        self._finished[slot] = game
        game = self._deal(slot)
        self._core.restart(slot, game)
        batch.seeds[slot] = game.seed

    def _clear_results(self) -> None:
        if self.ended:  # the rows the last step's results were written in (none: nothing to clear)
            self.ended = []
            batch = self.batch
            batch.terminated[:] = False
            batch.rewards[:] = 0.0
            batch.final_vp[:] = 0
            batch.winners[:] = False
            batch.game_length[:] = 0

    def _refresh(self, rows: np.ndarray | None) -> None:
        """After a change of the games in ``rows`` (every slot when ``None``): the arrays that are not
        views of the core's buffers. The float32 observation waits until it is read."""
        if rows is None:
            self._stale_rows[:] = True
        else:
            self._stale_rows[rows] = True
        np.copyto(self.batch.current_player, self._seats)
        self.batch.convert_on_read(self._convert_observations)

    def _convert_observations(self) -> None:
        """The float32 observation of the rows that changed since it was last read: the whole batch
        at once after a full step, only the stepped rows after a step of a few games."""
        self._core.flush()
        stale = self._stale_rows
        if stale.all():
            _counts_to_observations(self._core.observations, self._observation)
        else:
            rows = np.flatnonzero(stale)
            self._observation[rows] = self._counts[rows] * OBSERVATION_SCALE
        stale[:] = False

    def observation_counts(self) -> np.ndarray:
        """The batch's observations as their integer counts (``(num_games, 1134)`` uint8, read-only;
        ``observation == counts * OBSERVATION_SCALE``): 4x smaller than the float32 observation
        (never converted if only this is read), and their non-zero entries are the sparse form of
        the observations. A view of the compiled core's buffer, brought up to date by this call:
        call it again after every step (after ``step(..., eager=False)`` the rows of the games that
        moved are written only when the counts or the observation are next asked for)."""
        self._core.flush()
        return self._counts

    # ----------------------------------------------------------------- other views
    def observe(self, seat: int) -> np.ndarray:
        """Every game's observation for ``seat`` (a new ``(num_games, 1134)`` array), whoever acts."""
        if isinstance(seat, bool) or not isinstance(seat, int | np.integer) or not 0 <= seat < self.num_players:
            raise ValueError(f"seat must be a seat in 0..{self.num_players - 1}, got {seat!r}")
        out = np.empty((self.num_games, OBSERVATION_SIZE), np.float32)
        _counts_to_observations(self._core.observe(int(seat)), out)
        return out

    def state_tensor(self) -> np.ndarray:
        """Every game's global state (``(num_games, STATE_SIZE)``, the env's ``state()``): every
        hidden card, for centralized critics; never show it to a player."""
        out = np.zeros((self.num_games, STATE_SIZE), np.float32)
        for slot, game in enumerate(self._core.games):
            encode_global_state(game.state, out[slot])
        return out

    def game(self, slot: int) -> Game:
        """The engine game of ``slot`` (to log or render it; do not step it yourself)."""
        return self._core.games[slot]

    def finished_game(self, slot: int) -> Game | None:
        """The last game of ``slot`` that ended (``None`` before the first): its log, its final
        table, the last observation of any seat."""
        return self._finished[slot]

    # ----------------------------------------------------------------- checkpoints
    def checkpoint(self) -> dict[str, Any]:
        """Everything needed to continue exactly from here, JSON-ready: the seed, the games dealt
        per slot and each slot's game so far as a game log (replayed by :meth:`restore`)."""
        return {
            "format": CHECKPOINT_FORMAT,
            "version": CHECKPOINT_VERSION,
            "config": self.config.to_dict(),
            "reward": self.reward,
            "auto_forced": self.auto_forced,
            "seed": self.seed,
            "games_dealt": self.games_dealt.tolist(),
            "decisions": self.decisions,
            "game_decisions": list(self._core.decisions),
            "games": [to_log(game) for game in self._core.games],
        }

    def restore(self, checkpoint: dict[str, Any]) -> Batch:
        """Continue from a :meth:`checkpoint` of a VectorGame with the same options and size."""
        mine = self.checkpoint()
        for key in ("format", "version", "config", "reward", "auto_forced"):
            if checkpoint.get(key) != mine[key]:
                raise ValueError(
                    f"the checkpoint's {key} is {checkpoint.get(key)!r}, this VectorGame's is {mine[key]!r}"
                )
        if len(checkpoint["games"]) != self.num_games:
            raise ValueError(
                f"the checkpoint holds {len(checkpoint['games'])} games, this VectorGame plays {self.num_games}"
            )
        games = [replay(log, auto_forced=self.auto_forced) for log in checkpoint["games"]]
        self.seed = check_seed(checkpoint["seed"])
        self.games_dealt[:] = checkpoint["games_dealt"]
        self.decisions = int(checkpoint["decisions"])
        for slot, game in enumerate(games):
            self._core.restart(slot, game)
            self._core.decisions[slot] = int(checkpoint["game_decisions"][slot])
        self._started = True
        self._clear_results()
        self.batch.seeds[:] = [game.seed for game in games]
        self._refresh(None)
        return self.batch


def _read_only(buffer: bytearray, dtype: type, row_size: int) -> np.ndarray:
    """A read-only ``(rows, row_size)`` view of one of the core's buffers: the core alone writes them."""
    view: np.ndarray = np.frombuffer(buffer, dtype).reshape(-1, row_size)
    view.flags.writeable = False
    return view


def _counts_to_observations(joined: bytes | bytearray, out: np.ndarray) -> np.ndarray:
    """Rows of observation counts to float32 observations: a plain cast where every entry is 0 or
    1, a multiplication by the scale only over the few scalar entries at the end (the same values
    as ``counts * OBSERVATION_SCALE``). Returns the counts (a view of ``joined``)."""
    counts = np.frombuffer(joined, np.uint8).reshape(out.shape)
    np.copyto(out[:, :SCALED_FROM], counts[:, :SCALED_FROM], casting="unsafe")
    np.multiply(counts[:, SCALED_FROM:], OBSERVATION_SCALE[SCALED_FROM:], out=out[:, SCALED_FROM:])
    return counts


__all__: Sequence[str] = ["CHECKPOINT_FORMAT", "Batch", "VectorGame", "deal_seed"]
