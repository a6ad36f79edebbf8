"""Experience logging of the inference service against a live cluster (nodes/gateway/PROTOCOL.md
§4.3): a TrafficJunction4 cluster whose inference replica has a gateway and an `experience` port
linked to the replay of its one shared policy, and a learner whose weights flow back. The env node
drives the rounds (logical time), but sends no transitions of its own: everything the replay holds
comes from outside. The Python client plays logged episodes and one unlogged episode; the test
checks that the replay inserted exactly the logged transitions, that the learner made updates
from them (and its new weights reached the gateway), and that the run summary counts them as
`outside_transitions` with `digest_reproducible: false`.

Usage: serve_experience_test.py TAGFLOW_BINARY SOURCE_DIR WORK_DIR [reactor|actor]. Bounded: the
cluster's own `seconds` stop and a timeout on every wait. Exit status 0 on success.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.request

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__))))
from serve_example_test import free_ports  # noqa: E402

CONFIG = """
cluster: serve-experience
mode: {mode}
seed: 3
hosts:
  local: {{address: 127.0.0.1}}
coordinator: {{host: local, port: {p0}, metrics_port: {p1}}}
policies:
  car: {{hidden: "16"}}      # one policy shared by the four cars (input: observation + one-hot)
nodes:
  junction:
    kind: multi_agent
    host: local
    data_port: {p2}
    params: {{env: TrafficJunction4-v1, epsilon_start: 0.0, epsilon_end: 0.0, eval_episodes: 0}}
  inference:
    kind: inference
    host: local
    data_port: {p3}
    metrics_port: {p4}
    params: {{policies: all, gateway_port: {p5}}}
  replay:
    kind: replay
    host: local
    data_port: {p6}
    metrics_port: {p7}
    process: train
    params: {{policies: all, capacity: 1000, min_size: 16, samples_per_insert: 4, batch_size: 16}}
  learner:
    kind: learner
    host: local
    data_port: {p8}
    metrics_port: {p9}
    process: train
    params: {{policies: all, learning_rate: 0.001, target_update: 10}}
connections:
  - {{from: junction.observations, to: inference.observations}}
  - {{from: inference.actions, to: junction.actions, after: 0}}
  - {{from: inference.experience, to: replay.transitions}}
  - {{from: replay.batches, to: learner.batches}}
  - {{from: learner.priorities, to: replay.priorities, after: 0}}
  - {{from: learner.weights, to: inference.weights, after: 0}}
stop:
  env_steps: 1000000000
  seconds: {seconds}
"""

EPISODES, STEPS, AGENTS = 3, 10, 4


def metric(url, name):
    """The sum of every sample of `name` at url/metrics (0 when absent)."""
    with urllib.request.urlopen(f"{url}/metrics", timeout=5) as r:
        text = r.read().decode()
    return sum(float(v) for v in re.findall(rf"^{name}(?:{{[^}}]*}})? (\S+)$", text, re.M))


def wait_until(what, check, seconds):
    deadline = time.monotonic() + seconds
    while True:
        try:
            if check():
                return
        except OSError:
            pass  # the endpoint is not up yet
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.2)


def play(client, observation_size, log):
    """One episode of STEPS random steps of all agents; returns episode_end's summary."""
    rng = np.random.default_rng(7)
    episode = client.episode_start(log=log)
    rewards = None
    for step in range(STEPS):
        obs = {a: rng.standard_normal(observation_size).astype(np.float32) for a in range(AGENTS)}
        actions = client.act(obs, episode=episode, rewards=rewards)
        assert sorted(actions) == list(range(AGENTS)), actions
        if log:
            assert client.last_logged == step * AGENTS, (step, client.last_logged)
        rewards = {a: float(rng.standard_normal()) for a in range(AGENTS)}
    return client.episode_end(episode, rewards=rewards)


def main():
    binary, source, work = sys.argv[1], sys.argv[2], sys.argv[3]
    mode = sys.argv[4] if len(sys.argv) > 4 else "reactor"
    os.makedirs(work, exist_ok=True)
    base = free_ports(10)
    ports = {f"p{i}": base + i for i in range(10)}
    config = os.path.join(work, "serve-experience.yaml")
    with open(config, "w") as f:
        f.write(CONFIG.format(mode=mode, seconds=15, **ports))
    summary_path = os.path.join(work, "summary.json")
    if os.path.exists(summary_path):
        os.remove(summary_path)
    log = open(os.path.join(work, "up.log"), "w")
    # The run's own log directory: `tagflow up` refuses one an earlier run (of this test) used.
    shutil.rmtree(os.path.join(work, "logs"), ignore_errors=True)
    cluster = subprocess.Popen([binary, "up", config, "--quiet", "--summary", summary_path,
                                "--log-dir", os.path.join(work, "logs")],
                               stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    inference = f"http://127.0.0.1:{ports['p4']}"
    replay = f"http://127.0.0.1:{ports['p7']}"
    learner = f"http://127.0.0.1:{ports['p9']}"
    try:
        sys.path.insert(0, os.path.join(source, "clients", "python"))
        from tagflow_client import Client, GatewayError, http_health
        wait_until("the gateway to be ready", lambda: http_health(inference), 40)
        client = Client([f"tcp://127.0.0.1:{ports['p5']}"], timeout=10)
        agents = client.connect()
        assert sorted(agents) == list(range(AGENTS)), agents
        size = client.observation_size

        # Wrong use first: rewards for an agent with no open step.
        episode = client.episode_start(log=True)
        try:
            client.act({0: np.zeros(size, np.float32)}, episode=episode, rewards={1: 1.0})
            raise AssertionError("rewards for an agent without an open step were taken")
        except GatewayError as e:
            assert e.code == "not_in_step", e
        assert client.episode_end(episode)["logged"] == 0

        unlogged = play(client, size, log=False)
        assert unlogged["logged"] == 0 and unlogged["steps"] == STEPS, unlogged
        logged = 0
        for _ in range(EPISODES):
            summary = play(client, size, log=True)
            assert summary["logged"] == STEPS * AGENTS, summary
            logged += summary["logged"]
        print(f"logged {logged} transitions in {EPISODES} episodes")

        wait_until(f"the replay to insert {logged} transitions",
                   lambda: metric(replay, "tagflow_replay_transitions_inserted_total") >= logged,
                   40)
        wait_until("learner updates", lambda: metric(learner, "tagflow_learner_updates_total") > 0,
                   40)
        inserted = metric(replay, "tagflow_replay_transitions_inserted_total")
        assert inserted == logged, f"the replay inserted {inserted}, the clients logged {logged}"
        # The learner's weights reach the gateway: actions come from a newer version.
        wait_until("new weights at the gateway",
                   lambda: client.act({a: np.zeros(size, np.float32) for a in range(AGENTS)})
                   is not None and max(client.last_versions.values()) > 0, 40)
        client.close()
        cluster.wait(timeout=120)  # the run ends at its `seconds` stop
    finally:
        if cluster.poll() is None:
            os.killpg(cluster.pid, 15)
            try:
                cluster.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(cluster.pid, 9)
                cluster.wait()
        log.close()
    assert cluster.returncode == 0, open(os.path.join(work, "up.log")).read()[-3000:]
    summary = json.load(open(summary_path))
    assert summary["outside_transitions"] == logged, summary
    assert summary["digest_reproducible"] is False, summary
    assert summary["nodes"]["replay"]["count"] == logged, summary["nodes"]
    assert summary["updates"] > 0, summary
    print("ok")


if __name__ == "__main__":
    main()
