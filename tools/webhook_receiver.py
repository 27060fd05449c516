#!/usr/bin/env python3
"""A webhook receiver for Switchboard's tests and for trying webhooks out (docs/WEBHOOKS.md).

    python3 tools/webhook_receiver.py --secret-file FILE [--log FILE] [--fail-first N] [--mode MODE]

Listens on 127.0.0.1 (a free port unless --port is given) and prints the port on the first line
of standard output. Each POST is checked as docs/WEBHOOKS.md says (HMAC-SHA256 of
"<X-Switchboard-Timestamp>.<body>" under the secret, compared in constant time) and written to
--log as one JSON line: {"verified": bool, "status": the answer, "event": the body, "headers": …}.
The first --fail-first requests are answered 500 (and logged, with "status": 500). --mode makes it
a hostile receiver instead: "blackhole" accepts and never answers, "garbage" answers bytes that
are not HTTP, "close" closes at once. Standard library only. Runs until killed.
"""

import argparse
import hashlib
import hmac
import http.server
import json
import os
import signal
import socket
import sys
import threading
import time


def verify(secret, headers, body):
    """The verifier docs/WEBHOOKS.md gives: True when the signature is the secret's."""
    timestamp = headers.get("X-Switchboard-Timestamp", "")
    signature = headers.get("X-Switchboard-Signature", "")
    expected = "sha256=" + hmac.new(secret, timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()
    fresh = timestamp.isdigit() and abs(time.time() - int(timestamp)) < 300
    return fresh and hmac.compare_digest(expected, signature)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--secret-file", required=True)
    parser.add_argument("--log")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--fail-first", type=int, default=0)
    parser.add_argument("--mode", choices=["ok", "blackhole", "garbage", "close"], default="ok")
    args = parser.parse_args()
    # A parent that ignores SIGTERM (a test runner) passes that on: stop on it regardless.
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    with open(args.secret_file, "rb") as handle:
        secret = handle.read().rstrip(b"\r\n")
    lock = threading.Lock()
    state = {"requests": 0}
    log = open(args.log, "a", buffering=1) if args.log else None

    class Receiver(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            with lock:
                state["requests"] += 1
                status = 500 if state["requests"] <= args.fail_first else 204
                try:
                    event = json.loads(body)
                except ValueError:
                    event = None
                if log:
                    log.write(json.dumps({
                        "verified": verify(secret, self.headers, body), "status": status, "event": event,
                        "headers": {name: value for name, value in self.headers.items()},
                    }) + "\n")
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.send_header("Connection", "close")
            self.end_headers()

        def log_message(self, *_):
            pass

    if args.mode == "ok":
        server = http.server.ThreadingHTTPServer(("127.0.0.1", args.port), Receiver)
        print(server.server_address[1], flush=True)
        server.serve_forever()
        return
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", args.port))
    listener.listen(128)
    print(listener.getsockname()[1], flush=True)
    held = []
    while True:
        connection, _ = listener.accept()
        if args.mode == "blackhole":
            held.append(connection)
        elif args.mode == "garbage":
            connection.recv(65536)
            connection.sendall(b"\x00\xffnot http at all\r\n\r\n")
            connection.close()
        else:
            connection.close()


if __name__ == "__main__":
    sys.exit(main())
