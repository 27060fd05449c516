#!/usr/bin/env python3
"""Writes the seed corpora under tools/fuzz/corpus/<target>/ (run from the repository root).

The seeds are committed; rerun this after changing it. Each seed is a small well-formed input
(and a few near misses), so the fuzzer starts from the interesting paths.
"""
import base64, os, struct, zlib
import msgpack

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def write(target, name, data):
    os.makedirs(os.path.join(ROOT, target), exist_ok=True)
    with open(os.path.join(ROOT, target, name), "wb") as f:
        f.write(data)


def frame(opcode, payload, fin=True, mask=b"\x01\x02\x03\x04", rsv=0):
    head = bytes([(0x80 if fin else 0) | rsv << 4 | opcode])
    mbit = 0x80 if mask else 0
    n = len(payload)
    if n < 126:
        head += bytes([mbit | n])
    elif n <= 0xFFFF:
        head += bytes([mbit | 126]) + struct.pack(">H", n)
    else:
        head += bytes([mbit | 127]) + struct.pack(">Q", n)
    if mask:
        payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        head += mask
    return head + payload


# WebSocket parser: byte 0 = role bit (0 server, 1 client) + chunk size.
server, client = 0x00, 0x01
ws = {
    "text": (server, frame(1, b"Hello")),
    "binary-16bit-length": (server, frame(2, bytes(300))),
    "binary-64bit-length": (server, b"\x82\xff" + struct.pack(">Q", 5) + b"\x01\x02\x03\x04" + bytes(5)),
    "length-top-bit": (server, b"\x82\xff" + struct.pack(">Q", 2**63 + 5) + b"\x01\x02\x03\x04"),
    "fragmented-text": (server | 6, frame(1, "caf".encode(), fin=False) + frame(0, "é!".encode())),
    "ping-pong-close": (server, frame(9, b"hi") + frame(10, b"") + frame(8, struct.pack(">H", 1000) + b"bye")),
    "fragment-with-ping": (server | 2, frame(2, b"ab", fin=False) + frame(9, b"") + frame(0, b"cd")),
    "client-unmasked": (client, frame(1, "κόσμε".encode(), mask=None) + frame(8, b"", mask=None)),
    "invalid-utf8": (server, frame(1, b"\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5\xed\xa0\x80")),
    "reserved-bits": (server, frame(1, b"x", rsv=4)),
    "close-bad-code": (server, frame(8, struct.pack(">H", 1005))),
    "too-big": (server, frame(2, bytes(1100))),
}
for name, (first, data) in ws.items():
    write("websocket", name, bytes([first]) + data)

# HTTP handshake: byte 0 = chunk size.
request = (
    "GET /chat?x=1 HTTP/1.1\r\nHost: 127.0.0.1:9100\r\nUpgrade: websocket\r\n"
    "Connection: keep-alive, Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
    "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: chat, switchboard.v1\r\n"
    "Origin: https://app.example\r\n\r\n"
)
response = (
    "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\nSec-WebSocket-Protocol: switchboard.v1\r\n\r\n"
)
http = {
    "request": request,
    "request-with-frame": request + "\x81\x85\x01\x02\x03\x04Idoah",
    "request-no-origin": request.replace("Origin: https://app.example\r\n", ""),
    "request-other-origin": request.replace("app.example", "evil.example"),
    "request-http10": request.replace("HTTP/1.1", "HTTP/1.0"),
    "request-folded": request.replace("Upgrade: websocket\r\n", "Upgrade:\r\n websocket\r\n"),
    "response": response,
    "response-403": "HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n",
}
for name, text in http.items():
    write("http", name, b"\xff" + text.encode("latin-1"))

# MessagePack: client and server frames from docs/PROTOCOL.md, and assorted values.
pack = msgpack.packb
mp = {
    "login": pack({"t": "login", "id": 1, "appId": "app", "userId": "alice", "token": "",
                   "heartbeatInterval": 0, "presenceTimeout": 0}),
    "login-resume": pack({"t": "login", "id": 1, "appId": "app", "userId": "alice", "token": "007x",
                          "heartbeatInterval": 5, "presenceTimeout": 300, "resumeSession": 2**63,
                          "resumeSecret": "s"}),
    "subscribe": pack({"t": "subscribe", "id": 2, "channel": "lobby", "features": 5}),
    "publish-str": pack({"t": "publish", "id": 3, "channelType": 1, "channel": "lobby",
                         "message": "hello", "customType": "chat"}),
    "publish-bin": pack({"t": "publish", "id": 4, "channelType": 3, "channel": "bob",
                         "message": b"\x00\x01\xff"}),
    "heartbeat": pack({"t": "heartbeat", "id": 5}),
    "renew": pack({"t": "renewToken", "id": 6, "token": "006abc"}),
    "login-ok": pack({"t": "loginOk", "id": 1, "session": 7, "resumeSecret": "s", "resumed": False,
                      "heartbeatInterval": 5, "presenceTimeout": 300, "lostMessages": 0,
                      "lostChannels": [{"channelType": 1, "channel": "a"}]}),
    "error": pack({"t": "error", "id": 0, "code": -10002, "operation": "publish", "reason": "x"}),
    "message-push": pack({"t": "message", "channelType": 1, "channel": "lobby", "publisher": "a",
                          "message": "hi", "customType": ""}),
    "values": pack([None, True, False, -1, -33, 2**32, -(2**63), 1.5, "é", b"b", {"k": [1, {}]},
                    msgpack.ExtType(5, b"xy")], use_single_float=True) + pack(1.0e300),
    "deep": b"\x91" * 40 + b"\xc0",
    "huge-length": b"\xdb\xff\xff\xff\xff" + b"a",
}
for name, data in mp.items():
    write("msgpack", name, data)

# Tokens: byte 0 = mode (0 token text, 1 007 body, 2 006 content).
token006 = ("006970CA35de60c44645bbae8a215061b33IABZw3mqWUhXED+Z7dYvKSqlMY/ludxUmOWEKmJZglrh4wAAAABHv"
            "I4nEACH1hIAgEJVZQEA6AMQ/1Nl")
token007 = ("007eJxTYNjX92nrnp9q7E5WDkpVe+o6vrKH/csrfClxSjdXQaDU97UCg6W5gbOjsWlKqplBsomJmYlpUlJiqkWik"
            "aGpgZlhkrExw8fgVAE+Bob5bYwMjAxMDCASxGdlSMzJTE4FAOcNHPM=")
token007rtc = ("007eJxTYPi6+bBjqUlYeuxiBuaV5rZ1tXN3rOpySTnB0H2xbbLRM1EFBktzA2dHY9OUVDODZBMTMxPTpKTEVItEI0N"
               "TAzPDJGNjho/BqQ2BjAxaDAwMTAyMYBjBxMDAwlCUn5/LzJCUnwQR5mBnYABzAdSLHow=")
write("tokens", "006-text", b"\x00" + token006.encode())
write("tokens", "007-text", b"\x00" + token007.encode())
write("tokens", "007-rtc-text", b"\x00" + token007rtc.encode())
for name, token in [("007-body", token007), ("007-rtc-body", token007rtc)]:
    write("tokens", name, b"\x01" + zlib.decompress(base64.b64decode(token[3:])))
write("tokens", "006-content", b"\x02" + base64.b64decode(token006[35:]))

# Relay (what nodes publish to each other): byte 0 picks the decoder (0 envelope, 1 claim,
# 2 moved, 3 user command, 4 command answer, 5 node status, 6 app load).
pack = msgpack.packb
relay = {
    "envelope-channel": b"\x00" + pack([1, "n1", 0, "app", "room", 0, "room", "", "hello", "alice", "", 1700000000000]),
    "envelope-user-binary": b"\x00" + pack([1, "n2", 1, "app", "bob", 1, "bob", "", b"\x00\xff", "alice", "t", 1]),
    "envelope-other-version": b"\x00" + pack([2, "n1", 0, "app", "room", 0, "room", "", "x", "a", "", 0]),
    "claim": b"\x01" + pack(["claim", "n1", "app", "alice", 1700000000000000]),
    "moved": b"\x02" + pack(["moved", "n1", "app", "alice", 4294967297, "n2"]),
    "command-disconnect": b"\x03" + pack(["command", "n1", "7", "app", "alice", 0, "kicked"]),
    "command-unsubscribe": b"\x03" + pack(["command", "n1", "8", "app", "alice", 1, "room"]),
    "answer": b"\x04" + pack(["acted", "7", 2, 0, "", ""]),
    "answer-refused": b"\x04" + pack(["acted", "8", 0, -10001, "unsubscribe", "no such channel"]),
    "status": b"\x05" + pack([1, "n1", "1.0", "ws://127.0.0.1:9000", "host", 1700000000000,
                              [["redis", None], ["storage", "down"]], 0, 3, 2, 1]),
    "load": b"\x06" + b"12 10",
}
for name, data in relay.items():
    write("relay", name, data)
