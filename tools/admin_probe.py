#!/usr/bin/env python3
"""Speaks to a Switchboard admin listener with the standard library's HTTP client only.

  admin_probe.py request PORT METHOD PATH
                                        one request; prints the status, the Allow header if
                                        any, then the body
  admin_probe.py metrics PORT           GET /metrics; checks the content type and that every
                                        sample follows a HELP and a TYPE line of its family;
                                        prints every sample as "name{labels} value", sorted
  admin_probe.py keepalive PORT N       N GETs of /health/live on one connection; prints
                                        "reused N" when every one came back on the same socket
  admin_probe.py save-metrics PORT FILE writes the /metrics body to FILE (for promtool)
  admin_probe.py tls PORT CAFILE PATH   GET PATH over HTTPS, the certificate checked against CAFILE
                                        for 127.0.0.1; prints the status and the body, then whether
                                        a plain-HTTP request to the same port got an answer
  admin_probe.py hostile PORT KEY       misbehaving clients, each on its own socket, while 50 others
                                        dribble unfinished heads (slowloris): prints "NAME STATUS"
                                        per case, STATUS the answer's status or "closed"
Exits 1 with a message on stderr when something is not as the format requires.
"""
import http.client
import re
import socket
import ssl
import sys

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)$')


def fetch(port, path, connection=None, method="GET"):
    conn = connection or http.client.HTTPConnection("127.0.0.1", port, timeout=15)
    conn.request(method, path)
    response = conn.getresponse()
    return response, response.read().decode("utf-8")


def family_of(name, families):
    for suffix in ("_bucket", "_sum", "_count"):
        base = name[: -len(suffix)] if name.endswith(suffix) else None
        if base and families.get(base) == "histogram":
            return base
    return name


def parse_metrics(text):
    helped, families, samples = set(), {}, []
    for line in text.splitlines():
        if line.startswith("# HELP "):
            helped.add(line.split(" ")[2])
        elif line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ")
            if name not in helped:
                sys.exit(f"TYPE before HELP for {name}")
            families[name] = kind
        elif line:
            match = SAMPLE.match(line)
            if not match:
                sys.exit(f"not a sample line: {line!r}")
            name = match.group(1)
            if family_of(name, families) not in families:
                sys.exit(f"sample without TYPE: {line!r}")
            float(match.group(3))
            samples.append(f"{name}{match.group(2) or ''} {match.group(3)}")
    if not text.endswith("\n"):
        sys.exit("exposition does not end with a newline")
    return sorted(samples)


def raw_status(port, data, wait=5.0):
    """Sends `data` on a new socket; the answer's status line and Allow header, or "closed"."""
    with socket.create_connection(("127.0.0.1", port), timeout=wait) as sock:
        try:
            sock.sendall(data)
        except OSError:
            pass  # the server may close before reading everything: its answer still counts
        received = b""
        try:
            while b"\r\n\r\n" not in received:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                received += chunk
        except OSError:
            pass
    head = received.split(b"\r\n\r\n", 1)[0].decode("latin-1")
    if not head.startswith("HTTP/1.1 "):
        return "closed"
    allow = [line.split(":", 1)[1].strip() for line in head.split("\r\n") if line.lower().startswith("allow:")]
    return head.split(" ")[1] + (f" allow={allow[0]}" if allow else "")


def hostile(port, key):
    slow = []
    for _ in range(50):
        sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        sock.sendall(b"GET /health/live HTTP/1.1\r\nHost: a\r\n")
        slow.append(sock)
    response, _ = fetch(port, "/health/live")
    # Served beside the slow heads, not after the server gave up on them (its 10 s request limit):
    # they are all still open when the answer comes.
    still_open = 0
    for sock in slow:
        sock.setblocking(False)
        try:
            sock.recv(1)  # an answer (a timeout's) or the end: the server is done with it
        except BlockingIOError:
            still_open += 1
        except OSError:
            pass
    print(f"prompt-beside-slowloris {response.status} with {still_open} slow heads open")
    auth = f"Authorization: apikey {key}\r\n".encode()
    cases = [
        ("huge-head", b"GET /health/live HTTP/1.1\r\nHost: a\r\nX-Pad: " + b"a" * 20000 + b"\r\n\r\n"),
        ("huge-body", b"POST /api/info HTTP/1.1\r\nHost: a\r\n" + auth + b"Content-Length: 2000000\r\n\r\n"),
        ("chunked-body", b"POST /api/info HTTP/1.1\r\nHost: a\r\n" + auth + b"Transfer-Encoding: chunked\r\n\r\n"),
        ("bad-json", b"POST /api/info HTTP/1.1\r\nHost: a\r\n" + auth + b"Content-Length: 9\r\n\r\n{\"appId\":"),
        ("get-api", b"GET /api/info HTTP/1.1\r\nHost: a\r\n\r\n"),
        ("delete-page", b"DELETE / HTTP/1.1\r\nHost: a\r\n\r\n"),
        ("not-http", b"\x16\x03\x01\x02\x00 / HTTP/1.1\r\nHost: a\r\n\r\n"),
        ("bad-request-line", b"HELLO\r\n\r\n"),
    ]
    for name, data in cases:
        print(f"{name} {raw_status(port, data)}")
    for sock in slow:
        sock.close()
    response, _ = fetch(port, "/health/live")
    print(f"afterwards {response.status}")


def over_tls(port, cafile, path):
    context = ssl.create_default_context(cafile=cafile)
    conn = http.client.HTTPSConnection("127.0.0.1", port, timeout=15, context=context)
    conn.request("GET", path)
    response = conn.getresponse()
    print(response.status)
    print(response.read().decode("utf-8"))
    plain = raw_status(port, b"GET " + path.encode() + b" HTTP/1.1\r\nHost: a\r\n\r\n")
    print(f"plain {plain}")


def main():
    command, port = sys.argv[1], int(sys.argv[2])
    if command == "request":
        response, body = fetch(port, sys.argv[4], method=sys.argv[3])
        print(response.status)
        print(response.getheader("Allow", "-"))
        print(body)
    elif command == "metrics":
        response, body = fetch(port, "/metrics")
        kind = response.getheader("Content-Type", "")
        if response.status != 200 or not kind.startswith("text/plain; version=0.0.4"):
            sys.exit(f"status {response.status}, content type {kind!r}")
        print("\n".join(parse_metrics(body)))
    elif command == "save-metrics":
        response, body = fetch(port, "/metrics")
        with open(sys.argv[3], "w", encoding="utf-8") as out:
            out.write(body)
    elif command == "keepalive":
        count = int(sys.argv[3])
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=15)
        sockets = set()
        for _ in range(count):
            response, body = fetch(port, "/health/live", conn)
            if response.status != 200:
                sys.exit(f"status {response.status}: {body}")
            sockets.add(id(conn.sock))
        print(f"reused {count}" if len(sockets) == 1 else f"sockets {len(sockets)}")
    elif command == "tls":
        over_tls(port, sys.argv[3], sys.argv[4])
    elif command == "hostile":
        hostile(port, sys.argv[3])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
