"""A Ray cluster of several nodes on this machine, on loopback only: for tests and benchmarks.

Owns ``loopback_cluster``: a head and worker nodes started as separate processes (each node its
own raylet) with Ray's cluster utilities, every address 127.0.0.1, no dashboard, small object
stores, and node failures noticed within a few seconds; the calling process is connected as the
driver. Leaving the block disconnects the driver and kills every node's processes, whatever
happened inside it, so no raylet outlives the caller. Not for production clusters: those are
started with ``ray start`` on each machine (see the README).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from bench.ray_executor import NAMESPACE, import_ray, keep_to_loopback

LOOPBACK = "127.0.0.1"

FAST_FAILURE_DETECTION = {
    "health_check_initial_delay_ms": 0,
    "health_check_period_ms": 500,
    "health_check_timeout_ms": 1000,
    "health_check_failure_threshold": 3,
}
"""Ray settings under which a lost node is declared dead in about two seconds (not fifteen)."""

OBJECT_STORE_BYTES = 80 * 2**20
"""Each node's object store: judge records and logs are small."""


@dataclass
class LoopbackCluster:
    """A running cluster: its head's address and the worker nodes (to kill one)."""

    cluster: Any
    """``ray.cluster_utils.Cluster``."""
    node_options: dict[str, Any]
    """How each worker node is started."""
    workers: list[Any] = field(default_factory=list)
    """The worker nodes, in start order."""

    @property
    def address(self) -> str:
        """The head's ``HOST:PORT``."""
        address: str = self.cluster.address
        return address

    def ensure_workers(self, count: int) -> None:
        """Start worker nodes until ``count`` are running (after one was killed)."""
        while len(self.workers) < count:
            self.workers.append(self.cluster.add_node(**self.node_options))
        self.cluster.wait_for_nodes()

    def kill_worker(self, index: int) -> None:
        """Kill worker node ``index`` at once (its raylet and everything it started)."""
        node = self.workers.pop(index)
        self.cluster.remove_node(node, allow_graceful=False)


@contextlib.contextmanager
def loopback_cluster(workers: int = 2, cpus_per_worker: float = 4) -> Iterator[LoopbackCluster]:
    """A head (no CPUs: it schedules no judge worker) and ``workers`` worker nodes; the caller
    is the driver inside the block."""
    keep_to_loopback()
    ray = import_ray()
    from ray.cluster_utils import Cluster

    node_options: dict[str, Any] = {
        "node_ip_address": LOOPBACK,
        "object_store_memory": OBJECT_STORE_BYTES,
    }
    cluster = Cluster(
        initialize_head=True,
        head_node_args={
            **node_options,
            "num_cpus": 0,
            "include_dashboard": False,
            "_system_config": FAST_FAILURE_DETECTION,
        },
    )
    try:
        running = LoopbackCluster(cluster, {**node_options, "num_cpus": cpus_per_worker})
        running.ensure_workers(workers)
        ray.init(
            address=cluster.address,
            _node_ip_address=LOOPBACK,
            namespace=NAMESPACE,
            log_to_driver=False,
            configure_logging=False,
        )
        yield running
    finally:
        with contextlib.suppress(Exception):
            ray.shutdown()
        cluster.shutdown()  # type: ignore[no-untyped-call]
