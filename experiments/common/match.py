"""One game between agents: agent specs (``hoarder:aggression=1.2``), building agents,
:func:`play_out` (the one loop that asks the seat to act and applies its answer) and
:func:`play_game`, which returns a :class:`GameResult` and can save a replayable log.

An agent spec is a registry name from :mod:`agents` (or an import path such as
``mypackage.bots.GreedyAgent``) with optional ``key=value`` parameters after a colon,
separated by commas. Values are read as int, float, ``true``/``false``/``none``, or else
kept as strings. The spec's text is the agent's label in results and game logs, and
:func:`parse_agent_spec` reads it back, so a label alone rebuilds the agent.
"""

from __future__ import annotations

import difflib
import importlib
import inspect
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from biblios_env.actions import is_action_id
from biblios_env.agent_interface import Agent, AgentObservation, Observer
from biblios_env.engine import Game, IllegalActionError
from biblios_env.engine.config import GameConfig
from biblios_env.engine.log import save_log
from biblios_env.engine.setup import check_num_players
from biblios_env.engine.views import player_view
from experiments.common.stats import win_shares

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]*(\.[A-Za-z_][A-Za-z0-9_]*)*\Z")
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_WORDS = {"true": True, "false": False, "none": None}


class AgentSpecError(ValueError):
    """An agent spec that does not parse, names no known agent, or has parameters the agent rejects."""


class AgentError(RuntimeError):
    """An agent that crashed or chose an illegal action during a game (the message says which game)."""


#: What an agent may raise that is its own fault. ``SystemExit`` is included: an agent calling
#: ``sys.exit()`` must not end a tournament quietly with status 0. ``KeyboardInterrupt`` is not:
#: Ctrl-C is the user stopping the run.
AGENT_FAULTS: Final = (Exception, SystemExit)


def _parse_value(text: str) -> Any:
    lowered = text.lower()
    if lowered in _WORDS:
        return _WORDS[lowered]
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


@dataclass(frozen=True, slots=True)
class AgentSpec:
    """Which agent to build: a registry name or import path, and its parameters in given order."""

    name: str
    params: tuple[tuple[str, Any], ...] = ()
    label: str = ""  # the spec as written; defaults to the canonical form

    def __post_init__(self) -> None:
        if not self.label:
            text = ",".join(f"{key}={value}" for key, value in self.params)
            object.__setattr__(self, "label", f"{self.name}:{text}" if text else self.name)

    @property
    def kwargs(self) -> dict[str, Any]:
        return dict(self.params)


def parse_agent_spec(text: str) -> AgentSpec:
    """``"hoarder:aggression=1.2,focus=3"`` -> AgentSpec("hoarder", (("aggression", 1.2), ("focus", 3)))."""
    text = text.strip()
    name, colon, rest = text.partition(":")
    if not _NAME.match(name):
        raise AgentSpecError(
            f"bad agent spec {text!r}: expected NAME or NAME:key=value,... where NAME is a registry name "
            "or an import path like package.module.Factory"
        )
    params: list[tuple[str, Any]] = []
    if colon:
        if not rest.strip():
            raise AgentSpecError(f"bad agent spec {text!r}: nothing after ':' (expected key=value,...)")
        for item in rest.split(","):
            key, equals, value = (part.strip() for part in item.partition("="))
            if not equals or not _KEY.match(key) or not value:
                raise AgentSpecError(f"bad agent parameter {item.strip()!r} in {text!r}: expected key=value")
            if any(key == seen for seen, _ in params):
                raise AgentSpecError(f"agent parameter {key!r} is given twice in {text!r}")
            params.append((key, _parse_value(value)))
    return AgentSpec(name, tuple(params), label=text)


# ----------------------------------------------------------------------------- building agents
def registry() -> dict[str, Callable[..., Agent]]:
    """The agent registry of :mod:`agents` (name -> factory)."""
    import agents

    return dict(agents.AGENTS)


def _factory(name: str) -> Callable[..., Agent]:
    if "." in name:
        module_name, _, attribute = name.rpartition(".")
        try:
            module = importlib.import_module(module_name)
        except ImportError as error:
            raise AgentSpecError(f"agent {name!r}: cannot import module {module_name!r}: {error}") from error
        factory = getattr(module, attribute, None)
        if not callable(factory):
            raise AgentSpecError(f"agent {name!r}: module {module_name!r} has no callable {attribute!r}")
        return factory
    known = registry()
    if name not in known:
        close = difflib.get_close_matches(name, known, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise AgentSpecError(
            f"unknown agent {name!r}{hint}; known agents: {', '.join(sorted(known))} "
            "(or give an import path like package.module.Factory)"
        )
    return known[name]


def _accepted_params(factory: Callable[..., Agent]) -> str | None:
    """The factory's keyword parameters with defaults, or None when its signature does not say."""
    try:
        parameters = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):
        return None
    if any(p.kind is p.VAR_KEYWORD for p in parameters):
        return None
    names = [
        f"{p.name}={p.default!r}" if p.default is not p.empty else p.name
        for p in parameters
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name != "self"
    ]
    return ", ".join(names) or "no parameters"


def build_agent(spec: AgentSpec) -> Agent:
    """A fresh agent for ``spec``; raises AgentSpecError naming the spec for unknown names or bad params."""
    factory = _factory(spec.name)
    try:
        agent = factory(**spec.kwargs)
    except (TypeError, ValueError) as error:
        accepted = _accepted_params(factory)
        hint = f"; {spec.name} accepts: {accepted}" if accepted else ""
        raise AgentSpecError(f"agent {spec.label!r}: {error}{hint}") from error
    except ImportError as error:
        raise AgentSpecError(f"agent {spec.label!r} cannot be built: {error}") from error
    if not isinstance(agent, Agent):
        raise AgentSpecError(
            f"agent {spec.label!r}: {type(agent).__name__} does not implement the Agent protocol "
            "(name, start_game(seat, num_players, seed), act(observation))"
        )
    return agent


@dataclass(frozen=True, slots=True)
class AgentDescription:
    """What ``--list-agents`` shows of a registry agent: its one-paragraph summary and parameters."""

    name: str
    summary: str  # the first paragraph of the agent class's docstring, on one line
    parameters: tuple[str, ...] | None  # "key=default" as a spec would write it; None when the agent does not say


_ROLE = re.compile(r":[a-z]+:`~?([^`<]*?)(?: <[^>]*>)?`")  # :class:`~pkg.Name` -> pkg.Name


def _plain_text(docstring: str) -> str:
    """The first paragraph of a docstring, on one line, without reStructuredText markup."""
    paragraph = inspect.cleandoc(docstring).split("\n\n")[0]
    text = " ".join(paragraph.split())
    text = _ROLE.sub(lambda match: match.group(1).rpartition(".")[2], text)
    return text.replace("``", "")


def _spec_text(value: Any) -> str:
    """A parameter value as it is written in an agent spec (``true``, ``none``, ``1.5``, ``flat``)."""
    if isinstance(value, bool) or value is None:
        return str(value).lower()
    if isinstance(value, int | float | str | Path):
        return str(value)
    return repr(value)


def _parameters(agent: Agent) -> tuple[str, ...] | None:
    """The agent's keyword parameters with their defaults: its ``defaults`` table when it has one
    (the heuristic agents), else its constructor's signature (a name alone has no default)."""
    defaults = getattr(type(agent), "defaults", None)
    if isinstance(defaults, dict):
        return tuple(f"{key}={_spec_text(value)}" for key, value in defaults.items())
    try:
        parameters = inspect.signature(type(agent)).parameters.values()
    except (TypeError, ValueError):
        return None
    if any(parameter.kind is parameter.VAR_KEYWORD for parameter in parameters):
        return None
    return tuple(
        parameter.name if parameter.default is parameter.empty else f"{parameter.name}={_spec_text(parameter.default)}"
        for parameter in parameters
        if parameter.kind in (parameter.POSITIONAL_OR_KEYWORD, parameter.KEYWORD_ONLY)
    )


def describe_agent(name: str) -> AgentDescription:
    """Build the registry agent ``name`` with its defaults and describe it; AgentSpecError if it
    cannot be built here (e.g. an optional dependency is missing)."""
    agent = build_agent(AgentSpec(name))
    return AgentDescription(name, _plain_text(type(agent).__doc__ or ""), _parameters(agent))


# ----------------------------------------------------------------------------- one game
#: How a game asks for a seat's decision: ``decide(seat, observation)`` returns the action id.
Decide = Callable[[int, AgentObservation], int]


def seat_observation(game: Game) -> AgentObservation:
    """The decision in front of the seat to act: its own view of the table (RULES §7, never the
    full state) and its legal actions, as an agent's ``act`` receives them."""
    return AgentObservation(player_view(game.state, game.current_player), list(game.legal_actions()))


def play_out(game: Game, decide: Decide, after_action: Callable[[Game], None] | None = None) -> None:
    """Play ``game`` to its end: ask ``decide(seat, observation)`` for every decision of the seat
    to act and apply its answer (then call ``after_action(game)``, if given).

    This is the one "ask the seat's agent, apply" loop of the experiments (:func:`play_game`,
    the warm-start games of :mod:`experiments.train_ppo`); what a caller adds (timing, error
    messages, recording decisions, overriding a seat's choice) lives in its ``decide``. An
    illegal answer raises :class:`~biblios_env.engine.IllegalActionError` from ``game.apply``
    with the game unchanged, so ``game.current_player`` is still the seat that gave it.
    """
    while not game.is_over:
        seat = game.current_player
        game.apply(decide(seat, seat_observation(game)))
        if after_action is not None:
            after_action(game)


def show_views(game: Game, agents: Mapping[int, Agent], fault: Callable[[int, BaseException], Exception]) -> None:
    """Show each :class:`Observer` among ``agents`` (by seat) its seat's view of ``game`` (RULES
    §7): what every game loop here (the tournament's, the server's, the terminal's) does after
    each action, so an agent that follows the game sees the same in all of them. An agent that
    crashes there raises ``fault(seat, error)``, the loop's own error."""
    for seat, agent in agents.items():
        if isinstance(agent, Observer):
            try:
                agent.observe(player_view(game.state, seat))
            except AGENT_FAULTS as error:
                raise fault(seat, error) from error


def _view_feed(agents: Sequence[Agent], labels: Sequence[str], seed: int) -> Callable[[Game], None] | None:
    """What :func:`play_game` calls after every action (:func:`show_views`, an AgentError naming
    the agent and the game if one crashes); ``None`` without an observer."""
    observers = {seat: agent for seat, agent in enumerate(agents) if isinstance(agent, Observer)}
    if not observers:
        return None

    def show(game: Game) -> None:
        def fault(seat: int, error: BaseException) -> Exception:
            return AgentError(
                f"agent {labels[seat]!r} in seat {seat} crashed observing the game (game seed {seed}, "
                f"action {len(game.history)}): {type(error).__name__}: {error}"
            )

        show_views(game, observers, fault)

    return show


@dataclass(frozen=True, slots=True)
class GameResult:
    """One finished game; everything but the timings is a function of the seeds and the agents."""

    seed: int
    agents: tuple[str, ...]  # agent label per seat (seat 0 starts)
    agent_seeds: tuple[int | None, ...]
    vp: tuple[int, ...]
    winners: tuple[int, ...]  # several seats when they share the win
    category_winners: tuple[int, ...]  # per category, the seat that won it (-1: nobody)
    dice: tuple[int, ...]  # final die values per category
    actions: int  # actions in the game, forced ones included
    decisions: tuple[int, ...]  # decisions each seat's agent was asked to make
    seconds: tuple[float, ...] = field(default=(), compare=False)  # thinking time per seat

    @property
    def win_shares(self) -> list[float]:
        return win_shares(self.winners, len(self.agents))


def play_game(
    agents: Sequence[Agent],
    seed: int,
    *,
    agent_seeds: Sequence[int | None] | None = None,
    labels: Sequence[str] | None = None,
    game_config: GameConfig | None = None,
    log_path: str | Path | None = None,
    log_metadata: dict[str, Any] | None = None,
) -> GameResult:
    """Play one game with ``agents[seat]`` in each seat (seat 0 starts) and return its result.

    ``seed`` fixes the deal and every chance event; ``game_config`` holds the game's options (by
    default the rules' game for ``len(agents)`` players); ``agent_seeds[seat]`` is passed to that
    agent's ``start_game``. With ``log_path`` the game is saved as a replayable log
    (:func:`biblios_env.engine.log.load_log`) whose metadata holds the labels and seeds.
    """
    num_players = check_num_players(len(agents))
    labels = tuple(labels) if labels is not None else tuple(getattr(agent, "name", "?") for agent in agents)
    agent_seeds = tuple(agent_seeds) if agent_seeds is not None else (None,) * num_players
    if len(labels) != num_players or len(agent_seeds) != num_players:
        raise ValueError(f"{num_players} agents need {num_players} labels and agent seeds, got {labels}, {agent_seeds}")
    if game_config is None:
        game_config = GameConfig(num_players)
    elif game_config.num_players != num_players:
        raise ValueError(f"{num_players} agents cannot play a {game_config.num_players}-player game: {game_config}")
    game = Game.from_config(game_config, seed=seed)
    for seat, agent in enumerate(agents):
        try:
            agent.start_game(seat, num_players, seed=agent_seeds[seat])
        except AGENT_FAULTS as error:
            raise AgentError(
                f"agent {labels[seat]!r} in seat {seat} crashed starting the game (game seed {seed}): "
                f"{type(error).__name__}: {error}"
            ) from error
    decisions = [0] * num_players
    seconds = [0.0] * num_players

    def ask(seat: int, observation: AgentObservation) -> int:
        """The seat's agent's choice, timed and counted; AgentError naming the game if it crashes or
        answers with something that is not an action id."""
        start = time.perf_counter()
        try:
            action = agents[seat].act(observation)
        except AGENT_FAULTS as error:
            raise AgentError(
                f"agent {labels[seat]!r} in seat {seat} crashed (game seed {seed}, decision {sum(decisions)}): "
                f"{type(error).__name__}: {error}"
            ) from error
        seconds[seat] += time.perf_counter() - start
        decisions[seat] += 1
        if not is_action_id(action):
            raise AgentError(
                f"agent {labels[seat]!r} in seat {seat} (game seed {seed}) returned {action!r:.80}, "
                "not an int action id"
            )
        return int(action)

    try:
        play_out(game, ask, _view_feed(agents, labels, seed))
    except IllegalActionError as error:
        seat = game.current_player  # an illegal action leaves the game as it was: still that seat's turn
        raise AgentError(f"agent {labels[seat]!r} in seat {seat} (game seed {seed}): {error}") from error
    state = game.state
    if log_path is not None:
        metadata = {"agents": list(labels), "agent_seeds": list(agent_seeds), **(log_metadata or {})}
        save_log(game, log_path, **metadata)
    return GameResult(
        seed=game.seed,
        agents=labels,
        agent_seeds=agent_seeds,
        vp=tuple(state.vp),
        winners=tuple(state.winners),
        category_winners=tuple(state.category_winners),
        dice=tuple(state.dice),
        actions=len(game.history),
        decisions=tuple(decisions),
        seconds=tuple(seconds),
    )
