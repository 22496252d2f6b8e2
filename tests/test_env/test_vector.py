"""The batched games (``biblios_env.vector.VectorGame``) against the PettingZoo env, game by game.

* **Differential**: seeded batches of every player count, both penalties, strict bids, the mini
  preset, exposed forced moves, with thousands of autoresets: at every step each slot's acting
  seat, observation (byte for byte), mask, and at each game's end its rewards and result equal
  those of a ``raw_env`` dealt with the slot's seed and stepped with the same actions.
* **Seeds**: a slot's games do not depend on the batch size; ``reset(seed)`` replays them.
* **Bad input**: wrong shapes, dtypes, out-of-range and illegal actions are refused before any
  game changes, naming the game, seat, action and legal actions.
* **Checkpoints**: a restored VectorGame continues exactly as the original.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from biblios_env import raw_env
from biblios_env.engine.game import IllegalActionError
from biblios_env.observations import OBSERVATION_SCALE, OBSERVATION_SIZE, STATE_SIZE
from biblios_env.vector import VectorGame, deal_seed


def random_actions(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random legal action per row of ``mask``."""
    return np.argmax(rng.random(mask.shape) * mask, axis=1)


class ReferenceGames:
    """One ``raw_env`` per slot, dealt with the slot's seed, stepped with the slot's actions."""

    def __init__(self, games: VectorGame, **options: object) -> None:
        self.envs = [raw_env(games.num_players, **options) for _ in range(games.num_games)]
        self.games_finished = 0

    def deal(self, slot: int, seed: int) -> None:
        self.envs[slot].reset(seed=int(seed))

    def check(self, games: VectorGame) -> None:
        """Every slot's acting seat, observation and mask equal the env's."""
        batch = games.batch
        for slot, env in enumerate(self.envs):
            seat = env.possible_agents.index(env.agent_selection)
            assert batch.current_player[slot] == seat, f"slot {slot}"
            observed = env.observe(env.agent_selection)
            assert batch.observation[slot].tobytes() == observed["observation"].tobytes(), f"slot {slot}"
            assert np.array_equal(batch.action_mask[slot], observed["action_mask"]), f"slot {slot}"

    def step(self, games: VectorGame, actions: np.ndarray, stepped: np.ndarray) -> None:
        """Step the stepped slots' envs; where a game ends, its result must be the batch's."""
        batch = games.batch
        for slot in np.flatnonzero(stepped):
            env = self.envs[slot]
            env.step(int(actions[slot]))
            ended = all(env.terminations.values())
            assert bool(batch.terminated[slot]) == ended, f"slot {slot}"
            if ended:
                self.games_finished += 1
                expected = [env.rewards[agent] for agent in env.possible_agents]
                assert batch.rewards[slot].tolist() == pytest.approx(expected)
                info = env.infos[env.possible_agents[0]]
                assert batch.final_vp[slot].tolist() == info["vp"]
                assert np.flatnonzero(batch.winners[slot]).tolist() == info["winners"]
                self.deal(slot, batch.seeds[slot])
        assert not batch.terminated[~stepped].any()


GAME_OPTIONS = [
    pytest.param(2, {}, id="2p"),
    pytest.param(3, {}, id="3p"),
    pytest.param(4, {}, id="4p"),
    pytest.param(2, {"penalty": "bluffs"}, id="2p-bluffs"),
    pytest.param(3, {"penalty": "bluffs", "strict_bids": True}, id="3p-bluffs-strict"),
    pytest.param(4, {"strict_bids": True, "first_player": 2}, id="4p-strict-first2"),
    pytest.param(2, {"preset": "mini"}, id="2p-mini"),
    pytest.param(2, {"preset": "small"}, id="2p-small"),
    pytest.param(3, {"expose_forced": True, "reward": "vp"}, id="3p-forced-vp"),
]


@pytest.mark.parametrize(("num_players", "options"), GAME_OPTIONS)
def test_every_step_equals_the_pettingzoo_env(num_players: int, options: dict[str, object]) -> None:
    games = VectorGame(5, num_players, seed=11, **options)  # type: ignore[arg-type]
    reference = ReferenceGames(games, **options)
    rng = np.random.default_rng(3)
    batch = games.reset()
    for slot in range(games.num_games):
        reference.deal(slot, batch.seeds[slot])
    while reference.games_finished < 12:
        reference.check(games)
        actions = random_actions(batch.action_mask, rng)
        stepped = rng.random(games.num_games) < 0.8  # some games sit out some steps
        batch = games.step(actions, active=stepped)
        reference.step(games, actions, stepped)
    reference.check(games)


def test_thousands_of_autoresets_keep_every_game_consistent() -> None:
    games = VectorGame(1, 2, seed=5, preset="mini")  # mini games are a handful of decisions
    rng = np.random.default_rng(0)
    batch = games.reset()
    finished, lengths = 0, []
    seeds = {int(batch.seeds[0])}
    while finished < 2000:
        batch = games.step(random_actions(batch.action_mask, rng))
        if batch.terminated[0]:
            finished += 1
            lengths.append(int(batch.game_length[0]))
            assert batch.seeds[0] == deal_seed(5, 0, finished)
            seeds.add(int(batch.seeds[0]))
        assert batch.action_mask[0].any()
    assert len(seeds) == finished + 1
    assert min(lengths) >= 1


def test_a_slots_games_do_not_depend_on_the_batch_size() -> None:
    small, large = VectorGame(2, 3, seed=9), VectorGame(6, 3, seed=9)
    assert small.reset().seeds.tolist() == large.reset().seeds[:2].tolist()
    assert [deal_seed(9, slot, 0) for slot in range(6)] == large.batch.seeds.tolist()
    assert np.array_equal(small.batch.observation, large.batch.observation[:2])


def test_reset_with_the_seed_replays_and_without_it_deals_the_next_games() -> None:
    games = VectorGame(3, 2, seed=4)
    first = games.reset().copy()
    second = games.reset().copy()
    assert second.seeds.tolist() == [deal_seed(4, slot, 1) for slot in range(3)]
    again = games.reset(seed=4)
    assert again.seeds.tolist() == first.seeds.tolist()
    assert np.array_equal(again.observation, first.observation)
    assert not np.array_equal(second.observation, first.observation)


def test_observe_gives_each_seats_observation_and_state_tensor_the_envs_state() -> None:
    games = VectorGame(4, 3, seed=2)
    rng = np.random.default_rng(1)
    batch = games.reset()
    for _ in range(40):
        batch = games.step(random_actions(batch.action_mask, rng))
    envs = []
    for slot in range(4):
        env = raw_env(3, expose_forced=True)  # the history holds the forced actions too
        env.reset(seed=int(batch.seeds[slot]))
        for action in games.game(slot).history:
            env.step(action)
        envs.append(env)
    for seat in range(3):
        observed = games.observe(seat)
        assert observed.shape == (4, OBSERVATION_SIZE)
        for slot, env in enumerate(envs):
            assert observed[slot].tobytes() == env.observe(f"player_{seat}")["observation"].tobytes()
    state = games.state_tensor()
    assert state.shape == (4, STATE_SIZE)
    for slot, env in enumerate(envs):
        assert np.array_equal(state[slot], env.state())
    with pytest.raises(ValueError, match=r"seat must be a seat in 0\.\.2, got 3"):
        games.observe(3)


def test_the_batch_is_overwritten_in_place_and_copy_keeps_a_snapshot() -> None:
    games = VectorGame(2, 2, seed=0)
    batch = games.reset()
    snapshot = batch.copy()
    after = games.step(random_actions(batch.action_mask, np.random.default_rng(0)))
    assert after is batch
    assert not np.array_equal(snapshot.observation, after.observation)


def test_observations_not_read_for_several_partial_steps_catch_up_when_read() -> None:
    """The float32 observation is converted on read, only in the rows that changed: steps of a
    few games each, with only the masks read in between, must leave it equal to the observation
    of a twin batch read after every step, and to the counts times the scale."""
    lazy, eager = VectorGame(6, 3, seed=8), VectorGame(6, 3, seed=8)
    batch, _ = lazy.reset(), eager.reset()
    rng = np.random.default_rng(4)
    for round_number in range(30):
        actions = random_actions(batch.action_mask, rng)
        active = np.zeros(6, bool)
        active[rng.choice(6, size=2, replace=False)] = True  # two games a step, different ones
        batch = lazy.step(actions, active=active)
        eager.step(actions, active=active).observation.sum()  # read at every step
        if round_number % 5 == 4:
            assert batch.observation.tobytes() == eager.batch.observation.tobytes()
            assert np.array_equal(batch.observation, lazy.observation_counts() * OBSERVATION_SCALE)


def test_the_views_of_the_games_buffers_are_read_only() -> None:
    """The masks and counts are views of the buffers the steps write: writing them would let a
    caller change what the legality check reads, so numpy refuses."""
    games = VectorGame(2, 2, seed=0)
    batch = games.reset()
    with pytest.raises(ValueError, match="read-only"):
        batch.action_mask[0, 0] = 1
    with pytest.raises(ValueError, match="read-only"):
        games.observation_counts()[0, 0] = 1
    assert batch.copy().action_mask.flags.writeable


# ----------------------------------------------------------------------------- bad input
def _stepped_games() -> tuple[VectorGame, np.ndarray]:
    games = VectorGame(3, 2, seed=1)
    batch = games.reset()
    return games, random_actions(batch.action_mask, np.random.default_rng(0))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda a: a[:2], r"actions must have shape \(3,\), one per game, got \(2,\)"),
        (lambda a: a.astype(float), "actions must be integer action ids, got dtype float64"),
        (lambda a: a.astype(bool), "actions must be integer action ids, got dtype bool"),
        (lambda a: np.where(np.arange(3) == 1, 266, a), r"game 1: action 266 is not an action id in 0..265"),
        (lambda a: np.where(np.arange(3) == 2, -1, a), r"game 2: action -1 is not an action id in 0..265"),
    ],
)
def test_bad_actions_are_a_value_error_and_change_nothing(change, message) -> None:  # type: ignore[no-untyped-def]
    games, actions = _stepped_games()
    before = games.batch.copy()
    histories = [list(games.game(slot).history) for slot in range(3)]
    with pytest.raises(ValueError, match=message):
        games.step(change(actions))
    assert np.array_equal(games.batch.observation, before.observation)
    assert [list(games.game(slot).history) for slot in range(3)] == histories


def test_an_illegal_action_names_game_seat_action_and_legal_ones_before_any_game_changes() -> None:
    games, actions = _stepped_games()
    histories = [list(games.game(slot).history) for slot in range(3)]
    illegal = int(np.flatnonzero(games.batch.action_mask[2] == 0)[0])
    actions[2] = illegal
    seat = int(games.batch.current_player[2])
    with pytest.raises(
        IllegalActionError, match=rf"game 2: action {illegal} \(.*\) is not legal for seat {seat}; legal: "
    ):
        games.step(actions)
    assert [list(games.game(slot).history) for slot in range(3)] == histories  # games 0 and 1 untouched too


def test_other_bad_arguments_are_named() -> None:
    with pytest.raises(ValueError, match="num_games must be a positive int, got 0"):
        VectorGame(0)
    with pytest.raises(ValueError, match="reward must be one of 'win', 'vp', got 'score'"):
        VectorGame(2, reward="score")
    with pytest.raises(ValueError, match="num_players"):
        VectorGame(2, 5)
    games = VectorGame(2, 2, seed=0)
    with pytest.raises(RuntimeError, match=r"call reset\(\) before step\(\)"):
        games.step(np.zeros(2, int))
    games.reset()
    with pytest.raises(ValueError, match="active must be a bool array"):
        games.step(np.zeros(2, int), active=np.ones(2, int))


def test_a_batch_of_one_game() -> None:
    games = VectorGame(1, 4, seed=3)
    batch = games.reset()
    rng = np.random.default_rng(0)
    ended = 0
    while ended < 2:
        batch = games.step(random_actions(batch.action_mask, rng))
        ended += int(batch.terminated[0])
    assert batch.observation.shape == (1, OBSERVATION_SIZE)


# ----------------------------------------------------------------------------- checkpoints
def test_a_restored_checkpoint_continues_exactly_as_the_original() -> None:
    games = VectorGame(3, 3, seed=8)
    rng = np.random.default_rng(2)
    batch = games.reset()
    for _ in range(300):
        batch = games.step(random_actions(batch.action_mask, rng))
    checkpoint = json.loads(json.dumps(games.checkpoint()))  # survives JSON
    restored = VectorGame(3, 3, seed=0)
    restored.restore(checkpoint)
    assert restored.decisions == games.decisions
    for _ in range(400):
        actions = random_actions(games.batch.action_mask, rng)
        expected = games.step(actions).copy()
        got = restored.step(actions)
        for name in ("observation", "action_mask", "terminated", "rewards", "seeds", "game_length"):
            assert np.array_equal(getattr(got, name), getattr(expected, name)), name


def test_a_checkpoint_of_other_games_is_refused() -> None:
    checkpoint = VectorGame(3, 3, seed=8).checkpoint()
    with pytest.raises(ValueError, match="the checkpoint's config is"):
        VectorGame(3, 2, seed=8).restore(checkpoint)
    with pytest.raises(ValueError, match="the checkpoint holds 3 games, this VectorGame plays 4"):
        VectorGame(4, 3, seed=8).restore(checkpoint)


def test_a_lazy_step_encodes_its_positions_only_when_they_are_read() -> None:
    """``step(..., eager=False)`` writes the masks at once and leaves the stepped games'
    observation rows for the next read, so a position where only the masks are read (an opponent
    playing uniformly at random) is never encoded; eager steps (the default) and lazy ones mixed,
    whichever is read next, the counts or the observation, every row is the acting seat's current
    observation. The core's bookkeeping is pinned: which slots wait, and that a read empties the
    queue."""
    from biblios_env.observations import encode_state_counts

    games = VectorGame(5, 3, seed=12)
    batch = games.reset()
    core = games._core
    assert core.waiting == [] and bytes(core.unwritten) == bytes(5)  # a deal is encoded at once
    rng = np.random.default_rng(2)
    for round_number in range(40):
        active = np.zeros(5, bool)
        active[[round_number % 5, (round_number + 2) % 5]] = True
        waiting_before = set(core.waiting)
        eager = round_number % 4 == 3
        batch = games.step(random_actions(batch.action_mask, rng), active=active, eager=eager)
        stepped = set(np.flatnonzero(active).tolist())
        assert set(core.waiting) == waiting_before | (set() if eager else stepped)
        assert len(core.waiting) == sum(core.unwritten)
        if round_number % 7 == 6:  # several steps with only the masks read, then one read
            read = games.observation_counts() if round_number % 2 else batch.observation / OBSERVATION_SCALE
            assert core.waiting == []
            for slot in range(5):
                state = games.game(slot).state
                expected = np.frombuffer(encode_state_counts(state, state.current_player), np.uint8)
                assert np.array_equal(np.rint(read[slot]).astype(np.uint8), expected)
