#!/usr/bin/env python3
"""Measures what silent strangers do to `fairshare serve` at its connection cap (loopback only).

Starts the daemon with its default limits (or those given), fills every slot with connections
that never send a byte, from as many loopback addresses as the per-peer cap needs, and then
times: an agent's request with its token at the full cap, a request without a token from a
host of its own, and how long the silent connections are held.

    python3 scripts/service-silent-clients.py [--binary target/release/fairshare] [serve flags…]
"""

import argparse
import hashlib
import json
import re
import socket
import subprocess
import sys
import tempfile
import time

TOKEN = "fs_measure_agent_0123456789abcdef0123456789abcd"


def start(binary, extra):
    digest = hashlib.sha256(TOKEN.encode()).hexdigest()
    db = tempfile.mkdtemp()
    daemon = subprocess.Popen(
        [binary, "serve", "--listen", "127.0.0.1:0", "--database", f"sqlite:{db}/f.db",
         "--token-sha256", f"agent:{digest}", *extra],
        stderr=subprocess.PIPE, text=True)
    for line in daemon.stderr:
        found = re.search(r"listening addr=(\S+)", line)
        if found:
            host, port = found.group(1).rsplit(":", 1)
            return daemon, (host, int(port))
    sys.exit("the daemon did not start")


def connect(source, to):
    s = socket.socket()
    s.bind((source, 0))
    s.connect(to)
    return s


def get(source, to, path, token=None):
    """Seconds until the whole answer to `GET path` arrived, and its status line."""
    started = time.perf_counter()
    s = connect(source, to)
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    s.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\n{auth}Connection: close\r\n\r\n".encode())
    s.settimeout(60)
    answer = b""
    while chunk := s.recv(4096):
        answer += chunk
    s.close()
    status = answer.split(b"\r\n", 1)[0].decode() or "(closed unanswered)"
    return time.perf_counter() - started, status


def closed_after(s, started, limit):
    s.settimeout(limit)
    try:
        while s.recv(4096):
            pass
    except (socket.timeout, ConnectionError):
        pass
    return time.perf_counter() - started


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", default="target/release/fairshare")
    args, extra = parser.parse_known_args()
    daemon, to = start(args.binary, extra)
    try:
        config = subprocess.run([args.binary, "serve", "--check", *extra],
                                capture_output=True, text=True, check=True).stdout
        cap = int(re.search(r"max_connections = (\d+)", config).group(1))
        per_peer = re.search(r"max_connections_per_peer = (\d+)", config)
        per_peer = int(per_peer.group(1)) if per_peer else max(cap // 4, 1)
        header = float(re.search(r"header_timeout_s = ([\d.]+)", config).group(1))
        hosts = -(-cap // per_peer)
        started = time.perf_counter()
        silent = [connect(f"127.0.0.{2 + i // per_peer}", to) for i in range(cap)]
        opened = time.perf_counter() - started
        time.sleep(0.2)
        agent = get("127.0.0.1", to, "/v1/nodes", TOKEN)
        stranger = get(f"127.0.0.{2 + hosts}", to, "/healthz")
        held = [closed_after(s, started, header + 10) for s in silent]
        print(json.dumps({
            "max_connections": cap, "per_peer": per_peer, "header_timeout_s": header,
            "silent_connections": cap, "from_hosts": hosts, "opened_in_s": round(opened, 3),
            "agent_with_token_s": round(agent[0], 4), "agent_status": agent[1],
            "healthz_without_token_s": round(stranger[0], 4), "healthz_status": stranger[1],
            "silent_held_s": {"min": round(min(held), 3), "max": round(max(held), 3)},
        }, indent=1))
    finally:
        daemon.terminate()
        daemon.wait()


if __name__ == "__main__":
    main()
