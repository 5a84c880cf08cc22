#!/usr/bin/python3
"""The bench's user-space delay line (this kernel has no netem): one direction of the link between two namespaces.

Run as root inside a network namespace:
  delayline.py TUN DEV DST_MAC SRC_MAC DELAY_MS UDP_LOSS SECONDS
It creates the TUN device TUN (gone again when this process ends), and every IPv4 packet the namespace routes into
it (the route to the other end of the veth points there) is held DELAY_MS and then sent out of the veth DEV as an
Ethernet frame to DST_MAC, so it still crosses the veth's tc shaping. UDP packets are dropped with probability
UDP_LOSS (TCP only gets the delay). Prints 'ready' once the device exists; exits after SECONDS at the latest
(or on SIGTERM/SIGINT), printing its counters as one JSON line on stdout.
"""
import collections
import fcntl
import json
import os
import random
import select
import signal
import socket
import struct
import sys
import time

TUNSETIFF = 0x400454CA
IFF_TUN = 0x0001
IFF_NO_PI = 0x1000


def main():
    tun, dev, dst_mac, src_mac, delay_ms, loss, seconds = sys.argv[1:8]
    delay = float(delay_ms) / 1000
    loss = float(loss)
    end = time.monotonic() + float(seconds)
    fd = os.open('/dev/net/tun', os.O_RDWR | os.O_NONBLOCK)
    fcntl.ioctl(fd, TUNSETIFF, struct.pack('16sH', tun.encode(), IFF_TUN | IFF_NO_PI))
    out = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    out.bind((dev, 0))
    header = bytes.fromhex(dst_mac.replace(':', '')) + bytes.fromhex(src_mac.replace(':', '')) + b'\x08\x00'
    counts = {'udp': 0, 'tcp': 0, 'other': 0, 'udpDropped': 0, 'queueFull': 0, 'bytes': 0}
    queue = collections.deque()
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    print('ready', flush=True)
    while not stop:
        now = time.monotonic()
        if now > end:
            break
        while queue and queue[0][0] <= now:
            _, pkt = queue.popleft()
            try:
                out.send(header + pkt)
            except OSError:
                counts['queueFull'] += 1  # the shaper's queue is full: the link drops it, as a router would
        timeout = max(0.0, queue[0][0] - now) if queue else 0.2
        try:
            ready, _, _ = select.select([fd], [], [], timeout)
        except InterruptedError:
            continue
        if not ready:
            continue
        for _ in range(256):
            try:
                pkt = os.read(fd, 65536)
            except (BlockingIOError, InterruptedError):
                break
            if not pkt or pkt[0] >> 4 != 4:
                continue  # IPv4 only (IPv6 is off in both namespaces)
            proto = pkt[9]
            kind = 'udp' if proto == 17 else 'tcp' if proto == 6 else 'other'
            if kind == 'udp' and random.random() < loss:
                counts['udpDropped'] += 1
                continue
            counts[kind] += 1
            counts['bytes'] += len(pkt)
            queue.append((time.monotonic() + delay, pkt))
    print(json.dumps(counts), flush=True)


if __name__ == '__main__':
    main()
