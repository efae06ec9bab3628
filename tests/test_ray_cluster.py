"""emurust.ray on a simulated two-node Ray cluster (ray.cluster_utils.Cluster: a head and one
worker node as separate raylets on this machine): actors spread over both nodes give the local
batch's results, and losing the worker node mid-run restores its actor on the head."""

import os
import pathlib
import subprocess
import sys
import time

import numpy as np
import pytest

import ray
from ray.cluster_utils import Cluster

from emurust.ray import RESTARTED, RESTORED_FROM, RayVecEnv
from emurust.sb3 import EmurustVecEnv

# Ray workers keep PyTorch from loading Triton, as the test process does (see emurust._triton).
WORKER_ENV = {"worker_process_setup_hook": "emurust._triton.keep_triton_unloaded"}

ROOT = pathlib.Path(__file__).resolve().parent.parent
KW = dict(rom=str(ROOT / "games" / "dodge.gb"), obs="grey_half", frame_skip=8, noop_max=0,
          reset_script=[("noop", 10), ("start", 2), ("noop", 12)])


@pytest.fixture(scope="module")
def cluster():
    # Fast node-failure detection, so the lost node's actor is reported dead within seconds.
    fast = {"health_check_period_ms": 500, "health_check_failure_threshold": 3, "health_check_initial_delay_ms": 0}
    # The head has a spare CPU: the worker node's actor is restarted there when that node is lost.
    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 2, "include_dashboard": False, "_system_config": fast})
    worker = c.add_node(num_cpus=1)
    ray.init(address=c.address, logging_level="ERROR", log_to_driver=False, runtime_env=WORKER_ENV)
    c.wait_for_nodes()
    yield c, worker
    ray.shutdown()
    c.shutdown()


@pytest.mark.parametrize("framework,args", [
    ("sb3", ["--steps", "384"]),
    ("rllib", ["--iterations", "2", "--batch", "192"]),
])
def test_the_example_script_runs_on_the_cluster_given_its_address(cluster, framework, args, tmp_path):
    """examples/ray_ppo.py, the script docs/ray.md runs on a laptop and on a cluster, trains on
    this two-node cluster with only --address added: 3 one-CPU actors (or env runners) need
    both nodes (the head has 2 CPUs). Runs before the node-loss test below (same cluster)."""
    c, _ = cluster
    cmd = [sys.executable, str(ROOT / "examples" / "ray_ppo.py"), framework, "--address", c.address,
           "--actors", "3", "--envs", "2", "--threads", "1", *args]
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    env["SB3_LOGDIR"] = str(tmp_path)  # SB3's default logger folder, instead of a new one in /tmp
    out = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert f"{framework}: " in out.stdout and "environment steps/s" in out.stdout, out.stdout[-2000:]
    # It joined this cluster (Ray logs the address it connects to), not a Ray of its own.
    assert f"Connecting to existing Ray cluster at address: {c.address}" in out.stderr, out.stderr[-2000:]


def test_two_nodes_spread_identical_results_and_node_loss(cluster):
    c, worker = cluster
    head_id = c.head_node.node_id
    local = EmurustVecEnv(4, **KW)
    remote = RayVecEnv(2, 2, 1, checkpoint_every=2, start_timeout=60, step_timeout=60, **KW)
    try:
        nodes = remote.actor_nodes
        assert set(nodes) == {head_id, worker.node_id}, nodes  # one actor on each node
        lost = nodes.index(worker.node_id)
        local.seed(3)
        remote.seed(3)
        assert np.array_equal(local.reset(), remote.reset())
        acts = np.random.default_rng(0).integers(0, 8, size=(8, 4))
        for t, a in enumerate(acts):
            if t == 5:
                c.remove_node(worker)  # the worker node is lost between two steps
            t0 = time.monotonic()
            o1, r1, d1, _ = local.step(a)
            o2, r2, d2, i2 = remote.step(a)
            assert np.array_equal(o1, o2) and np.array_equal(r1, r2) and np.array_equal(d1, d2), t
            rows = [2 * lost, 2 * lost + 1]
            if t == 5:
                assert time.monotonic() - t0 < 60
                for i in rows:
                    assert i2[i][RESTARTED] and i2[i][RESTORED_FROM] == "checkpoint"
            else:
                assert not any(RESTARTED in i for i in i2)
        assert remote.actor_nodes == [head_id, head_id]
    finally:
        remote.close()
