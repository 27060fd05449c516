#!/usr/bin/env python3
"""An independent Switchboard client, written from docs/PROTOCOL.md alone.

    python3 tools/peer.py --url ws://127.0.0.1:PORT      self-check against a running server
    python3 tools/peer.py --selftest-encoding            check msgpack encoding against the doc's hex

Needs PyPI's `websockets` and `msgpack`, pinned in tools/requirements.txt (tools/test.sh installs them).
Exits 0 when every check passed, 1 when one failed, 2 when it could not run (no server, timeout).
"""

import argparse
import asyncio
import os
import secrets
import sys
import time

from pydeps import require

require("msgpack", "websockets")

import msgpack  # noqa: E402

SUBPROTOCOL = "switchboard.v1"
MAX_FRAME = 64 * 1024 + 1024
ANSWER_TIMEOUT = 15.0  # seconds a request waits for its answer, as the Swift tests wait: a loaded machine stalls for seconds
BURST = 40  # publishes sent at once by the burst check: with the check's others, within 60 a second (the publish limit)
SELF_CHECK_TIMEOUT = 120.0  # the whole self-check: a guard against a hang, not a measure of speed


class NoAnswer(Exception):
    """A request's answer did not come within ANSWER_TIMEOUT."""


async def answer_to(name, t, request_id, future):
    """The answer `future` resolves to, or NoAnswer naming the request after ANSWER_TIMEOUT."""
    try:
        return await asyncio.wait_for(future, timeout=ANSWER_TIMEOUT)
    except asyncio.TimeoutError:
        raise NoAnswer(f"{name}: no answer to {t} (id {request_id}) within {ANSWER_TIMEOUT:g} s") from None


RESPONSE_TYPES = ("ok", "loginOk", "error")

# Error codes (PROTOCOL.md section 5).
INVALID_CHANNEL_NAME = -10008
CHANNEL_RECEIVER_OFFLINE = -11033

# The examples of PROTOCOL.md section 7: (name, map in key order, hex).
EXAMPLES = [
    ("login",
     {"t": "login", "id": 1, "appId": "demo", "userId": "alice", "token": "", "heartbeatInterval": 5,
      "presenceTimeout": 300},
     "87a174a56c6f67696ea2696401a56170704964a464656d6fa6757365724964a5616c696365a5746f6b656ea0b16865617274"
     "62656174496e74657276616c05af70726573656e636554696d656f7574cd012c"),
    ("login with resume",
     {"t": "login", "id": 1, "appId": "demo", "userId": "alice", "token": "", "heartbeatInterval": 5,
      "presenceTimeout": 300, "resumeSession": 1, "resumeSecret": "k3y"},
     "89a174a56c6f67696ea2696401a56170704964a464656d6fa6757365724964a5616c696365a5746f6b656ea0b16865617274"
     "62656174496e74657276616c05af70726573656e636554696d656f7574cd012cad726573756d6553657373696f6e01ac7265"
     "73756d65536563726574a36b3379"),
    ("loginOk",
     {"t": "loginOk", "id": 1, "session": 1, "resumeSecret": "k3y", "resumed": False, "heartbeatInterval": 5,
      "presenceTimeout": 300, "lostMessages": 0, "lostChannels": []},
     "89a174a76c6f67696e4f6ba2696401a773657373696f6e01ac726573756d65536563726574a36b3379a7726573756d6564c2b1"
     "686561727462656174496e74657276616c05af70726573656e636554696d656f7574cd012cac6c6f73744d65737361676573"
     "00ac6c6f73744368616e6e656c7390"),
    ("subscribe",
     {"t": "subscribe", "id": 2, "channel": "room", "features": 5},
     "84a174a9737562736372696265a2696402a76368616e6e656ca4726f6f6da8666561747572657305"),
    ("publish string",
     {"t": "publish", "id": 3, "channelType": 1, "channel": "room", "message": "hi"},
     "85a174a77075626c697368a2696403ab6368616e6e656c5479706501a76368616e6e656ca4726f6f6da76d657373616765a26869"),
    ("publish binary",
     {"t": "publish", "id": 4, "channelType": 3, "channel": "bob", "message": b"\x01\x02\x03", "customType": "raw"},
     "86a174a77075626c697368a2696404ab6368616e6e656c5479706503a76368616e6e656ca3626f62a76d657373616765c40301"
     "0203aa637573746f6d54797065a3726177"),
    ("ok", {"t": "ok", "id": 3}, "82a174a26f6ba2696403"),
    ("message push",
     {"t": "message", "channelType": 1, "channel": "room", "message": "hi", "publisher": "alice",
      "timestamp": 1764400000123},
     "86a174a76d657373616765ab6368616e6e656c5479706501a76368616e6e656ca4726f6f6da76d657373616765a26869a97075"
     "626c6973686572a5616c696365a974696d657374616d70cf0000019ace6f6c7b"),
    ("error",
     {"t": "error", "id": 4, "code": -11033, "operation": "publish", "reason": "bob is offline"},
     "85a174a56572726f72a2696404a4636f6465d1d4e7a96f7065726174696f6ea77075626c697368a6726561736f6eae626f6220"
     "6973206f66666c696e65"),
    ("heartbeat", {"t": "heartbeat", "id": 5}, "82a174a9686561727462656174a2696405"),
    ("tokenPrivilegeWillExpire",
     {"t": "tokenPrivilegeWillExpire", "secondsLeft": 30},
     "82a174b8746f6b656e50726976696c65676557696c6c457870697265ab7365636f6e64734c6566741e"),
    ("messagesMayBeLost",
     {"t": "messagesMayBeLost", "channelType": 1, "channel": "room"},
     "83a174b16d657373616765734d617942654c6f7374ab6368616e6e656c5479706501a76368616e6e656ca4726f6f6d"),
    ("closing",
     {"t": "closing", "reason": 27, "detail": "same user logged in elsewhere"},
     "83a174a7636c6f73696e67a6726561736f6e1ba664657461696cbd73616d652075736572206c6f6767656420696e20656c7365"
     "7768657265"),
]


class Report:
    """Counts and prints checks."""

    def __init__(self, label):
        self.label = label
        self.passed = 0
        self.failed = 0

    def check(self, name, condition, detail=""):
        if condition:
            self.passed += 1
            print(f"  ok   {name}")
        else:
            self.failed += 1
            print(f"  FAIL {name}" + (f": {detail}" if detail else ""))
        return condition

    def summary(self):
        print(f"{self.label}: {self.passed} passed, {self.failed} failed")
        return 0 if self.failed == 0 else 1


def encode(frame):
    """One frame: a MessagePack map with string keys; str stays str, bytes become bin."""
    return msgpack.packb(frame, use_bin_type=True)


def decode(data):
    """Decodes one binary frame into a dict with string keys, or raises ValueError."""
    if isinstance(data, str):
        raise ValueError("received a text message; the protocol uses binary messages only")
    frame = msgpack.unpackb(data, raw=False, strict_map_key=True)
    if not isinstance(frame, dict) or not all(isinstance(key, str) for key in frame):
        raise ValueError(f"frame is not a map with string keys: {frame!r}")
    if not isinstance(frame.get("t"), str):
        raise ValueError(f"frame has no string \"t\": {frame!r}")
    return frame


def selftest_encoding(examples=EXAMPLES, label="peer selftest"):
    """Checks (name, map, hex) examples against msgpack and against docs/PROTOCOL.md."""
    report = Report(label)
    doc_path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs", "PROTOCOL.md")
    doc = open(doc_path, encoding="utf-8").read() if os.path.exists(doc_path) else None
    for name, frame, expected_hex in examples:
        packed = encode(frame)
        report.check(f"packb({name}) equals the documented bytes", packed.hex() == expected_hex,
                     f"got {packed.hex()}")
        report.check(f"unpackb({name}) gives the map back", decode(bytes.fromhex(expected_hex)) == frame)
        if doc is not None:
            report.check(f"{name} hex appears in PROTOCOL.md", expected_hex in doc)
    return report.summary()


class Peer:
    """One logged-in connection: sends requests, matches answers by id, collects pushes."""

    def __init__(self, name, ws):
        self.name = name
        self.ws = ws
        self.next_id = 0
        self.pending = {}
        # Requests whose caller stopped waiting (timed out, or cancelled like a heartbeat at close):
        # their answers may still come and are dropped.
        self.abandoned = set()
        self.pushes = []
        self.push_arrived = asyncio.Event()
        self.failure = None
        self.reader = asyncio.create_task(self._read())
        self.heartbeats = None

    async def _read(self):
        try:
            async for data in self.ws:
                frame = decode(data)
                if frame["t"] in RESPONSE_TYPES:
                    future = self.pending.pop(frame.get("id"), None)
                    if future is None:
                        if frame.get("id") in self.abandoned:
                            self.abandoned.discard(frame.get("id"))
                            continue
                        raise ValueError(f"answer to an unknown request id: {frame!r}")
                    if not future.done():
                        future.set_result(frame)
                else:
                    self.pushes.append(frame)
                    self.push_arrived.set()
        except Exception as error:  # noqa: BLE001 - reported through the pending requests
            self.failure = error
        finally:
            if self.failure is None:
                self.failure = ConnectionError(f"{self.name}: connection closed")
            for future in self.pending.values():
                if not future.done():
                    future.set_exception(self.failure)
            self.pending.clear()

    async def request(self, t, **fields):
        """Sends a request and returns its answer (ok, loginOk or error)."""
        if self.failure is not None:
            raise self.failure
        self.next_id += 1
        request_id = self.next_id
        future = asyncio.get_running_loop().create_future()
        self.pending[request_id] = future
        try:
            await self.ws.send(encode({"t": t, "id": request_id, **fields}))
            answer = await answer_to(self.name, t, request_id, future)
        except BaseException:
            if self.pending.pop(request_id, None) is not None:
                self.abandoned.add(request_id)
            raise
        if answer.get("id") != request_id:
            raise ValueError(f"answer id {answer.get('id')} for request {request_id}")
        return answer

    def start_heartbeats(self, interval):
        async def beat():
            try:
                while True:
                    await asyncio.sleep(interval)
                    await self.request("heartbeat")
            except (asyncio.CancelledError, ConnectionError, ValueError, NoAnswer):
                pass  # the reader reports a dead connection
        self.heartbeats = asyncio.create_task(beat())

    async def wait_for_pushes(self, predicate, count, timeout=ANSWER_TIMEOUT):
        """Waits until `count` pushes match `predicate`; returns the matching ones."""
        deadline = time.monotonic() + timeout
        while True:
            matching = [push for push in self.pushes if predicate(push)]
            left = deadline - time.monotonic()
            if len(matching) >= count or left <= 0:
                return matching
            self.push_arrived.clear()
            try:
                await asyncio.wait_for(self.push_arrived.wait(), timeout=left)
            except asyncio.TimeoutError:
                pass

    async def close(self):
        if self.heartbeats is not None:
            self.heartbeats.cancel()
        await self.ws.close()
        self.reader.cancel()


async def connect(url, name):
    try:
        from websockets.asyncio.client import connect as ws_connect
    except ImportError:  # websockets < 13
        from websockets import connect as ws_connect
    ws = await ws_connect(url, subprotocols=[SUBPROTOCOL], max_size=MAX_FRAME, open_timeout=ANSWER_TIMEOUT)
    return Peer(name, ws)


def is_error(answer, code):
    return answer.get("t") == "error" and answer.get("code") == code


async def login(report, url, user_id, app_id, token):
    peer = await connect(url, user_id)
    report.check(f"{user_id}: server chose subprotocol {SUBPROTOCOL}", peer.ws.subprotocol == SUBPROTOCOL,
                 f"got {peer.ws.subprotocol!r}")
    answer = await peer.request("login", appId=app_id, userId=user_id, token=token, heartbeatInterval=5,
                                presenceTimeout=30)
    good = (answer.get("t") == "loginOk" and isinstance(answer.get("session"), int)
            and isinstance(answer.get("resumeSecret"), str) and answer.get("resumed") is False
            and isinstance(answer.get("heartbeatInterval"), int) and answer.get("heartbeatInterval") > 0
            and isinstance(answer.get("presenceTimeout"), int)
            and answer.get("lostMessages") == 0 and answer.get("lostChannels") == [])
    if not report.check(f"{user_id}: login answered loginOk with every field", good, repr(answer)):
        raise RuntimeError(f"{user_id} could not log in: {answer!r}")
    peer.start_heartbeats(answer["heartbeatInterval"])
    return peer


def message_check(report, who, pushes, expected):
    """Exactly one push, with the expected fields."""
    if not report.check(f"{who} received it exactly once", len(pushes) == 1, f"received {len(pushes)}"):
        return
    push = dict(pushes[0])
    # docs/PROTOCOL.md §4.4: the server leaves an empty topic and custom type out; absent reads as "".
    problems = [f"an empty {key} sent" for key in ("topic", "customType") if push.get(key) == ""]
    for key in ("topic", "customType"):
        push.setdefault(key, "")
    problems += [f"{key}={push.get(key)!r}, expected {value!r}" for key, value in expected.items()
                 if push.get(key) != value or type(push.get(key)) is not type(value)]
    if not isinstance(push.get("timestamp"), int) or push.get("timestamp") <= 0:
        problems.append(f"timestamp={push.get('timestamp')!r}")
    report.check(f"{who} got the right fields", not problems, "; ".join(problems))


async def self_check(url, app_id, token):
    report = Report("peer")
    suffix = secrets.token_hex(4)
    channel = f"py-peer-{suffix}"
    alice = await login(report, url, "py-alice", app_id, token)
    bob = await login(report, url, "py-bob", app_id, token)
    try:
        answer = await alice.request("heartbeat")
        report.check("heartbeat answered ok", answer.get("t") == "ok", repr(answer))

        for peer in (alice, bob):
            answer = await peer.request("subscribe", channel=channel, features=5)
            report.check(f"{peer.name} subscribed to {channel}", answer.get("t") == "ok", repr(answer))

        def on_channel(body):
            return lambda push: (push.get("t") == "message" and push.get("channelType") == 1
                                 and push.get("channel") == channel and push.get("message") == body)

        text = "hello from python \u2713 \u00e9\u00e8 \U0001f44b"
        answer = await alice.request("publish", channelType=1, channel=channel, message=text, customType="text")
        report.check("publish of a string answered ok", answer.get("t") == "ok", repr(answer))
        data = bytes(range(256)) * 4
        answer = await alice.request("publish", channelType=1, channel=channel, message=data)
        report.check("publish of binary answered ok", answer.get("t") == "ok", repr(answer))

        for body in (text, data):
            for peer in (alice, bob):
                await peer.wait_for_pushes(on_channel(body), 1)
        await asyncio.sleep(0.5)  # time for a duplicate to show up
        for body, kind, custom in ((text, "string", "text"), (data, "binary", "")):
            for peer in (alice, bob):
                message_check(report, f"{peer.name} ({kind})", [p for p in peer.pushes if on_channel(body)(p)], {
                    "channelType": 1, "channel": channel, "topic": "", "message": body,
                    "publisher": "py-alice", "customType": custom})

        # A burst sent without waiting for answers: its publishes reach the server together and
        # leave as one write per subscriber (their frames back to back), each a frame of its own.
        burst = [f"burst {suffix} {n}" for n in range(BURST)]
        answers = await asyncio.gather(*(alice.request("publish", channelType=1, channel=channel, message=body)
                                         for body in burst))
        report.check(f"a burst of {BURST} publishes answered ok", all(a.get("t") == "ok" for a in answers),
                     repr([a for a in answers if a.get("t") != "ok"][:3]))
        in_burst = lambda push: push.get("t") == "message" and push.get("message") in burst  # noqa: E731
        for peer in (alice, bob):
            await peer.wait_for_pushes(in_burst, BURST)
        await asyncio.sleep(0.3)  # time for a duplicate to show up
        for peer in (alice, bob):
            got = [p.get("message") for p in peer.pushes if in_burst(p)]
            report.check(f"{peer.name} got the burst once each, in order", got == burst,
                         f"{len(got)} of {BURST}, first out of place: "
                         f"{next((g for g, b in zip(got, burst) if g != b), None)!r}")

        direct = f"direct hi {suffix}"
        answer = await alice.request("publish", channelType=3, channel="py-bob", message=direct)
        report.check("publish to user py-bob answered ok", answer.get("t") == "ok", repr(answer))
        is_direct = lambda push: push.get("t") == "message" and push.get("message") == direct  # noqa: E731
        await bob.wait_for_pushes(is_direct, 1)
        await asyncio.sleep(0.3)
        message_check(report, "py-bob (user channel)", [p for p in bob.pushes if is_direct(p)], {
            "channelType": 3, "channel": "py-alice", "topic": "", "message": direct, "publisher": "py-alice",
            "customType": ""})
        report.check("py-alice did not get the user-channel message", not [p for p in alice.pushes if is_direct(p)])

        answer = await alice.request("publish", channelType=3, channel=f"py-nobody-{suffix}", message="anyone?")
        report.check(f"publish to an offline user gets {CHANNEL_RECEIVER_OFFLINE}",
                     is_error(answer, CHANNEL_RECEIVER_OFFLINE) and answer.get("operation") == "publish"
                     and isinstance(answer.get("reason"), str), repr(answer))

        long_name = "c" * 65
        answer = await alice.request("subscribe", channel=long_name, features=5)
        report.check(f"subscribe to a 65-character channel gets {INVALID_CHANNEL_NAME}",
                     is_error(answer, INVALID_CHANNEL_NAME) and answer.get("operation") == "subscribe",
                     repr(answer))
        answer = await alice.request("publish", channelType=1, channel=long_name, message="x")
        report.check(f"publish to a 65-character channel gets {INVALID_CHANNEL_NAME}",
                     is_error(answer, INVALID_CHANNEL_NAME), repr(answer))

        for peer in (alice, bob):
            peer.heartbeats.cancel()
            answer = await peer.request("logout")
            report.check(f"{peer.name} logout answered ok", answer.get("t") == "ok", repr(answer))
    finally:
        await alice.close()
        await bob.close()
    return report.summary()


def run_cli(name, description, check, selftest=None, timeout=SELF_CHECK_TIMEOUT):
    """The command line every check shares: --url runs `check(url, app_id, token)` within --timeout seconds,
    --selftest-encoding runs `selftest()` when the check has one. Returns the exit status."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--url", help="the server, e.g. ws://127.0.0.1:8080")
    parser.add_argument("--app-id", default=os.environ.get("SWITCHBOARD_APP_ID", "demo"),
                        help="appId for login (default: $SWITCHBOARD_APP_ID or 'demo')")
    parser.add_argument("--token", default=os.environ.get("SWITCHBOARD_TOKEN", ""),
                        help="token for login (default: $SWITCHBOARD_TOKEN or empty)")
    parser.add_argument("--timeout", type=float, default=timeout, help="total time allowed, in seconds")
    if selftest:
        parser.add_argument("--selftest-encoding", action="store_true",
                            help="only check msgpack encoding against the hex examples of docs/PROTOCOL.md")
    args = parser.parse_args()

    if selftest and args.selftest_encoding:
        return selftest()
    if not args.url:
        parser.error("--url is required" + (" (or use --selftest-encoding)" if selftest else ""))
    return run_check(name, check, args)


def run_cluster_cli(name, description, checks):
    """The command line of the cluster checks: two or more --url, one per node of one cluster; runs each of
    `checks(report, urls, app_id, token, suffix)` in turn within --timeout seconds. Returns the exit status."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--url", action="append", required=True,
                        help="a node, e.g. ws://127.0.0.1:8080; give two or more, each of another node")
    parser.add_argument("--app-id", default=os.environ.get("SWITCHBOARD_APP_ID", "demo"))
    parser.add_argument("--token", default=os.environ.get("SWITCHBOARD_TOKEN", ""))
    parser.add_argument("--timeout", type=float, default=SELF_CHECK_TIMEOUT)
    args = parser.parse_args()
    if len(args.url) < 2:
        parser.error("give two or more --url, one per node")

    async def check(urls, app_id, token):
        report = Report(name)
        suffix = secrets.token_hex(4)
        for each in checks:
            await each(report, urls, app_id, token, suffix)
        return report.summary()

    return run_check(name, check, args)


def run_check(label, check, args):
    """Runs `check(url, app_id, token)` within `args.timeout`; the exit status (2: it could not run)."""
    try:
        return asyncio.run(asyncio.wait_for(check(args.url, args.app_id, args.token), args.timeout))
    except asyncio.TimeoutError:
        print(f"{label}: FAILED: the self-check did not finish within {args.timeout:g} s")
    except OSError as error:
        print(f"{label}: FAILED: cannot connect to {args.url}: {error}")
    except Exception as error:  # noqa: BLE001 - any other failure is reported, not raised
        print(f"{label}: FAILED: {type(error).__name__}: {error}")
    return 2


def main():
    return run_cli("peer", "Switchboard protocol self-check (see docs/PROTOCOL.md).", self_check, selftest_encoding)


if __name__ == "__main__":
    sys.exit(main())
