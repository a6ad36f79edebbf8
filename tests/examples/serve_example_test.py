"""The inference service example against a live cluster: configs/marl-serve.yaml on free ports
under `tagflow up`, examples/serve_traffic_junction.py playing two episodes through both gateways,
then the health probes over HTTP; the cluster is stopped with SIGTERM at the end. In reactor mode
the gateways listen on `::` (every interface, IPv6 and IPv4), and a client reaches one over IPv6;
in actor mode they are CURVE servers, and the example and the clients connect with a client key.

Usage: serve_example_test.py TAGFLOW_BINARY SOURCE_DIR WORK_DIR [reactor|actor] (the cluster's
mode; reactor by default). Bounded: the cluster's own `seconds` stop and a timeout on every wait.
Exit status 0 on success.
"""
import fcntl
import os
import random
import shutil
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request


# Open files whose flock keeps this process's port blocks claimed until it ends.
_claims = []


def claim_port_blocks(first, count):
    """Claims the 100-port blocks [first, first + count) touches, as common/loopback_ports.hpp's
    claim_port_blocks does (the same lock files), so that programs choosing at once never choose
    the same ports; False, claiming nothing, when another process holds one."""
    directory = os.path.join(tempfile.gettempdir(), "tagflow-ports")
    os.makedirs(directory, exist_ok=True)
    held = []
    for block in range(first // 100, (first + count - 1) // 100 + 1):
        f = open(os.path.join(directory, str(block)), "a")
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            f.close()
            for h in held:
                h.close()
            return False
        held.append(f)
    _claims.extend(held)
    return True


def free_ports(count):
    """`count` (at most 100) consecutive free loopback ports, claimed for this process: a
    random block from 20000 up to the kernel's ephemeral range, as free_loopback_port_range in
    common/loopback_ports.hpp chooses."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            floor = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        floor = 32768
    blocks = max(1, (floor - count - 20000) // 100)
    rng = random.Random(os.getpid() ^ time.monotonic_ns())
    for _ in range(200):
        base = 20000 + rng.randrange(blocks) * 100
        sockets = []
        try:
            for port in range(base, base + count):
                s = socket.socket()
                s.bind(("127.0.0.1", port))
                sockets.append(s)
        except OSError:
            continue
        finally:
            for s in sockets:
                s.close()
        if claim_port_blocks(base, count):
            return base
    raise RuntimeError("no free ports")


def main():
    binary, source, work = sys.argv[1], sys.argv[2], sys.argv[3]
    mode = sys.argv[4] if len(sys.argv) > 4 else "reactor"
    os.makedirs(work, exist_ok=True)
    text = open(os.path.join(source, "configs", "marl-serve.yaml")).read()
    base = free_ports(12)
    # Every port of the file moves to the free range; the run lasts until stopped (at most 120 s).
    mapping = {7800: base, 9660: base + 1, 7810: base + 2, 9670: base + 3, 7820: base + 4,
               9680: base + 6, 7830: base + 8}
    for old, new in mapping.items():
        text, n = re.subn(rf"\b{old}\b", str(new), text)
        assert n >= 1, f"configs/marl-serve.yaml no longer has port {old}"
    assert "env_steps" not in text, "configs/marl-serve.yaml should stop on `seconds` only"
    text, n = re.subn(r"seconds: \d+", "seconds: 120", text)
    assert n == 1
    # In reactor mode the gateways listen on every interface, IPv6 and IPv4 (`gateway_bind: "::"`,
    # PROTOCOL.md section 1): the example reaches them over IPv4, the client below over IPv6 too.
    if mode == "reactor":
        text, n = re.subn(r"gateway_port: (\d+)", r'gateway_port: \1, gateway_bind: "::"', text)
        assert n == 1, "configs/marl-serve.yaml no longer has one gateway_port"
    # In actor mode the gateways are CURVE servers admitting client key "a" (PROTOCOL.md section
    # 2): the example and the clients below connect with its pair.
    curve, example_keys = None, []
    if mode == "actor":
        keys = os.path.join(work, "gateway-keys")
        shutil.rmtree(keys, ignore_errors=True)  # `keys generate` overwrites no key
        subprocess.run([binary, "keys", "generate", keys, "--name", "gateway", "--name", "a"],
                       check=True, capture_output=True)
        text, n = re.subn(r"gateway_port: (\d+)",
                          rf'gateway_port: \1, gateway_keys: "{keys}", gateway_clients: "a"', text)
        assert n == 1, "configs/marl-serve.yaml no longer has one gateway_port"
        example_keys = ["--keys", keys, "--client", "a"]

        def key(name):
            with open(os.path.join(keys, name)) as f:
                return f.read().strip()
        curve = {"server_public_key": key("gateway.pub"), "public_key": key("a.pub"),
                 "secret_key": key("a.key")}
    config = os.path.join(work, "marl-serve.yaml")
    with open(config, "w") as f:
        f.write(text)
    log = open(os.path.join(work, "up.log"), "w")
    # The run's own log directory: `tagflow up` refuses one an earlier run (of this test) used.
    shutil.rmtree(os.path.join(work, "logs"), ignore_errors=True)
    cluster = subprocess.Popen([binary, "up", config, "--mode", mode, "--quiet",
                                "--log-dir", os.path.join(work, "logs")],
                               stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        gateways = f"tcp://127.0.0.1:{base + 8},tcp://127.0.0.1:{base + 9}"
        example = subprocess.run(
            [sys.executable, os.path.join(source, "examples", "serve_traffic_junction.py"),
             "--gateways", gateways, "--episodes", "2", "--wait", "90"] + example_keys,
            capture_output=True, text=True, timeout=200)
        print(example.stdout)
        print(example.stderr, file=sys.stderr)
        assert example.returncode == 0, f"the example failed ({example.returncode})"
        assert re.search(r"episode 1: \d+ steps", example.stdout), "no second episode"
        assert re.search(r"actions/s .*p50 [\d.]+ ms, p99 [\d.]+ ms", example.stdout)
        # The Python client's refusals, from the same live gateways.
        sys.path.insert(0, os.path.join(source, "clients", "python"))
        import numpy as np
        from tagflow_client import Client, GatewayError
        client = Client([f"tcp://127.0.0.1:{base + 8}"], timeout=10, curve=curve)
        agents = client.connect()
        assert sorted(agents) == [0, 1, 2, 3, 4], agents
        try:
            client.act({7: np.zeros(1350, np.float32)})
            raise AssertionError("agent 7 is not served by inference-0")
        except GatewayError as e:
            assert e.code == "not_served", e
        gateway = client.gateways[0]
        for fields, code in (({"obs": {0: np.zeros(3, np.float32).tobytes()}}, "width"),
                             ({"obs": {0: [float("nan")] * 1350}}, "nan"),
                             ({"obs": {99: [0.0] * 1350}}, "unknown_agent")):
            reply = gateway.receive(gateway.send("act", **fields))
            assert reply["error"] == code, (code, reply)
        health = client.health()[f"tcp://127.0.0.1:{base + 8}"]
        assert health["ready"] and set(health["policies"]) == {f"car_{i}" for i in range(5)}
        client.close()
        if mode == "reactor":
            ipv6 = Client([f"tcp://[::1]:{base + 9}"], timeout=10)
            assert sorted(ipv6.connect()) == [5, 6, 7, 8, 9]
            actions = ipv6.act({a: np.zeros(1350, np.float32) for a in range(5, 10)})
            assert sorted(actions) == [5, 6, 7, 8, 9], actions
            ipv6.close()
        # Rewards of agents whose gateway gets no observation in a call still count: the client
        # sends them with that gateway's next request of the episode (here episode_end).
        both = Client([f"tcp://127.0.0.1:{base + 8}", f"tcp://127.0.0.1:{base + 9}"], timeout=10,
                      curve=curve)
        both.connect()
        episode = both.episode_start()
        zeros = {a: np.zeros(1350, np.float32) for a in range(10)}
        both.act(zeros, episode=episode)
        both.act({a: zeros[a] for a in range(5)}, episode=episode,
                 rewards={a: 1.0 for a in range(10)})
        ended = both.episode_end(episode, rewards={a: 0.5 for a in range(10)})
        returns = {int(a): r for a, r in ended["returns"].items()}
        assert returns == {a: 1.5 for a in range(10)}, returns
        both.close()
        for replica in (0, 1):
            url = f"http://127.0.0.1:{base + 6 + replica}"
            for probe in ("live", "ready"):
                with urllib.request.urlopen(f"{url}/health/{probe}", timeout=5) as r:
                    assert r.status == 200, f"{url}/health/{probe}: {r.status}"
            with urllib.request.urlopen(f"{url}/metrics", timeout=5) as r:
                metrics = r.read().decode()
            assert "tagflow_gateway_requests_total" in metrics
            assert re.search(r'tagflow_gateway_request_duration_seconds_count\{[^}]*policy="car_\d"\} [1-9]',
                             metrics), "no request latency recorded"
    finally:
        if cluster.poll() is None:
            os.killpg(cluster.pid, signal.SIGTERM)
        try:
            cluster.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(cluster.pid, signal.SIGKILL)
            cluster.wait()
        log.close()
    # `tagflow up` said where the service's clients connect (on `::`, at the host's address).
    with open(os.path.join(work, "up.log")) as f:
        announced = f.read()
    expected = (f"tagflow up: inference service: inference-0 tcp://127.0.0.1:{base + 8}, "
                f"inference-1 tcp://127.0.0.1:{base + 9}")
    assert expected in announced, announced
    print("ok")


if __name__ == "__main__":
    main()
