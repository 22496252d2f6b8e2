"""Biblios as a PettingZoo AEC environment (``biblios_v1``).

| | |
|---|---|
| Import | `from biblios_env import env, raw_env` or `pettingzoo.make("aec", "biblios/Biblios-v1")` |
| Agents | `player_0` … `player_{N-1}`, N = 2, 3 or 4 |
| Action space | `Discrete(266)`, the same for every player count (`biblios_env.actions`) |
| Observation | `{"observation": Box(0, ·, (1134,), float32), "action_mask": Box(0, 1, (266,), int8)}` |
| Rewards | terminal only; `"win"` (default, zero-sum) or `"vp"` |
| Illegal actions | raise `IllegalActionError` (default) or, with `illegal_action="forfeit"`, end the game |

**Observation.** What the observing player may know (RULES §7), with seats relative to
the observer (0 = self, 1 = left neighbour, ...) and padded to 4 players; the layout is
declared in :mod:`biblios_env.observations` (``SLICES``, ``decode``, ``layout_markdown``).

**Action mask.** Exactly the legal actions of the agent to act; all zeros for the others
and after the end. Decisions with a single legal action are applied automatically unless
``expose_forced=True``; an illegal action raises :class:`IllegalActionError` naming it.

**Rewards.** ``"win"``: winners share +1 and the others share −1 (each winner gets
``1/len(winners)``, each loser ``-1/len(losers)``; a game won by everybody gives 0).
``"vp"``: own VP minus the best VP among the others, so within -22..22 (the declared bounds:
:data:`biblios_env.engine.facts.REWARD_BOUNDS`). Terminal ``infos`` carry ``vp``,
``winners`` and ``category_winners`` (seats; -1 for a category nobody won).

**Reset options.** ``deck`` (the draw pile after removal, top first), ``auction_order``
(``"shuffle"`` or ``"placed"``), ``first_player`` (a seat); each applies to that one reset.
As Gymnasium and PettingZoo expect, other keys are ignored, with a ``UserWarning`` naming
them (so a typo such as ``"decks"`` does not go unseen). A bad seed (``seed`` must be a
non-negative int) or a bad option value raises ValueError naming it, and leaves the env as
it was: a rejected reset changes neither the game in progress nor later games' seeds.

**Rendering.** ``render_mode`` ``"ansi"`` returns the table as text, ``"human"`` prints it
at every step. ``render_view`` chooses whose table: ``None`` or ``"current"`` (default) the
acting seat's view, so watching bots shows each hand in turn; a seat (``render_view=0``)
always that seat's view, what a human playing that seat may see; ``"table"`` the full
table for spectators: every hand and every card in play, a payment in progress included
(not the order of the piles, nor the cards removed at setup). It reveals what RULES §7
hides, so never show it to a player. Bad values raise ValueError naming them.

**Call order and bad actions.** :func:`env` adds PettingZoo's ``OrderEnforcingWrapper``
(``step()`` before ``reset()`` raises AssertionError; ``raw_env`` raises RuntimeError). An
action that is not an int in 0..265 (numpy integers are fine; a float, bool, string or
``None`` is not) or not legal raises
:class:`IllegalActionError` naming the value, the range and the legal actions; the env is
left unchanged.

**Illegal actions: raise or forfeit.** ``illegal_action="raise"`` (the default) is the
behaviour above: a policy that drops its masks fails loudly. Environment checkers that step
*unmasked* random actions (RLlib's env check samples ``action_space.sample()`` once, a legal
id with probability about 3/266) need ``illegal_action="forfeit"``, the option of the same
name of the Gym wrapper (:mod:`biblios_env.gym_env`). An int id that is out of range or not
legal then ends the game instead of raising:

* ``rewards``: ``forfeit_reward`` (default −1.0, as in the Gym wrapper) for the offending
  agent, 0.0 for every other agent (the game was not played out: nobody won);
* ``terminations``: ``True`` for every agent; the AEC loop then steps ``None`` for each, as
  after a finished game, and ``_cumulative_rewards`` hold the same rewards;
* ``infos``: ``{"forfeit": True, "forfeited_by": agent, "vp": None, "winners": None,
  "category_winners": None}`` for every agent (a finished game's keys, without a result);
* observations: the game as it stood, with an all-zero ``action_mask`` for every agent.

A game played to its end has no ``"forfeit"`` key in its infos. A value that is not an int id
(a float, bool, string, or ``None`` for a live agent) still raises :class:`IllegalActionError`
in both modes: it is a caller's bug, not a move. A masked policy never forfeits, so a
forfeit during training is a bug to count and alert on, not a move to learn from.

``metadata["layout"]`` is the observation/action layout fingerprint
(:data:`biblios_env.layout.LAYOUT_FINGERPRINT`) that policy files record.

Version history (``CHANGELOG.md``): v1 — a payment in progress is seen only by the payer (the
others see no picked cards, no progress, and the payer's hand size unchanged until it
completes; RULES §5); v0 — first release.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any, Final

import gymnasium
import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from biblios_env.actions import NUM_ACTIONS, is_action_id
from biblios_env.cards import NUM_CARDS
from biblios_env.engine.config import GameConfig, check_bool
from biblios_env.engine.game import Game
from biblios_env.engine.scoring import check_reward, rewards
from biblios_env.engine.setup import check_num_players
from biblios_env.engine.views import PlayerView, player_view
from biblios_env.layout import ENV_NAME, LAYOUT_FINGERPRINT
from biblios_env.observations import (
    HAND_SIZE_SCALE,
    OBSERVATION_SIZE,
    SLICES,
    STATE_SIZE,
    encode_global_state,
    encode_state,
)
from biblios_env.text import FULL_TABLE, Viewer, game_text

RESET_OPTIONS: Final = ("deck", "auction_order", "first_player")
#: ``illegal_action`` values: raise :class:`IllegalActionError` (the default) or end the game as
#: a forfeit of the acting agent (for environment checkers that step unmasked actions).
RAISE: Final = "raise"
FORFEIT: Final = "forfeit"
ILLEGAL_ACTIONS: Final = (RAISE, FORFEIT)
#: The forfeiting agent's reward by default: the worst ``"win"`` reward, a loss.
FORFEIT_REWARD: Final = -1.0
#: ``render_view`` for "whoever is to act" (the default; seat 0 once the game is over).
CURRENT_SEAT: Final = "current"
#: A run of ones to copy into the action mask (a consecutive range of legal bids).
_ONES: Final = b"\x01" * NUM_ACTIONS


def _observation_high() -> np.ndarray:
    high = np.ones(OBSERVATION_SIZE, dtype=np.float32)
    high[SLICES["hand_sizes"]] = NUM_CARDS / HAND_SIZE_SCALE  # a hand can outgrow the scale through penalties
    return high


def known_reset_options(options: object, known: Sequence[str]) -> dict[str, Any]:
    """The ``reset`` options an env reads, out of ``options`` (a dict or ``None``).

    Unknown keys are ignored, the Gymnasium/PettingZoo convention (PettingZoo's ``api_test``
    probes ``reset`` with ``{"options": 1}``), but not silently: a warning names them, so a
    typo such as ``"decks"`` is seen instead of quietly dealing a random game.
    """
    if options is None:
        return {}
    if not isinstance(options, dict):
        raise ValueError(f"options must be a dict or None, got {type(options).__name__}")
    unknown = sorted((key for key in options if key not in known), key=repr)
    if unknown:
        warnings.warn(f"ignoring unknown reset option(s) {unknown}; this env reads {list(known)}", stacklevel=3)
    return {key: value for key, value in options.items() if key in known}


def is_forfeit(illegal_action: str, action: object, legal: Sequence[int]) -> bool:
    """Whether ``action`` ends the game as a forfeit under the ``illegal_action`` option: only with
    ``"forfeit"``, and only an action id that is not legal (out of range included); a value that is
    not an action id (:func:`~biblios_env.actions.is_action_id`) is a caller's bug and always raises."""
    return illegal_action == FORFEIT and is_action_id(action) and int(action) not in legal


def check_illegal_action(illegal_action: object) -> str:
    """The ``illegal_action`` option, or ValueError naming the bad value and :data:`ILLEGAL_ACTIONS`."""
    if illegal_action not in ILLEGAL_ACTIONS:
        raise ValueError(
            f"illegal_action must be one of {', '.join(map(repr, ILLEGAL_ACTIONS))}, got {illegal_action!r}"
        )
    return str(illegal_action)


def check_forfeit_reward(forfeit_reward: object) -> float:
    """The ``forfeit_reward`` option as a float, or ValueError naming it: a finite number, not a
    bool or a string (``float("nan")`` or ``"1"`` would reach a learner's returns unseen)."""
    value = math.nan
    if isinstance(forfeit_reward, int | float | np.integer | np.floating) and not isinstance(forfeit_reward, bool):
        value = float(forfeit_reward)
    if not math.isfinite(value):
        raise ValueError(f"forfeit_reward must be a finite number, got {forfeit_reward!r}")
    return value


def render_output(text_of: Callable[[], str], render_mode: str | None) -> str | None:
    """The environments' ``render()``: ``"ansi"`` returns the text, ``"human"`` prints it, and
    without a render mode Gymnasium's warning is logged (the text is not even built)."""
    if render_mode is None:
        gymnasium.logger.warn("render() called without a render_mode; pass render_mode='ansi' or 'human'.")
        return None
    text = text_of()
    if render_mode == "human":
        print(text)
        return None
    return text


def check_render_view(render_view: object, num_players: int) -> int | str:
    """The table ``render()`` shows: ``None`` or ``"current"`` (the acting seat), a seat, or
    ``"table"`` (everything); raise ValueError naming the bad value and the choices."""
    if render_view is None or render_view == CURRENT_SEAT:
        return CURRENT_SEAT  # resolved to a seat at each render()
    if render_view == FULL_TABLE:
        return FULL_TABLE
    if (
        isinstance(render_view, int | np.integer)
        and not isinstance(render_view, bool)
        and 0 <= render_view < num_players
    ):
        return int(render_view)
    raise ValueError(
        f"render_view must be None, 'current', 'table' or a seat in 0..{num_players - 1} "
        f"for {num_players} players, got {render_view!r}"
    )


class raw_env(AECEnv):  # noqa: N801 - PettingZoo's naming convention
    """The unwrapped environment; see the module docstring for the full documentation."""

    metadata: dict[str, Any] = {
        "name": ENV_NAME,
        "layout": LAYOUT_FINGERPRINT,
        "render_modes": ["ansi", "human"],
        "is_parallelizable": False,
        "render_fps": 1,
    }

    def __init__(
        self,
        num_players: int = 2,
        render_mode: str | None = None,
        *,
        penalty: str = "standard",
        strict_bids: bool = False,
        reward: str = "win",
        first_player: int = 0,
        preset: str = "standard",
        expose_forced: bool = False,
        render_view: int | str | None = None,
        illegal_action: str = RAISE,
        forfeit_reward: float = FORFEIT_REWARD,
    ) -> None:
        super().__init__()
        self.num_players = check_num_players(num_players)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None, 'ansi' or 'human', got {render_mode!r}")
        self.render_view = check_render_view(render_view, self.num_players)
        check_reward(reward)
        check_bool("expose_forced", expose_forced)
        self.illegal_action = check_illegal_action(illegal_action)
        self.forfeit_reward = check_forfeit_reward(forfeit_reward)
        self.render_mode = render_mode
        self.reward_mode = reward
        #: The options of every game this env deals (checked now, not at the first reset); the
        #: ``auction_order`` and ``first_player`` reset options replace theirs for one reset.
        self.game_config = GameConfig(self.num_players, penalty, strict_bids, first_player, preset=preset)
        self.auto_forced = not expose_forced
        self.possible_agents = [f"player_{seat}" for seat in range(self.num_players)]
        self._seat = {agent: seat for seat, agent in enumerate(self.possible_agents)}
        observation_space = spaces.Dict(
            {
                "observation": spaces.Box(0.0, _observation_high(), (OBSERVATION_SIZE,), np.float32),
                "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), np.int8),
            }
        )
        self.observation_spaces = {agent: observation_space for agent in self.possible_agents}
        self.action_spaces: dict[str, spaces.Discrete] = {
            agent: spaces.Discrete(NUM_ACTIONS) for agent in self.possible_agents
        }
        state_high = np.concatenate([_observation_high(), np.ones(STATE_SIZE - OBSERVATION_SIZE, np.float32)])
        self.state_space = spaces.Box(0.0, state_high, (STATE_SIZE,), np.float32)
        self._seed_source = np.random.default_rng()
        self.game: Game | None = None
        #: The agent whose illegal action ended the game (``illegal_action="forfeit"``), else None.
        self.forfeited_by: str | None = None

    def observation_space(self, agent: str) -> spaces.Dict:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Discrete:
        return self.action_spaces[agent]

    # ----------------------------------------------------------------- reset
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Start a new game. ``seed`` fixes every chance event; see the module docs for ``options``.

        Everything is checked before anything changes: a rejected reset (a bad seed or option)
        leaves the env as it was, the game in progress and the seeds of later unseeded resets
        included.
        """
        changes = known_reset_options(options, RESET_OPTIONS)
        deck = changes.pop("deck", None)
        config = dataclasses.replace(self.game_config, **changes) if changes else self.game_config
        if seed is None:
            game = self._unseeded_game(config, deck)
        else:
            game = Game.from_config(config, seed=seed, deck=deck, auto_forced=self.auto_forced)  # checks the seed
            self._seed_source = np.random.default_rng(game.seed)  # later unseeded resets replay from here
        self.game = game
        self.forfeited_by = None
        self.agents = self.possible_agents[:]
        self.rewards = {agent: 0.0 for agent in self.agents}
        self._cumulative_rewards = {agent: 0.0 for agent in self.agents}
        self.terminations = {agent: False for agent in self.agents}
        self.truncations = {agent: False for agent in self.agents}
        self.infos: dict[str, dict[str, Any]] = {agent: {} for agent in self.agents}
        self.agent_selection = self.agents[game.current_player]

    def _unseeded_game(self, config: GameConfig, deck: Any) -> Game:
        """A game seeded by the next draw of the seed source; the draw is taken back if the game
        is rejected (a bad option), so a failed reset does not change the games that follow."""
        generator_state = self._seed_source.bit_generator.state
        try:
            seed = int(self._seed_source.integers(2**63))
            return Game.from_config(config, seed=seed, deck=deck, auto_forced=self.auto_forced)
        except ValueError:
            self._seed_source.bit_generator.state = generator_state
            raise

    # ----------------------------------------------------------------- observe / step
    def observe(self, agent: str) -> dict[str, np.ndarray]:
        game = self._require_game()
        seat = self._seat_of(agent)
        mask = bytearray(NUM_ACTIONS)  # built in Python and wrapped once: cheaper than numpy indexing
        if game.current_player == seat and self.forfeited_by is None:
            legal = game.legal_actions()
            if len(legal) > 2 and legal[-1] - legal[1] == len(legal) - 2:
                mask[legal[0]] = 1  # PASS and a run of consecutive bids: one slice
                mask[legal[1] : legal[-1] + 1] = _ONES[: len(legal) - 1]
            else:
                for action in legal:
                    mask[action] = 1
        return {"observation": encode_state(game.state, seat), "action_mask": np.frombuffer(mask, np.int8)}

    def view(self, agent: str) -> PlayerView:
        """``agent``'s information set as a structured :class:`PlayerView` (what agents use)."""
        return player_view(self._require_game().state, self._seat_of(agent))

    def step(self, action: int | None) -> None:
        game = self.game
        if game is None:
            raise RuntimeError("call reset() before step()")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if is_forfeit(self.illegal_action, action, game.legal_actions()):
            self._forfeit(agent)
            return
        game.apply(action)  # type: ignore[arg-type]  # raises IllegalActionError naming the action and the range
        self._cumulative_rewards[agent] = 0.0
        if game.is_over:
            self._finish(game)
        else:
            self.agent_selection = self.agents[game.current_player]
        if self.render_mode == "human":
            self.render()

    def _finish(self, game: Game) -> None:
        state = game.state
        rewards = self.rewards_of(state.vp, state.winners)
        info = {"vp": state.vp[:], "winners": state.winners[:], "category_winners": state.category_winners[:]}
        for seat, agent in enumerate(self.agents):
            self.rewards[agent] = rewards[seat]
            self.terminations[agent] = True
            self.infos[agent] = dict(info)
        self._accumulate_rewards()

    def _forfeit(self, agent: str) -> None:
        """End the game on ``agent``'s illegal action (``illegal_action="forfeit"``; module docs).

        The engine refused the action and left the game as it was, so the game stays unfinished:
        ``forfeited_by`` is what zeroes every mask from now on.
        """
        self.forfeited_by = agent
        info = {"forfeit": True, "forfeited_by": agent, "vp": None, "winners": None, "category_winners": None}
        for other in self.agents:
            self.rewards[other] = self.forfeit_reward if other == agent else 0.0
            self.terminations[other] = True
            self.infos[other] = dict(info)
        self._cumulative_rewards[agent] = 0.0
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def rewards_of(self, vp: list[int], winners: list[int]) -> list[float]:
        """Terminal rewards per seat for the configured reward mode (see the module docs and
        :func:`biblios_env.engine.scoring.rewards`)."""
        return rewards(self.reward_mode, vp, winners)

    # ----------------------------------------------------------------- inspection
    def snapshot(self) -> dict[str, Any]:
        """The full (omniscient) state as a JSON-ready dict (see ``Game.snapshot``)."""
        return self._require_game().snapshot()

    def state(self) -> np.ndarray:
        """A global state vector for centralized critics: seat 0's observation, then every
        hand, the draw pile, the auction pile and the removed cards as card indicators."""
        return encode_global_state(self._require_game().state)

    def render(self) -> str | None:
        """The table as ``render_view`` chose: the acting seat's view, one seat's, or the full table."""
        game = self._require_game()
        return render_output(lambda: game_text(game, self._render_viewer(game)), self.render_mode)

    def _render_viewer(self, game: Game) -> Viewer:
        if self.render_view == CURRENT_SEAT:
            return game.current_player if not game.is_over else 0
        return self.render_view  # type: ignore[return-value]  # a seat or "table"

    def close(self) -> None:
        self.game = None

    def _require_game(self) -> Game:
        if self.game is None:
            raise RuntimeError("call reset() before using the environment")
        return self.game

    def _seat_of(self, agent: str) -> int:
        try:
            return self._seat[agent]
        except KeyError:
            raise KeyError(f"unknown agent {agent!r}; agents are {self.possible_agents}") from None


def env(num_players: int = 2, render_mode: str | None = None, **options: Any) -> AECEnv:
    """The environment with PettingZoo's call-order wrapper.

    PettingZoo's ``AssertOutOfBoundsWrapper`` is left out on purpose: it only uses ``assert``
    (no value named, gone under ``python -O``), while :meth:`raw_env.step` already rejects
    every action that is not a legal id — out of range, not an int, or ``None`` — with an
    :class:`IllegalActionError` naming the value, the valid range and the legal actions (with
    ``illegal_action="forfeit"``, an out-of-range or illegal int id forfeits the game instead).
    """
    return wrappers.OrderEnforcingWrapper(raw_env(num_players, render_mode, **options))
