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
Exits 1 with a message on stderr when something is not as the format requires.
"""
import http.client
import re
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
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
