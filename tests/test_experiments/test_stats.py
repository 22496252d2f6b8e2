"""Win-rate intervals are proportions: they stay inside [0, 1] and contain their estimate, so
``estimate - low`` and ``high - estimate`` are never negative (matplotlib's error bars reject
a negative length, which is how notebook 02 crashed on a 10-deal tournament with ``random``)."""

from __future__ import annotations

import itertools

import pytest

from experiments.common.stats import Interval, cluster_win_interval, wilson_interval


def assert_well_formed(interval: Interval) -> None:
    assert 0.0 <= interval.low <= interval.estimate <= interval.high <= 1.0, interval


def test_an_agent_that_never_wins_ten_deals_has_a_lower_bound_of_exactly_zero() -> None:
    """The reported case: 0 wins over 10 deals of 2 games gave a lower bound of 2.8e-17 above 0.0."""
    interval = cluster_win_interval([(0.0, 2)] * 10)
    assert interval.estimate == 0.0
    assert interval.low == 0.0
    assert interval.estimate - interval.low >= 0.0


def test_an_agent_that_always_wins_has_an_upper_bound_of_exactly_one() -> None:
    interval = cluster_win_interval([(2.0, 2)] * 10)
    assert interval.estimate == 1.0
    assert interval.high == 1.0


@pytest.mark.parametrize("trials", [1, 2, 3, 7, 10, 20, 33, 50, 99, 100, 200, 1000])
def test_wilson_intervals_contain_their_estimate_inside_zero_one(trials: int) -> None:
    for successes in range(trials + 1):
        assert_well_formed(wilson_interval(successes, trials))
        assert_well_formed(wilson_interval(successes / 2, trials))  # shared wins count fractionally


def test_cluster_intervals_contain_their_estimate_inside_zero_one() -> None:
    """Every small pattern of per-deal wins, including the degenerate ones that fall back to Wilson."""
    for deals in (2, 3, 5, 10):
        for wins in itertools.product((0.0, 0.5, 1.0, 2.0), repeat=min(deals, 4)):
            clusters = [(wins[index % len(wins)], 2) for index in range(deals)]
            assert_well_formed(cluster_win_interval(clusters))


def test_an_empty_interval_is_nan_not_a_crash() -> None:
    interval = wilson_interval(0, 0)
    assert all(value != value for value in (interval.estimate, interval.low, interval.high))  # NaN
