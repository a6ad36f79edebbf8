"""clients/python/tagflow_client.py against two scripted gateways (ZeroMQ ROUTER sockets on this
machine that answer as nodes/gateway/PROTOCOL.md says, and refuse what a test tells them to):
what the client carries between requests of an episode survives a refused request, an
episode_start or episode_end refused by one gateway still starts none or ends every other one, and
a `version` refusal carries the versions the gateway speaks, and a `busy` one whose limit it was;
and against a CURVE gateway that admits no key, every call raises instead of waiting forever.

Usage: python_client_test.py SOURCE_DIR. Exit status 0 on success.
"""
import sys
import threading
import unittest

import msgpack
import numpy as np
import zmq

sys.path.insert(0, sys.argv[1] + "/clients/python")
from tagflow_client import Busy, Client, GatewayError  # noqa: E402

OBSERVATION_SIZE = 4


class ScriptedGateway:
    """A gateway serving `agents`; it refuses each op listed in `refuse` (op -> error code) and
    records every request it reads."""

    def __init__(self, agents, address="127.0.0.1"):
        self.agents, self.refuse, self.requests = agents, {}, []
        self.instance = None  # the `instance` its episode_start replies carry (None: none)
        self.context = zmq.Context()
        self.socket = self.context.socket(zmq.ROUTER)
        self.socket.setsockopt(zmq.LINGER, 0)
        if ":" in address:  # an IPv6 address, in brackets in the endpoint
            self.socket.setsockopt(zmq.IPV6, 1)
            address = f"[{address}]"
        port = self.socket.bind_to_random_port(f"tcp://{address}")
        self.endpoint = f"tcp://{address}:{port}"
        self.stopping = False
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _answer(self, request):
        op = request.get("op")
        reply = {"op": op, "id": request.get("id"), "ok": True}
        if op in self.refuse:
            reply.update(ok=False, error=self.refuse[op], reason="refused by the test")
            if self.refuse[op] == "version":
                reply["versions"] = [1]  # PROTOCOL.md section 4, step 1
            if self.refuse[op] == "busy":
                reply["busy"] = "gateway"  # PROTOCOL.md section 5
            return reply
        if op == "hello":
            reply.update(v=1, server="scripted", env="TrafficJunction4-v1",
                         observation_size=OBSERVATION_SIZE, num_actions=2,
                         agents={a: "car" for a in self.agents}, policies={}, max_batch=64,
                         max_wait_us=0, max_in_flight=8, limits={})
        elif op == "episode_start":
            reply.update(episode=7, log=False)
            if self.instance is not None:
                reply["instance"] = self.instance
        elif op == "act":
            reply.update(actions={a: 1 for a in request["obs"]},
                         policies={a: "car" for a in request["obs"]},
                         versions={a: 0 for a in request["obs"]})
        elif op == "episode_end":
            reply.update(episode=request["episode"], steps=1,
                         returns={a: float(r) for a, r in request.get("rewards", {}).items()},
                         logged=0)
        return reply

    def _serve(self):
        while not self.stopping:
            if not self.socket.poll(50):
                continue
            routing, frame = self.socket.recv_multipart()
            request = msgpack.unpackb(frame, strict_map_key=False, raw=False)
            self.requests.append(request)
            self.socket.send_multipart([routing, msgpack.packb(self._answer(request),
                                                               use_bin_type=True)])

    def ops(self, op):
        return [r for r in self.requests if r.get("op") == op]

    def close(self):
        self.stopping = True
        self.thread.join()
        self.socket.close()
        self.context.term()


def observation():
    return np.zeros(OBSERVATION_SIZE, np.float32)


class Ipv6(unittest.TestCase):
    """A gateway on an IPv6 address (PROTOCOL.md section 1): the client sets ZMQ_IPV6 for a
    bracketed endpoint, and only where the endpoint needs it."""

    def test_a_client_reaches_a_gateway_at_a_bracketed_ipv6_endpoint(self):
        gateway = ScriptedGateway([0, 1], address="::1")
        client = Client([gateway.endpoint], timeout=5.0)
        try:
            client.connect()
            self.assertEqual(client.act({0: observation(), 1: observation()}), {0: 1, 1: 1})
            self.assertEqual(client.gateways[0].socket.getsockopt(zmq.IPV6), 1)
        finally:
            client.close()
            gateway.close()

    def test_an_ipv4_endpoint_or_a_name_with_an_ipv4_address_stays_on_ipv4(self):
        gateway = ScriptedGateway([0])
        port = gateway.endpoint.rpartition(":")[2]
        client = Client([gateway.endpoint, f"tcp://localhost:{port}"], timeout=5.0)
        try:
            client.connect()
            self.assertEqual([g.socket.getsockopt(zmq.IPV6) for g in client.gateways], [0, 0])
        finally:
            client.close()
            gateway.close()


class CarriedValues(unittest.TestCase):
    def setUp(self):
        self.a, self.b = ScriptedGateway([0]), ScriptedGateway([1])
        self.client = Client([self.a.endpoint, self.b.endpoint], timeout=5.0)
        self.client.connect()

    def tearDown(self):
        self.client.close()
        self.a.close()
        self.b.close()

    def test_a_reward_carried_to_a_gateway_that_refuses_reaches_the_episode_end(self):
        episode = self.client.episode_start()
        # Agent 1's reward waits for gateway b's next request of the episode.
        self.client.act({0: observation()}, episode=episode, rewards={1: 1.5})
        self.b.refuse["act"] = "width"
        with self.assertRaises(GatewayError) as refused:
            self.client.act({1: observation()}, episode=episode)
        self.assertEqual(refused.exception.code, "width")
        self.assertEqual(self.b.ops("act")[-1]["rewards"], {1: 1.5})  # sent with the refused act
        del self.b.refuse["act"]
        summary = self.client.episode_end(episode)
        self.assertEqual(self.b.ops("episode_end")[-1].get("rewards"), {1: 1.5})
        self.assertEqual(summary["returns"], {1: 1.5})

    def test_each_request_of_an_episode_names_the_gateway_instance_it_was_started_on(self):
        # PROTOCOL.md section 4, step 3: a restarted gateway refuses an episode of its previous
        # instance. Gateway b says no instance (a gateway before it): its requests carry none.
        self.a.instance = 2**64 - 1
        episode = self.client.episode_start()
        self.client.act({0: observation(), 1: observation()}, episode=episode)
        self.client.episode_end(episode)
        for op in ("act", "episode_end"):
            self.assertEqual(self.a.ops(op)[-1]["instance"], 2**64 - 1)
            self.assertNotIn("instance", self.b.ops(op)[-1])
        # Ended: a request naming the same id again carries no instance.
        self.client.act({0: observation()}, episode=episode)
        self.assertNotIn("instance", self.a.ops("act")[-1])

    def test_a_request_refused_as_unknown_episode_is_retried_with_its_instance(self):
        # A restarted gateway refuses the episode; the retry must carry the instance again, so
        # that it is refused too instead of landing in the new gateway's episode of that id.
        self.a.instance = 5
        episode = self.client.episode_start()
        self.a.refuse["act"] = self.a.refuse["episode_end"] = "unknown_episode"
        for _ in range(2):
            with self.assertRaises(GatewayError):
                self.client.act({0: observation()}, episode=episode, rewards={0: 1.0})
            self.assertEqual(self.a.ops("act")[-1]["instance"], 5)
        with self.assertRaises(GatewayError):
            self.client.episode_end(episode)
        self.assertEqual(self.a.ops("episode_end")[-1]["instance"], 5)

    def test_an_old_handle_keeps_its_instance_when_a_restarted_gateway_gives_its_id_again(self):
        # The scripted gateway gives episode 7 at every start, as a restarted one numbers from 1
        # again: the old handle still carries the old instance (and is refused by the gateway),
        # the new one the new instance, and a reward carried for one never reaches the other.
        self.a.instance = 1
        old = self.client.episode_start()
        self.client.act({1: observation()}, episode=old, rewards={0: 500.0})  # carried for a
        self.a.instance = 2  # "restarted"
        new = self.client.episode_start()
        self.assertEqual(dict(old), dict(new))  # the same ids
        self.assertEqual((old.instances[self.a.endpoint], new.instances[self.a.endpoint]), (1, 2))
        self.client.act({0: observation()}, episode=new)
        self.assertEqual(self.a.ops("act")[-1]["instance"], 2)
        self.assertNotIn("rewards", self.a.ops("act")[-1])  # the old episode's reward stays there
        self.client.act({0: observation()}, episode=old)
        self.assertEqual(self.a.ops("act")[-1]["instance"], 1)
        self.assertEqual(self.a.ops("act")[-1]["rewards"], {0: 500.0})
        # A plain dict handle carries no instance.
        self.client.act({0: observation()}, episode=dict(new))
        self.assertNotIn("instance", self.a.ops("act")[-1])

    def test_an_episode_refused_by_one_gateway_is_ended_on_the_others(self):
        self.b.refuse["episode_start"] = "no_replay"
        with self.assertRaises(GatewayError) as refused:
            self.client.episode_start(log=True)
        self.assertEqual(refused.exception.code, "no_replay")
        self.assertEqual([r["episode"] for r in self.a.ops("episode_end")], [7])

    def test_a_version_refusal_names_the_versions_the_gateway_speaks(self):
        self.a.refuse["episode_start"] = "version"
        with self.assertRaises(GatewayError) as refused:
            self.client.episode_start()
        self.assertEqual((refused.exception.code, refused.exception.versions), ("version", [1]))
        self.assertEqual(self.client.gateways[0].info["v"], 1)

    def test_a_busy_refusal_says_whose_limit_it_was(self):
        impatient = Client([self.a.endpoint, self.b.endpoint], timeout=5.0, busy_retries=0)
        impatient.connect()
        self.a.refuse["act"] = "busy"
        with self.assertRaises(Busy) as refused:
            impatient.act({0: observation()})
        impatient.close()
        self.assertEqual((refused.exception.code, refused.exception.scope), ("busy", "gateway"))

    def test_a_refused_episode_end_still_ends_the_episode_on_the_other_gateways(self):
        episode = self.client.episode_start()
        self.client.act({0: observation()}, episode=episode, rewards={1: 2.0})
        self.b.refuse["episode_end"] = "unknown_episode"
        with self.assertRaises(GatewayError):
            self.client.episode_end(episode)
        self.assertEqual(len(self.a.ops("episode_end")), 1)
        del self.b.refuse["episode_end"]
        self.client.episode_end(episode)  # b's carried reward was kept for this retry
        self.assertEqual(self.b.ops("episode_end")[-1].get("rewards"), {1: 2.0})

    def test_a_connect_that_failed_part_way_is_run_again_by_act_and_limits(self):
        gone = ScriptedGateway([1])
        gone.close()  # its port is closed: the handshake times out
        client = Client([self.a.endpoint, gone.endpoint], timeout=0.3)
        try:
            with self.assertRaises(TimeoutError):
                client.connect()
            # Gateway a answered, the other did not: limits() connects again, and raises the
            # same way instead of reading a gateway's info that was never there.
            with self.assertRaises(TimeoutError):
                client.limits()
            with self.assertRaises(TimeoutError):
                client.act({0: observation()})
        finally:
            client.close()

    def test_a_closed_client_says_so(self):
        closed = Client([self.a.endpoint], timeout=5.0)
        closed.connect()
        closed.close()
        with self.assertRaisesRegex(ValueError, "this client is closed"):
            closed.act({0: observation()})
        with self.assertRaisesRegex(ValueError, "this client is closed"):
            closed.health()
        # Also the calls that, once connected, would send nothing.
        with self.assertRaisesRegex(ValueError, "this client is closed"):
            closed.limits()
        with self.assertRaisesRegex(ValueError, "this client is closed"):
            closed.act({})
        # An episode_end with an agent no gateway serves: closed comes first.
        with self.assertRaisesRegex(ValueError, "this client is closed"):
            closed.episode_end({self.a.endpoint: 1}, rewards={42: 1.0})
        closed.close()  # again: nothing happens


class RefusedKey(unittest.TestCase):
    """A CURVE gateway that admits no key (a ZAP handler refusing every client)."""

    def setUp(self):
        import tempfile
        from zmq.auth.thread import ThreadAuthenticator
        self.context = zmq.Context()
        self.keys_dir = tempfile.TemporaryDirectory()  # no client keys in it: none admitted
        self.auth = ThreadAuthenticator(self.context)
        self.auth.start()
        self.auth.configure_curve(domain="*", location=self.keys_dir.name)
        server_public, server_secret = zmq.curve_keypair()
        self.socket = self.context.socket(zmq.ROUTER)
        self.socket.setsockopt(zmq.LINGER, 0)
        self.socket.curve_server = True
        self.socket.curve_publickey, self.socket.curve_secretkey = server_public, server_secret
        port = self.socket.bind_to_random_port("tcp://127.0.0.1")
        public, secret = zmq.curve_keypair()
        self.client = Client([f"tcp://127.0.0.1:{port}"], timeout=0.3,
                             curve={"server_public_key": server_public.decode(),
                                    "public_key": public.decode(), "secret_key": secret.decode()})

    def tearDown(self):
        self.client.close()
        self.socket.close()
        self.auth.stop()
        self.context.term()
        self.keys_dir.cleanup()

    def test_every_call_of_a_refused_client_raises_instead_of_waiting_forever(self):
        with self.assertRaises(TimeoutError):
            self.client.connect()
        # The reopened socket's handshake is refused before the next call: that socket has no
        # peer, where a send without a timeout waited forever.
        import time
        time.sleep(0.3)
        outcome = []

        def call():
            try:
                self.client.health()
            except TimeoutError as e:
                outcome.append(str(e))

        caller = threading.Thread(target=call, daemon=True)
        caller.start()
        caller.join(30)  # a guard against the hang, not a timing check
        self.assertFalse(caller.is_alive(), "health() of a refused client waits forever")
        self.assertEqual(len(outcome), 1)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
