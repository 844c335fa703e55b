#!/usr/bin/env python3
"""A stand-in for systemd's notification socket, for tests.

Node cannot bind AF_UNIX datagram sockets, so the tests run this script instead: it binds an
AF_UNIX SOCK_DGRAM socket at the path given as the only argument and prints one JSON line per
received datagram, {"t": <monotonic ms>, "msg": "<datagram text>"}, flushing every line so the
test sees it at once. The first line is {"t": ..., "bound": "<path>"} once the socket accepts
datagrams. It exits (and removes the socket file) when stdin reaches end of file, so it never
outlives the test process that started it, or on SIGTERM/SIGINT.
"""

import json
import os
import select
import signal
import socket
import sys
import time


def emit(record):
    sys.stdout.write(json.dumps(record) + "\n")
    sys.stdout.flush()


def now_ms():
    return time.monotonic() * 1000.0


def main():
    if len(sys.argv) != 2:
        sys.stderr.write("usage: notify_listener.py SOCKET_PATH\n")
        return 64
    path = sys.argv[1]
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    try:
        sock.bind(path)
        emit({"t": now_ms(), "bound": path})
        stdin_fd = sys.stdin.fileno()
        while True:
            readable, _, _ = select.select([sock, stdin_fd], [], [])
            if sock in readable:
                data = sock.recv(65536)
                emit({"t": now_ms(), "msg": data.decode("utf-8", "replace")})
            if stdin_fd in readable and not os.read(stdin_fd, 4096):
                return 0
    except KeyboardInterrupt:
        return 0
    finally:
        sock.close()
        try:
            os.unlink(path)
        except OSError:
            pass


if __name__ == "__main__":
    sys.exit(main())
