"""The numpy network (agents.network) and the network agent: files round-trip, a file made for
another observation/action layout is refused, the mask is applied at every decision, and the
sparse first layer computes exactly what the dense one does."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

from agents.network import NETWORK_FORMAT, NumpyNetwork
from agents.network_agent import SHIPPED_NETWORKS, NetworkAgent
from agents.random_agent import RandomAgent
from biblios_env.actions import NUM_ACTIONS
from biblios_env.agent_interface import AgentObservation
from biblios_env.engine import Game
from biblios_env.engine.views import player_view
from biblios_env.layout import LAYOUT_FINGERPRINT, LayoutMismatchError
from biblios_env.observations import OBSERVATION_SIZE, encode_state


def random_network(seed: int = 0, hidden: tuple[int, ...] = (32, 16), shared: bool = True) -> NumpyNetwork:
    rng = np.random.default_rng(seed)

    def layer(inputs: int, outputs: int) -> tuple[np.ndarray, np.ndarray]:
        return rng.normal(0, 0.3, (outputs, inputs)).astype(np.float32), rng.normal(0, 0.1, outputs).astype(np.float32)

    widths = [OBSERVATION_SIZE, *hidden]
    chain = [layer(a, b) for a, b in itertools.pairwise(widths)]
    if shared:
        return NumpyNetwork(chain, [layer(widths[-1], NUM_ACTIONS)], [layer(widths[-1], 8), layer(8, 1)])
    return NumpyNetwork(
        [], [*chain, layer(widths[-1], NUM_ACTIONS)], [*chain, layer(widths[-1], 1)], value_kind="return"
    )


def observations(count: int = 20) -> list[tuple[np.ndarray, np.ndarray]]:
    game, rng, found = Game(3, seed=5), np.random.default_rng(1), []
    while not game.is_over and len(found) < count:
        legal = game.legal_actions()
        mask = np.zeros(NUM_ACTIONS, np.int8)
        mask[legal] = 1
        found.append((encode_state(game.state, game.current_player), mask))
        game.apply(legal[int(rng.integers(len(legal)))])
    return found


@pytest.mark.parametrize("shared", [True, False])
def test_file_round_trip_keeps_every_output(tmp_path, shared: bool) -> None:
    network = random_network(shared=shared)
    network.metadata["players"] = [2, 3]
    loaded = NumpyNetwork.load(network.save(tmp_path / "net.npz"))
    assert loaded.metadata["players"] == [2, 3]
    for observation, _ in observations(5):
        np.testing.assert_allclose(loaded.logits(observation), network.logits(observation), rtol=1e-6)
        assert loaded.predict_value(observation) == pytest.approx(network.predict_value(observation))


def test_single_observations_use_the_sparse_path_exactly() -> None:
    network = random_network()
    batch = np.stack([observation for observation, _ in observations(8)])
    one_by_one = np.stack([network.logits(observation) for observation in batch])
    np.testing.assert_allclose(one_by_one, network.logits(batch), rtol=1e-5, atol=1e-5)


def test_win_share_values_lie_in_zero_one() -> None:
    network = random_network()
    values = [network.predict_value(observation) for observation, _ in observations(10)]
    assert all(0.0 <= value <= 1.0 for value in values)


def test_a_file_for_another_layout_is_refused(tmp_path) -> None:
    path = random_network().save(tmp_path / "net.npz")
    with np.load(path) as data:
        arrays = {name: data[name] for name in data.files}
    meta = json.loads(str(arrays.pop("meta")))
    assert meta["layout"] == LAYOUT_FINGERPRINT and meta["format"] == NETWORK_FORMAT
    meta["layout"] = "biblios_v0-000000000000"
    np.savez(tmp_path / "old.npz", meta=np.array(json.dumps(meta)), **arrays)
    with pytest.raises(LayoutMismatchError, match="biblios_v0-000000000000"):
        NumpyNetwork.load(tmp_path / "old.npz")
    with pytest.raises(LayoutMismatchError):
        NetworkAgent(tmp_path / "old.npz")


def test_bad_shapes_and_files_are_named(tmp_path) -> None:
    good = random_network()
    with pytest.raises(ValueError, match="policy head must end in 266"):
        NumpyNetwork(good.trunk and [(w.T, b) for w, b in good.trunk], [(np.zeros((5, 16)), np.zeros(5))])
    (tmp_path / "junk.npz").write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="cannot read network file"):
        NumpyNetwork.load(tmp_path / "junk.npz")
    with pytest.raises(ValueError, match="no network file"):
        NetworkAgent(tmp_path / "missing.npz")


@pytest.mark.parametrize("deterministic", [True, False])
def test_the_mask_is_applied_at_every_decision(deterministic: bool) -> None:
    """A network that prefers an action that is almost never legal still plays only legal moves."""
    network = random_network()
    _, bias = network.policy[0]
    bias[:] = -5.0
    bias[244] = 50.0  # REFUSE: legal only at some payments
    agent = NetworkAgent.from_network(network, deterministic=deterministic)
    for num_players in (2, 3, 4):
        game = Game(num_players, seed=num_players)
        players = [agent] + [RandomAgent() for _ in range(num_players - 1)]
        for seat, player in enumerate(players):
            player.start_game(seat, num_players, seed=seat)
        while not game.is_over:
            seat, legal = game.current_player, game.legal_actions()
            action = players[seat].act(AgentObservation(player_view(game.state, seat), list(legal)))
            assert action in legal
            game.apply(action)


@pytest.mark.parametrize("players", [2, 3, 4])
def test_the_shipped_network_plays_legal_games_at_every_count_it_claims(players: int) -> None:
    """``make_agent("network")`` picks the shipped file for the player count when the game starts;
    the file says which counts it was trained for, and the agent plays whole games (the engine
    raises on any illegal action) against the heuristics."""
    from agents import make_agent
    from experiments.common.match import play_game

    shipped = SHIPPED_NETWORKS[players]
    assert shipped.is_file(), f"{shipped} is missing"
    assert players in NumpyNetwork.load(shipped).metadata["players"]
    for seed in range(2):
        lineup = [make_agent("network"), make_agent("value"), *[RandomAgent() for _ in range(players - 2)]]
        result = play_game(lineup, seed, agent_seeds=list(range(players)))
        assert len(result.vp) == players


def test_acting_for_a_batch_the_shipped_agent_picks_the_network_by_the_observations_count() -> None:
    """A batch agent may never be started: the ``num_players`` piece of the observations picks
    the shipped file, as the player count does when a game starts; mixed counts are refused."""
    from agents.network_agent import load_network, player_count, shipped_network

    batches = {}
    for players in (2, 3, 4):
        game = Game(players, seed=players)
        batches[players] = np.stack([encode_state(game.state, seat) for seat in range(players)]), game
    for players, (observations, game) in batches.items():
        assert player_count(observations) == players
        mask = np.zeros((len(observations), NUM_ACTIONS), bool)
        mask[:, game.legal_actions()] = True
        expected = shipped_network(players).choose_batch(observations, mask, True, np.random.default_rng(0))
        assert NetworkAgent().act_batch(observations, mask).tolist() == expected.tolist()
    assert len({id(shipped_network(players)) for players in (2, 3, 4)}) == len(set(SHIPPED_NETWORKS.values()))
    assert shipped_network(3) is load_network(SHIPPED_NETWORKS[3])
    with pytest.raises(ValueError, match=r"one player count, got \[2, 3\]"):
        player_count(np.concatenate([batches[2][0], batches[3][0]]))


def test_the_shipped_network_is_small_and_decides_well_under_a_millisecond() -> None:
    """The issue's budget is 1 ms a decision; the bound here is loose because CI machines are
    shared (the measured figure is in docs/policies.md)."""
    import time

    shipped = SHIPPED_NETWORKS[2]
    assert shipped.stat().st_size < 2_000_000
    agent = NetworkAgent(shipped)
    agent.start_game(0, 2, seed=0)
    game, rng, found = Game(2, seed=5), np.random.default_rng(1), []
    while not game.is_over and len(found) < 60:
        seat, legal = game.current_player, game.legal_actions()
        found.append(AgentObservation(player_view(game.state, seat), legal, encode_state(game.state, seat)))
        game.apply(legal[int(rng.integers(len(legal)))])
    start = time.perf_counter()
    for observation in found:
        assert agent.act(observation) in observation.legal_actions
    assert (time.perf_counter() - start) / len(found) < 0.005
