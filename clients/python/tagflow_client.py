"""A Python client of tagflow's inference service (nodes/gateway/PROTOCOL.md).

One module; needs pyzmq, msgpack and numpy (Debian: python3-zmq python3-msgpack python3-numpy).
Copy it, or put clients/python on PYTHONPATH.

    from tagflow_client import Client
    client = Client(["tcp://127.0.0.1:7830", "tcp://127.0.0.1:7831"])   # one per gateway
    client.connect()                     # handshake with each; learns which agents each serves
    actions = client.act({0: obs0, 1: obs1, ...})        # agent -> action
    episode = client.episode_start()     # log=True: its experience goes to the cluster's replay
    actions = client.act(obs, episode=episode, rewards={0: -0.01, ...}, dones={...})
    summary = client.episode_end(episode, rewards={...})  # steps, returns per agent, logged
    client.health()                      # per gateway: live, ready, policy versions
    client.limits()                      # per gateway: every limit of a request, as numbers

Refusals raise GatewayError (code and reason as the protocol's section 6); `busy` raises Busy,
a GatewayError, at once, or from act() after `busy_retries` retries. A gateway that does not
answer within `timeout` seconds raises TimeoutError. Not thread-safe: one Client per thread.
"""
import socket
import time
import urllib.request

import msgpack
import numpy as np
import zmq

PROTOCOL_VERSION = 1


class GatewayError(Exception):
    """A refusal: the protocol's error code and reason; for `version`, the versions the gateway
    speaks (its reply's `versions`), else None."""

    def __init__(self, code, reason, versions=None):
        super().__init__(f"{code}: {reason}")
        self.code, self.reason, self.versions = code, reason, versions


class Busy(GatewayError):
    """`busy`; `scope` is whose limit it was (the reply's `busy`, PROTOCOL.md section 5):
    "client" or "episode" (wait for your own replies) or "gateway" (back off)."""

    def __init__(self, code, reason, versions=None, scope=None):
        super().__init__(code, reason, versions)
        self.scope = scope


def _refusal(reply):
    """The exception for a reply with ok false: Busy for `busy`, else GatewayError."""
    if reply.get("error") == "busy":
        return Busy("busy", reply.get("reason"), None, reply.get("busy"))
    return GatewayError(reply.get("error"), reply.get("reason"), reply.get("versions"))


def _needs_ipv6(endpoint):
    """Whether connecting to `endpoint` takes ZMQ_IPV6 (PROTOCOL.md section 1): an IPv6 address
    in brackets ("tcp://[::1]:7830"), or a host name with IPv6 addresses and no IPv4 one. Without
    it ZeroMQ connects over IPv4 only; with it, a name with both would be tried at its IPv6
    address first, which a gateway bound to an IPv4 address does not answer."""
    if not endpoint.startswith("tcp://"):
        return False
    host = endpoint[len("tcp://"):].rpartition(":")[0]
    if host.startswith("["):
        return True
    try:
        families = {info[0] for info in socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)}
    except (OSError, UnicodeError):
        return False
    return socket.AF_INET6 in families and socket.AF_INET not in families


def _unpack(frame):
    return msgpack.unpackb(frame, strict_map_key=False, raw=False)


class Gateway:
    """One gateway endpoint (a DEALER socket); request/reply with ids."""

    def __init__(self, endpoint, context, timeout, curve=None):
        self.endpoint, self.timeout, self.curve = endpoint, timeout, curve
        self.context, self.next_id, self.info = context, 1, None
        self.ipv6 = _needs_ipv6(endpoint)
        self._connect()

    def _connect(self):
        self.socket = self.context.socket(zmq.DEALER)
        self.socket.setsockopt(zmq.LINGER, 0)
        # A socket whose connection was refused (a CURVE key the gateway does not admit) has no
        # peer, and a blocking send on it would wait forever (PROTOCOL.md section 2).
        self.socket.setsockopt(zmq.SNDTIMEO, max(1, int(self.timeout * 1000)))
        if self.curve:
            self.socket.curve_serverkey = self.curve["server_public_key"].encode()
            self.socket.curve_publickey = self.curve["public_key"].encode()
            self.socket.curve_secretkey = self.curve["secret_key"].encode()
        if self.ipv6:
            self.socket.setsockopt(zmq.IPV6, 1)
        self.socket.connect(self.endpoint)

    def check_open(self):
        """Raises ValueError once the client that holds this gateway was closed."""
        if self.socket.closed:
            raise ValueError(f"{self.endpoint}: this client is closed (Client.close())")

    def send(self, op, **fields):
        """Sends one request; returns its id (receive() gets the reply)."""
        self.check_open()
        request_id = self.next_id
        self.next_id += 1
        message = {"op": op, "v": PROTOCOL_VERSION, "id": request_id}
        message.update(fields)
        try:
            self.socket.send(msgpack.packb(message, use_bin_type=True))
        except zmq.Again:
            self.socket.close()
            self._connect()
            raise TimeoutError(f"could not send to {self.endpoint} within {self.timeout} s (no "
                               "connection: is it running, and does it admit this CURVE key?)") \
                from None
        return request_id

    def receive(self, request_id):
        deadline = time.monotonic() + self.timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not self.socket.poll(int(left * 1000)):
                self.socket.close()
                self._connect()  # a late reply must not answer a later request
                raise TimeoutError(f"no reply from {self.endpoint} within {self.timeout} s")
            reply = _unpack(self.socket.recv())
            # A nil id answers a request whose id the gateway could not read (PROTOCOL.md
            # section 3): only a malformed request of this client, which waits for its reply.
            if reply.get("id") == request_id or reply.get("id") is None:
                return reply

    def call(self, op, **fields):
        reply = self.receive(self.send(op, **fields))
        if not reply.get("ok"):
            raise _refusal(reply)
        return reply


class Episode(dict):
    """An episode handle from Client.episode_start(): a dict {gateway endpoint: episode id}, and,
    in `instances`, {gateway endpoint: the gateway instance the episode was started on} for the
    gateways that said one (PROTOCOL.md section 4, step 3). The handle carries them, so that a
    restarted gateway refuses its requests even once it has given the same id to a new episode."""

    def __init__(self, ids=(), instances=None):
        super().__init__(ids)
        self.instances = dict(instances or {})


def _instance(episode, gateway):
    """The instance `episode` was started on at `gateway` (None: a gateway that said none, or a
    plain dict handle)."""
    return getattr(episode, "instances", {}).get(gateway.endpoint)


def _observation_bytes(observation):
    return np.ascontiguousarray(observation, dtype="<f4").tobytes()


class Client:
    """Actions for a multi-agent observation dict from one or several gateways."""

    def __init__(self, endpoints, timeout=10.0, curve=None, busy_retries=100):
        if isinstance(endpoints, str):
            endpoints = [endpoints]
        self.context = zmq.Context.instance()
        self.gateways = [Gateway(e, self.context, timeout, curve) for e in endpoints]
        self.busy_retries = busy_retries
        self.agent_gateway = {}  # agent index -> Gateway
        self.observation_size = None
        self.last_policies, self.last_versions = {}, {}
        self.last_logged = None  # a logged episode: its transitions logged so far
        # (gateway, episode id, instance) -> ({agent: reward}, {agent: done}): given to act() for
        # agents that had no observation for that gateway in the call; sent with its next request
        # of the episode.
        self._carried = {}

    def connect(self):
        """The handshake with every gateway; returns {agent: policy name} over all of them."""
        agents = {}
        for gateway in self.gateways:
            gateway.info = gateway.call("hello")
            self.observation_size = gateway.info["observation_size"]
            for agent, policy in gateway.info["agents"].items():
                self.agent_gateway[int(agent)] = gateway
                agents[int(agent)] = policy
        return agents

    def _split(self, per_agent):
        parts = {}
        for agent, value in per_agent.items():
            gateway = self.agent_gateway.get(int(agent))
            if gateway is None:
                raise GatewayError("not_served", f"no connected gateway serves agent {agent}")
            parts.setdefault(gateway, {})[int(agent)] = value
        return parts

    def act(self, observations, episode=None, rewards=None, dones=None):
        """observations: {agent: array of observation_size floats} -> {agent: action}.

        The policy and weights version that chose each action are in last_policies and
        last_versions. With an `episode` from episode_start(), rewards and dones (of the previous
        step, per agent) are added to it; for a logged episode they complete the previous step's
        transitions, and last_logged is the episode's transitions logged so far.
        Rewards and dones of agents whose gateway gets no observation in this call are kept and
        sent with that gateway's next request of the episode (act or episode_end), where the
        gateway adds them up as if they had come now; without an episode they would be ignored."""
        self._check_open()
        if any(g.info is None for g in self.gateways):  # never connected, or not to every one
            self.connect()
        parts = self._split({a: _observation_bytes(o) for a, o in observations.items()})
        rewards_by = self._split(rewards) if rewards else {}
        dones_by = self._split(dones) if dones else {}
        kept = {}  # gateway -> what was carried for it and goes with this call's request
        if episode is not None:
            for gateway in set(rewards_by) | set(dones_by):
                if gateway not in parts:
                    self._carry(gateway, episode, rewards_by.get(gateway, {}),
                                dones_by.get(gateway, {}))
            for gateway in parts:
                kept[gateway] = self._merge_carried(gateway, episode, rewards_by, dones_by)
        actions = {}
        self.last_policies, self.last_versions = {}, {}
        self.last_logged = None
        pending = list(parts.items())
        failure = None  # the first refusal or timeout: raised once every reply was read
        last_busy = {}  # the last `busy` reply: its reason and whose limit it was
        for attempt in range(self.busy_retries + 1):
            sent = []
            for gateway, obs in pending:  # every gateway at once, then the replies
                fields = {"obs": obs}
                if episode is not None:
                    fields.update(self._episode_fields(gateway, episode))
                if gateway in rewards_by:
                    fields["rewards"] = {a: float(r) for a, r in rewards_by[gateway].items()}
                if gateway in dones_by:
                    fields["dones"] = {a: bool(d) for a, d in dones_by[gateway].items()}
                try:
                    sent.append((gateway, obs, gateway.send("act", **fields)))
                except TimeoutError as e:
                    # Never sent, so not taken: what it carried waits for the next request.
                    self._put_back(gateway, episode, kept.get(gateway))
                    failure = failure or e
            pending = []
            for gateway, obs, request_id in sent:
                try:
                    reply = gateway.receive(request_id)
                except TimeoutError as e:
                    # The gateway may have taken the request: what it carried is not sent again.
                    failure = failure or e
                    continue
                if reply.get("ok"):
                    actions.update(reply["actions"])
                    self.last_policies.update(reply["policies"])
                    self.last_versions.update(reply["versions"])
                    if "logged" in reply:
                        self.last_logged = (self.last_logged or 0) + reply["logged"]
                elif reply.get("error") == "busy":
                    pending.append((gateway, obs))
                    last_busy = reply
                else:
                    # Refused, so not taken: what it carried waits for the episode's next request.
                    # An `unknown_episode` keeps the instance: a retry must be refused too, not
                    # go out without one and land in a restarted gateway's episode of that id.
                    self._put_back(gateway, episode, kept.get(gateway))
                    failure = failure or _refusal(reply)
            if failure is not None or not pending or attempt == self.busy_retries:
                break
            time.sleep(min(0.001 * 2 ** attempt, 0.05))
        if failure is None and not pending:
            return actions
        # The gateways still busy took nothing either.
        for gateway, _ in pending:
            self._put_back(gateway, episode, kept.get(gateway))
        raise failure or Busy("busy", f"still busy after {self.busy_retries} retries: "
                              f"{last_busy.get('reason')}", None, last_busy.get("busy"))

    def _episode_fields(self, gateway, episode):
        """The `episode` of a request to `gateway`, and its `instance` when the handle carries one
        (an Episode from episode_start: kept after an `unknown_episode` refusal, so that a retry
        is refused too rather than sent without it)."""
        fields = {"episode": episode[gateway.endpoint]}
        instance = _instance(episode, gateway)
        if instance is not None:
            fields["instance"] = instance
        return fields

    def _put_back(self, gateway, episode, kept):
        """Carries again what _merge_carried took for a request `gateway` did not take."""
        if episode is not None and kept is not None:
            self._carry(gateway, episode, kept[0], kept[1])

    def _carry(self, gateway, episode, rewards, dones):
        """Keeps rewards and dones for `gateway`'s next request of `episode`."""
        key = (gateway, episode[gateway.endpoint], _instance(episode, gateway))
        kept_rewards, kept_dones = self._carried.setdefault(key, ({}, {}))
        for agent, reward in rewards.items():
            kept_rewards[agent] = kept_rewards.get(agent, 0.0) + float(reward)
        for agent, done in dones.items():
            kept_dones[agent] = kept_dones.get(agent, False) or bool(done)

    def _merge_carried(self, gateway, episode, rewards_by, dones_by):
        """Adds what was kept for `gateway` in `episode` to this request's rewards and dones
        (rewards summed, dones OR'd), and forgets it; returns it (None when nothing was)."""
        key = (gateway, episode[gateway.endpoint], _instance(episode, gateway))
        kept = self._carried.pop(key, None)
        if kept is None:
            return None
        kept_rewards, kept_dones = kept
        if kept_rewards:
            rewards = rewards_by[gateway] = dict(rewards_by.get(gateway, {}))
            for agent, reward in kept_rewards.items():
                rewards[agent] = float(rewards.get(agent, 0.0)) + reward
        if kept_dones:
            dones = dones_by[gateway] = dict(dones_by.get(gateway, {}))
            for agent, done in kept_dones.items():
                dones[agent] = bool(dones.get(agent, False)) or done
        return kept

    def episode_start(self, log=None):
        """An episode handle: an Episode, {endpoint: episode id} with the gateways' instances.
        log=True: the gateways log the episode's transitions into the cluster's replay
        (GatewayError no_replay when a gateway's replica has none linked); None: each gateway's
        default (param log_experience)."""
        fields = {} if log is None else {"log": bool(log)}
        episode = Episode()
        for gateway in self.gateways:
            try:
                reply = gateway.call("episode_start", **fields)
                episode[gateway.endpoint] = reply["episode"]
                if "instance" in reply:
                    episode.instances[gateway.endpoint] = reply["instance"]
            except (GatewayError, TimeoutError):
                # All or nothing: the episodes already opened on the other gateways are ended.
                for opened in self.gateways:
                    if opened.endpoint in episode:
                        try:
                            opened.call("episode_end", **self._episode_fields(opened, episode))
                        except (GatewayError, TimeoutError):
                            pass  # forgotten in time anyway (max_open_episodes)
                raise
        return episode

    def episode_end(self, episode, rewards=None, dones=None):
        """Ends the episode; returns {"steps": ..., "returns": {agent: sum of rewards},
        "logged": transitions logged for it over all gateways}."""
        self._check_open()  # before anything carried is taken out for the gateways
        rewards_by = self._split(rewards) if rewards else {}
        dones_by = self._split(dones) if dones else {}
        steps, returns, logged = 0, {}, 0
        failure = None  # every gateway is asked; the first refusal or timeout is raised after
        for gateway in self.gateways:
            kept = self._merge_carried(gateway, episode, rewards_by, dones_by)
            fields = self._episode_fields(gateway, episode)
            if gateway in rewards_by:
                fields["rewards"] = {a: float(r) for a, r in rewards_by[gateway].items()}
            if gateway in dones_by:
                fields["dones"] = {a: bool(d) for a, d in dones_by[gateway].items()}
            try:
                reply = gateway.call("episode_end", **fields)
            except GatewayError as e:
                # Refused: what it carried is kept for a retry, and the instance with it (an
                # `unknown_episode` one is refused again rather than sent without it).
                self._put_back(gateway, episode, kept)
                failure = failure or e
                continue
            except TimeoutError as e:
                failure = failure or e
                continue
            if isinstance(episode, Episode):  # ended: the handle names no episode any more
                episode.instances.pop(gateway.endpoint, None)
            steps = max(steps, reply["steps"])
            returns.update(reply["returns"])
            logged += reply.get("logged", 0)
        if failure is not None:
            raise failure
        return {"steps": steps, "returns": returns, "logged": logged}

    def limits(self):
        """{endpoint: {limit name: number}}: what one request may hold (PROTOCOL.md 2.1)."""
        self._check_open()
        if any(g.info is None for g in self.gateways):
            self.connect()
        return {g.endpoint: g.info["limits"] for g in self.gateways}

    def health(self):
        """{endpoint: the health reply} from every gateway: "op", "id", "ok", "live", "ready",
        "instance" (from a gateway that sends one) and "policies", which maps each hosted policy to {"version", "loaded", "max_batch",
        "max_wait_us", "replay"}."""
        return {g.endpoint: g.call("health") for g in self.gateways}

    def close(self):
        """Closes every gateway's socket; any later call raises ValueError."""
        for gateway in self.gateways:
            gateway.socket.close()

    def _check_open(self):
        """Raises ValueError once close() was called, also for calls that would send nothing."""
        for gateway in self.gateways:
            gateway.check_open()


def http_health(metrics_url_base, probe="ready", timeout=2.0):
    """True when GET {base}/health/{probe} answers 200 (base: http://HOST:METRICS_PORT)."""
    try:
        with urllib.request.urlopen(f"{metrics_url_base}/health/{probe}", timeout=timeout) as r:
            return r.status == 200
    except Exception:  # noqa: BLE001 - unreachable or 503: not healthy
        return False
