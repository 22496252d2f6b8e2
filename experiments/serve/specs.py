"""What an agent spec sent by a request may ask of the server (:class:`BotRules`), checked before
any bot is built.

* The registry's agents only, unless the server was started with ``--import-agents`` (an import
  path runs code the request names).
* No file: a spec's file parameters (:data:`agents.FILE_PARAMETERS`, such as ``network:path=``)
  are refused, unless the server was started with ``--policy-dir DIR``; then only ``.npz`` files
  inside ``DIR`` (the path resolved, so neither ``..`` nor a link leads out of it). A ``.npz``
  file holds arrays, read without pickle; a ``.zip`` policy (``ppo:path=FILE.zip``) is a pickle,
  which could run code: never loaded for a request.
* Numbers inside their ranges: the registry checks them (:data:`agents.HEURISTIC_RANGES`, the
  search options' ranges), so a tournament's command line gets the same refusal.
* Bounded thinking: a search (``ismcts``) gets ``--bot-seconds`` as its time limit per decision
  (or keeps a smaller one the spec gives). Such bots, and those of import paths (whose cost nobody
  knows), are :meth:`BotRules.slow`: their decisions take one of the server's thinking slots.

The spec's text stays the bot's label (in the view and in the log), so a restarted server, with
the same options, builds the same bot from its log.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from agents import FILE_PARAMETERS
from biblios_env.agent_interface import Agent
from experiments.common.match import AgentSpec, AgentSpecError, build_agent, parse_agent_spec, registry
from experiments.serve.errors import ApiError

#: Seconds a bot may think per decision, by default (``--bot-seconds``).
DEFAULT_BOT_SECONDS: Final = 10.0
#: The agents whose decisions are searches, bounded by a time limit.
SEARCH_AGENTS: Final = frozenset({"ismcts"})
#: The one kind of file a request may name: numpy arrays, read without pickle.
SAFE_SUFFIX: Final = ".npz"


def agent_choices() -> list[str]:
    """The registry's agent names, offered by name on the page and in errors."""
    return sorted(registry())


@dataclass(frozen=True, slots=True)
class BotRules:
    """How the server builds the bots that requests name: ``bot_seconds`` per decision, import
    paths allowed or not, and the folder of the files a spec may name (``None``: no file)."""

    bot_seconds: float = DEFAULT_BOT_SECONDS
    import_paths: bool = False
    policy_dir: Path | None = None

    def build(self, text: str) -> Agent:
        """The bot of the spec ``text``; ApiError 422 saying what is refused, naming the registry's
        agents."""
        try:
            return build_agent(self._checked(parse_agent_spec(text)))
        except AgentSpecError as error:
            raise ApiError(422, str(error), choices=agent_choices()) from error

    def slow(self, text: str) -> bool:
        """Whether the bot of ``text`` may think for seconds (a search, or code of an import path):
        its decisions wait for a thinking slot."""
        name = parse_agent_spec(text).name
        return name in SEARCH_AGENTS or "." in name

    def _checked(self, spec: AgentSpec) -> AgentSpec:
        if "." in spec.name and not self.import_paths:
            raise AgentSpecError(
                f"agent {spec.name!r} is an import path: this server builds only its registry's agents "
                f"({', '.join(agent_choices())}; start it with --import-agents to allow import paths)"
            )
        params = dict(spec.params)
        for key in FILE_PARAMETERS.get(spec.name, ()):
            if key in params:
                params[key] = str(self._policy_file(spec, key, params[key]))
        if spec.name in SEARCH_AGENTS:
            given = params.get("time_limit")
            number = isinstance(given, int | float) and not isinstance(given, bool) and math.isfinite(given)
            if given is None or (number and given > self.bot_seconds):
                params["time_limit"] = self.bot_seconds  # any other value is the options' to check and refuse
        return AgentSpec(spec.name, tuple(params.items()), label=spec.label)

    def _policy_file(self, spec: AgentSpec, key: str, value: Any) -> Path:
        """The file ``key=value`` names, inside the policy folder; AgentSpecError if it may not be loaded."""
        where = f"agent {spec.label!r}: {key}={value}"
        if self.policy_dir is None:
            raise AgentSpecError(
                f"{where} names a file: this server loads no file a request names "
                "(start it with --policy-dir DIR to allow the .npz files in DIR)"
            )
        if not str(value).endswith(SAFE_SUFFIX):
            raise AgentSpecError(
                f"{where}: only {SAFE_SUFFIX} files are loaded for a request (a .zip policy is a pickle, "
                "which could run code)"
            )
        folder = self.policy_dir.resolve()
        path = (folder / str(value)).resolve()
        if Path(str(value)).is_absolute() or not path.is_relative_to(folder):
            raise AgentSpecError(f"{where}: the file must be inside the server's policy folder (a relative path)")
        if not path.is_file():
            raise AgentSpecError(f"{where}: no such file in the server's policy folder")
        return path
