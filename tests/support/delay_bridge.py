#!/usr/bin/env python3
"""A two-port Ethernet bridge that holds every frame for a fixed delay before passing it on.

Usage: delay_bridge.py IFACE_A IFACE_B DELAY_MS

Runs in a network namespace of its own between two hosts' namespaces (tests/support/
namespace_pair.hpp, NamespacePair::create with a middle namespace): each frame read on one
interface is sent out of the other DELAY_MS later, in the order it came, both ways. The kernel here
has no netem, so this stands in for `tc qdisc ... netem delay`. Frames are read and written with
their virtio-net header (PACKET_VNET_HDR), so segmentation offloads pass through unchanged.
Prints "ready" on stdout once both interfaces are open; runs until killed.
"""
import collections
import select
import socket
import sys
import time

SOL_PACKET = 263
PACKET_VNET_HDR = 15
ETH_P_ALL = 0x0003
MAX_FRAME = 65536 + 64


def open_port(name):
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    sock.setsockopt(SOL_PACKET, PACKET_VNET_HDR, 1)
    sock.bind((name, 0))
    sock.setblocking(False)
    return sock


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    delay = float(sys.argv[3]) / 1000.0
    a, b = open_port(sys.argv[1]), open_port(sys.argv[2])
    other = {a: b, b: a}
    queues = {a: collections.deque(), b: collections.deque()}  # frames waiting to leave by port
    print("ready", flush=True)
    while True:
        now = time.monotonic()
        due = [q[0][0] for q in queues.values() if q]
        timeout = max(0.0, min(due) - now) if due else 1.0
        readable, _, _ = select.select([a, b], [], [], timeout)
        now = time.monotonic()
        for sock in readable:
            while True:
                try:
                    frame = sock.recv(MAX_FRAME)
                except BlockingIOError:
                    break
                queues[other[sock]].append((now + delay, frame))
        for out, queue in queues.items():
            while queue and queue[0][0] <= now:
                try:
                    out.send(queue.popleft()[1])
                except OSError:
                    pass  # a frame the far side cannot take is lost, as on a wire


if __name__ == "__main__":
    main()
