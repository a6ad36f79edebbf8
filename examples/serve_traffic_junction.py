#!/usr/bin/env python3
"""Plays TrafficJunction10 episodes against tagflow's inference service and prints actions/s and
the p50/p99 latency of an act request (all ten agents' actions from both gateways).

    tagflow up configs/marl-serve.yaml &           # two inference replicas with gateways
    /usr/bin/python3 examples/serve_traffic_junction.py --episodes 5

The env runs here, in Python (examples/traffic_junction.py); each step sends the ten observations
to the cluster's gateways (agents 0-4 to inference-0, 5-9 to inference-1) and applies the actions.
Needs python3-zmq, python3-msgpack, python3-numpy (Debian's, hence /usr/bin/python3: a python3 of
its own, such as pyenv's, does not see them). Exit status 0 when every episode finished;
1 with one line naming the error when the service refused a request or did not answer.
"""
import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "clients", "python"))

try:
    import numpy as np
    from tagflow_client import Client, GatewayError
    from traffic_junction import TrafficJunction
except ModuleNotFoundError as missing:
    # A python3 of its own (a virtualenv, pyenv) does not see Debian's packages.
    sys.exit(f"{sys.argv[0]}: {missing} for {sys.executable}: this example needs numpy, pyzmq and "
             "msgpack (Debian: apt install python3-numpy python3-zmq python3-msgpack, then run it "
             "with /usr/bin/python3; or pip install numpy pyzmq msgpack for this python)")


def curve_keys(directory, name):
    """The CURVE options of a client with key pair NAME in DIR (`tagflow keys generate DIR --name
    gateway --name NAME`): the gateway's public key and the client's pair, newlines stripped."""
    def read(file):
        with open(os.path.join(directory, file), encoding="ascii") as f:
            return f.read().strip()
    return {"server_public_key": read("gateway.pub"), "public_key": read(name + ".pub"),
            "secret_key": read(name + ".key")}


def wait_for_gateways(endpoints, seconds, curve):
    """Handshakes with every gateway until all answer (the cluster may still be starting)."""
    deadline = time.monotonic() + seconds
    while True:
        probe = Client(endpoints, timeout=2.0, curve=curve)
        try:
            probe.connect()
            return
        except TimeoutError as error:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{error} (waited --wait {seconds:g} s for every gateway)")
        finally:
            probe.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0].replace("\n", " "))
    parser.add_argument("--gateways", default="tcp://127.0.0.1:7830,tcp://127.0.0.1:7831",
                        help="comma-separated gateway endpoints (marl-serve.yaml's by default)")
    parser.add_argument("--episodes", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--log", action="store_true",
                        help="log the episodes as experience into the cluster's replays (needs "
                             "inference.experience connected, nodes/gateway/PROTOCOL.md)")
    parser.add_argument("--wait", type=float, default=60.0,
                        help="seconds to wait for the gateways to answer")
    parser.add_argument("--keys", metavar="DIR",
                        help="a CURVE gateway's key directory (gateway_keys): DIR/gateway.pub and "
                             "the client's pair DIR/NAME.pub, DIR/NAME.key (see --client)")
    parser.add_argument("--client", metavar="NAME", default="client",
                        help="the client key pair's name in --keys (one of gateway_clients; "
                             "default: client)")
    args = parser.parse_args()

    try:
        curve = curve_keys(args.keys, args.client) if args.keys else None
    except OSError as error:
        sys.exit(f"serve_traffic_junction.py: --keys {args.keys}: {error}")
    wait_for_gateways(args.gateways.split(","), args.wait, curve)
    client = Client(args.gateways.split(","), timeout=10.0, curve=curve)
    agents = client.connect()
    env = TrafficJunction(num_agents=10, seed=args.seed)
    if len(agents) != env.n or client.observation_size != env.observation_size:
        sys.exit(f"the gateways serve agents {sorted(agents)} of width {client.observation_size}; "
                 f"this env has {env.n} agents of width {env.observation_size}")
    print(f"connected: {len(agents)} agents, policies {sorted(set(agents.values()))}")

    latencies, actions_total = [], 0
    started = time.perf_counter()
    for episode_index in range(args.episodes):
        observations = env.reset()
        episode = client.episode_start(log=True if args.log else None)
        rewards, done, steps, collisions = None, False, 0, 0
        while not done:
            t0 = time.perf_counter()
            actions = client.act({a: observations[a] for a in range(env.n)}, episode=episode,
                                 rewards=rewards)
            latencies.append(time.perf_counter() - t0)
            actions_total += len(actions)
            observations, step_rewards, _, done = env.step([actions[a] for a in range(env.n)])
            collisions += int(np.sum(step_rewards <= -10.0))
            rewards = {a: float(step_rewards[a]) for a in range(env.n)}
            steps += 1
        summary = client.episode_end(episode, rewards=rewards)
        team = sum(summary["returns"].values())
        logged = f", {summary['logged']} transitions logged" if args.log else ""
        print(f"episode {episode_index}: {steps} steps, {collisions} collisions, "
              f"team return {team:.2f} (gateway counted {summary['steps']} steps{logged})")
    elapsed = time.perf_counter() - started
    p50, p99 = np.percentile(np.array(latencies) * 1e3, [50, 99])
    versions = sorted(set(client.last_versions.values()))
    print(f"{actions_total} agent actions in {elapsed:.2f} s: {actions_total / elapsed:.0f} "
          f"actions/s (env stepping included); act latency p50 {p50:.3f} ms, p99 {p99:.3f} ms; "
          f"weights versions {versions}")
    client.close()


if __name__ == "__main__":
    try:
        main()
    except (GatewayError, TimeoutError) as error:  # the service's refusal, or no answer
        sys.exit(f"serve_traffic_junction.py: {type(error).__name__}: {error}")
