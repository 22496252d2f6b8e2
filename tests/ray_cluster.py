"""A Ray cluster of two nodes simulated on this machine, for the tests that check work really
spreads over nodes (import with ``from ray_cluster import two_node_cluster``)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from optional_extras import require


@contextmanager
def two_node_cluster() -> Iterator[Any]:
    """A head and a worker node of one CPU each (``ray.cluster_utils.Cluster``), this process
    connected to it (any Ray it was connected to before is shut down first); yields ``ray``, and
    shuts both down on exit."""
    ray = require("ray")
    from ray.cluster_utils import Cluster

    ray.shutdown()
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    cluster.add_node(num_cpus=1)
    try:
        ray.init(address=cluster.address, log_to_driver=False)
        cluster.wait_for_nodes()
        yield ray
    finally:
        ray.shutdown()
        cluster.shutdown()
