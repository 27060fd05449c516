#!/usr/bin/env python3
"""An independent check of Switchboard's locks, written from docs/PROTOCOL.md section 14 alone.

    python3 tools/peer_lock.py --url ws://127.0.0.1:PORT             self-check against a running server
    python3 tools/peer_lock.py --url ws://127.0.0.1:PORT --ttl-check also wait out a lock's 10 s ttl
    python3 tools/peer_lock.py --selftest-encoding                    check the section's hex examples

Reuses the connection helpers of tools/peer.py. Needs PyPI's `websockets` and `msgpack`.
Exits 0 when every check passed, 1 when one failed, 2 when it could not run.
"""

import argparse
import asyncio
import os
import secrets
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer import SELF_CHECK_TIMEOUT, Report, is_error, login, selftest_encoding, run_check  # noqa: E402

# Error codes (PROTOCOL.md 14.6).
INVALID_PARAMETER = -10014
INVALID_CHANNEL_TYPE = -10019
RATE_EXCEEDED = -10021
CHANNEL_NOT_JOINED = -11001
CHANNEL_NOT_SUBSCRIBED = -11002
LOCK_OPERATION_PERFORMING = -14003
LOCK_ALREADY_EXIST = -14004
LOCK_INVALID_NAME = -14005
LOCK_NOT_ACQUIRED = -14006
LOCK_ACQUIRE_FAILED = -14007
LOCK_NOT_EXIST = -14008

# Event types (PROTOCOL.md 14.4).
SNAPSHOT, LOCK_SET, LOCK_REMOVED, LOCK_ACQUIRED, LOCK_RELEASED, LOCK_EXPIRED = 1, 2, 3, 4, 5, 6
LOCK_FEATURE = 8

DETAIL = {"lockName": "L", "owner": "alice", "ttl": 30, "fencingToken": 1}
EXAMPLES = [
    ("setLock", {"t": "setLock", "id": 6, "channelType": 1, "channel": "room", "lockName": "L", "ttl": 30},
     "86a174a77365744c6f636ba2696406ab6368616e6e656c5479706501a76368616e6e656ca4726f6f6da86c6f636b4e616d65a14ca374746c1e"),
    ("acquireLock", {"t": "acquireLock", "id": 7, "channelType": 1, "channel": "room", "lockName": "L", "retry": True},
     "86a174ab616371756972654c6f636ba2696407ab6368616e6e656c5479706501a76368616e6e656ca4726f6f6da86c6f636b4e616d65a14c"
     "a57265747279c3"),
    ("acquired", {"t": "ok", "id": 7, "result": "acquireLock", "acquired": True, "fencingToken": 1},
     "85a174a26f6ba2696407a6726573756c74ab616371756972654c6f636ba86163717569726564c3ac66656e63696e67546f6b656e01"),
    ("queued", {"t": "ok", "id": 8, "result": "acquireLock", "acquired": False},
     "84a174a26f6ba2696408a6726573756c74ab616371756972654c6f636ba86163717569726564c2"),
    ("getLocks answer", {"t": "ok", "id": 9, "result": "getLocks", "locks": [DETAIL]},
     "84a174a26f6ba2696409a6726573756c74a86765744c6f636b73a56c6f636b739184a86c6f636b4e616d65a14ca56f776e6572a5616c69"
     "6365a374746c1eac66656e63696e67546f6b656e01"),
    ("lockEvent", {"t": "lockEvent", "channelType": 1, "channel": "room", "eventType": 4, "locks": [DETAIL],
                   "timestamp": 1764400000123},
     "86a174a96c6f636b4576656e74ab6368616e6e656c5479706501a76368616e6e656ca4726f6f6da96576656e745479706504a56c6f636b73"
     "9184a86c6f636b4e616d65a14ca56f776e6572a5616c696365a374746c1eac66656e63696e67546f6b656e01a974696d657374616d70cf"
     "0000019ace6f6c7b"),
    ("lockGranted", {"t": "lockGranted", "channelType": 1, "channel": "room", "lockName": "L", "fencingToken": 2},
     "85a174ab6c6f636b4772616e746564ab6368616e6e656c5479706501a76368616e6e656ca4726f6f6da86c6f636b4e616d65a14cac6665"
     "6e63696e67546f6b656e02"),
    ("lockWaitFailed", {"t": "lockWaitFailed", "channelType": 1, "channel": "room", "lockName": "L", "code": -14008,
                        "reason": "L was removed"},
     "86a174ae6c6f636b576169744661696c6564ab6368616e6e656c5479706501a76368616e6e656ca4726f6f6da86c6f636b4e616d65a14c"
     "a4636f6465d1c948a6726561736f6ead4c207761732072656d6f766564"),
]


class Locks:
    """The lock requests of one peer on one channel."""

    def __init__(self, peer, channel):
        self.peer = peer
        self.channel = channel

    def request(self, t, **fields):
        return self.peer.request(t, channelType=1, channel=self.channel, **fields)

    def events(self):
        return [push for push in self.peer.pushes if push.get("t") == "lockEvent" and push.get("channel") == self.channel]

    def own_pushes(self, t):
        return [push for push in self.peer.pushes if push.get("t") == t and push.get("channel") == self.channel]


def acquired(answer, token=None):
    return (answer.get("t") == "ok" and answer.get("result") == "acquireLock" and answer.get("acquired") is True
            and isinstance(answer.get("fencingToken"), int) and (token is None or answer["fencingToken"] == token))


def queued(answer):
    return (answer.get("t") == "ok" and answer.get("result") == "acquireLock" and answer.get("acquired") is False
            and "fencingToken" not in answer)


async def self_check(url, app_id, token, ttl_check):
    report = Report("peer_lock")
    channel = f"py-locks-{secrets.token_hex(4)}"
    alice = await login(report, url, "alice", app_id, token)
    bob = await login(report, url, "bob", app_id, token)
    watcher = await login(report, url, "watcher", app_id, token)
    peers = [alice, bob, watcher]
    a, b, w = Locks(alice, channel), Locks(bob, channel), Locks(watcher, channel)
    try:
        answer = await watcher.request("subscribe", channel=channel, features=LOCK_FEATURE)
        report.check("watcher subscribed with the lock feature", answer.get("t") == "ok", repr(answer))
        snapshot = await watcher.wait_for_pushes(lambda p: p.get("t") == "lockEvent" and p.get("eventType") == SNAPSHOT, 1)
        report.check("watcher got an empty snapshot", len(snapshot) == 1 and snapshot[0].get("locks") == []
                     and snapshot[0].get("channelType") == 1 and isinstance(snapshot[0].get("timestamp"), int),
                     repr(snapshot))

        answer = await a.request("setLock", lockName="L", ttl=10)
        report.check(f"setLock in a message channel not subscribed gets {CHANNEL_NOT_SUBSCRIBED}",
                     is_error(answer, CHANNEL_NOT_SUBSCRIBED), repr(answer))
        answer = await alice.request("getLocks", channelType=2, channel=channel)
        report.check(f"getLocks in a stream channel not joined gets {CHANNEL_NOT_JOINED}",
                     is_error(answer, CHANNEL_NOT_JOINED), repr(answer))
        for peer in (alice, bob):
            answer = await peer.request("subscribe", channel=channel, features=1)
            report.check(f"{peer.name} subscribed", answer.get("t") == "ok", repr(answer))

        answer = await a.request("setLock", lockName="L", ttl=10)
        report.check("setLock answered ok", answer.get("t") == "ok" and "result" not in answer, repr(answer))
        answer = await a.request("setLock", lockName="L")
        report.check(f"setLock of an existing name gets {LOCK_ALREADY_EXIST}",
                     is_error(answer, LOCK_ALREADY_EXIST) and answer.get("operation") == "setLock", repr(answer))
        answer = await a.request("setLock", lockName="short", ttl=9)
        report.check(f"setLock with ttl 9 gets {INVALID_PARAMETER}", is_error(answer, INVALID_PARAMETER), repr(answer))
        answer = await a.request("setLock", lockName="")
        report.check(f"an empty lockName gets {LOCK_INVALID_NAME}", is_error(answer, LOCK_INVALID_NAME), repr(answer))
        answer = await alice.request("setLock", channelType=3, channel="bob", lockName="L")
        report.check(f"a lock in a user channel gets {INVALID_CHANNEL_TYPE}", is_error(answer, INVALID_CHANNEL_TYPE),
                     repr(answer))

        answer = await a.request("acquireLock", lockName="L")
        report.check("alice acquires the free lock", acquired(answer), repr(answer))
        first = answer.get("fencingToken", 0)
        answer = await a.request("acquireLock", lockName="L", retry=True)
        report.check("acquiring again answers the same token", acquired(answer, first), repr(answer))
        answer = await b.request("acquireLock", lockName="L", retry=False)
        report.check(f"bob without retry gets {LOCK_ACQUIRE_FAILED}", is_error(answer, LOCK_ACQUIRE_FAILED), repr(answer))
        answer = await b.request("acquireLock", lockName="L", retry=True)
        report.check("bob with retry waits in line (acquired: false)", queued(answer), repr(answer))
        answer = await b.request("acquireLock", lockName="L", retry=True)
        report.check(f"waiting twice gets {LOCK_OPERATION_PERFORMING}", is_error(answer, LOCK_OPERATION_PERFORMING),
                     repr(answer))
        answer = await b.request("releaseLock", lockName="nope")
        report.check(f"releasing a lock that does not exist gets {LOCK_NOT_EXIST}", is_error(answer, LOCK_NOT_EXIST),
                     repr(answer))
        answer = await w.request("getLocks")
        report.check("getLocks shows alice as owner with her token",
                     answer.get("result") == "getLocks"
                     and answer.get("locks") == [{"lockName": "L", "owner": "alice", "ttl": 10, "fencingToken": first}],
                     repr(answer))

        answer = await a.request("releaseLock", lockName="L")
        report.check("alice releases", answer.get("t") == "ok", repr(answer))
        granted = await bob.wait_for_pushes(lambda p: p.get("t") == "lockGranted", 1)
        second = granted[0].get("fencingToken", 0) if granted else 0
        report.check("bob is granted the lock with a larger token",
                     len(granted) == 1 and granted[0].get("lockName") == "L" and granted[0].get("channelType") == 1
                     and second > first, repr(granted))
        answer = await a.request("revokeLock", lockName="L", userId="alice")
        report.check(f"revoking from a user who does not own it gets {LOCK_NOT_ACQUIRED}",
                     is_error(answer, LOCK_NOT_ACQUIRED), repr(answer))
        answer = await a.request("revokeLock", lockName="L", userId="bob")
        report.check("alice revokes bob's lock", answer.get("t") == "ok", repr(answer))

        answer = await a.request("acquireLock", lockName="L")
        third = answer.get("fencingToken", 0)
        report.check("alice acquires it again, with a larger token", acquired(answer) and third > second, repr(answer))
        answer = await b.request("acquireLock", lockName="L", retry=True)
        report.check("bob waits again", queued(answer), repr(answer))
        answer = await a.request("removeLock", lockName="L")
        report.check("alice removes the lock", answer.get("t") == "ok", repr(answer))
        failed = await bob.wait_for_pushes(lambda p: p.get("t") == "lockWaitFailed", 1)
        report.check(f"bob's wait fails with {LOCK_NOT_EXIST}",
                     len(failed) == 1 and failed[0].get("code") == LOCK_NOT_EXIST and failed[0].get("lockName") == "L"
                     and isinstance(failed[0].get("reason"), str), repr(failed))

        expected = [SNAPSHOT, LOCK_SET, LOCK_ACQUIRED, LOCK_RELEASED, LOCK_ACQUIRED, LOCK_RELEASED, LOCK_ACQUIRED,
                    LOCK_REMOVED]
        await watcher.wait_for_pushes(lambda p: p.get("t") == "lockEvent", len(expected))
        events = w.events()
        report.check("the watcher saw every change in order", [e.get("eventType") for e in events] == expected,
                     repr([e.get("eventType") for e in events]))
        owners = [(e["locks"][0].get("owner"), e["locks"][0].get("fencingToken")) for e in events[1:] if e.get("locks")]
        report.check("each event names the lock as the documentation says", owners == [
            ("", 0), ("alice", first), ("alice", first), ("bob", second), ("bob", second), ("alice", third),
            ("alice", third)], repr(owners))

        # A lock held by a session that unsubscribes is released at once.
        answer = await bob.request("subscribe", channel=channel, features=4)
        await b.request("setLock", lockName="M")
        await b.request("acquireLock", lockName="M")
        answer = await a.request("acquireLock", lockName="M", retry=True)
        report.check("alice waits for M", queued(answer), repr(answer))
        await bob.request("unsubscribe", channel=channel)
        granted = await alice.wait_for_pushes(lambda p: p.get("t") == "lockGranted" and p.get("lockName") == "M", 1)
        report.check("bob unsubscribes: alice gets M", len(granted) == 1, repr(granted))

        # Acquires have a budget of 10 per second of their own (a fresh client, so no other acquire counts).
        erin = await login(report, url, "erin", app_id, token)
        peers.append(erin)
        await erin.request("subscribe", channel=channel, features=1)
        await w.request("setLock", lockName="R")
        e = Locks(erin, channel)
        answers = await asyncio.gather(*[e.request("acquireLock", lockName="R") for _ in range(11)])
        report.check(f"the 11th acquire within a second gets {RATE_EXCEEDED}",
                     sum(1 for x in answers if acquired(x)) == 10
                     and sum(1 for x in answers if is_error(x, RATE_EXCEEDED)) == 1, repr(answers))

        # A lock lives until removeLock: the channel's last member leaving leaves it there, free.
        frank = await login(report, url, "frank", app_id, token)
        peers.append(frank)
        alone = f"{channel}-alone"
        f = Locks(frank, alone)
        await frank.request("subscribe", channel=alone, features=1)
        answer = await f.request("setLock", lockName="L")
        report.check("frank sets a lock in a channel of his own", answer.get("t") == "ok", repr(answer))
        await frank.request("unsubscribe", channel=alone)
        await frank.request("subscribe", channel=alone, features=1)
        answer = await f.request("getLocks")
        report.check("after the last member left, the lock is still there, free",
                     [(lock.get("lockName"), lock.get("owner")) for lock in answer.get("locks", [])] == [("L", "")], repr(answer))

        if ttl_check:
            await ttl_expiry(report, url, app_id, token, channel, watcher, w)

        for peer in peers:
            if peer.failure is None:
                peer.heartbeats.cancel()
                await peer.request("logout")
    finally:
        for peer in peers:
            await peer.close()
    return report.summary()


async def ttl_expiry(report, url, app_id, token, channel, watcher, w):
    """An owner whose connection is cut keeps the lock for its ttl, then the waiter gets it."""
    carol = await login(report, url, "carol", app_id, token)
    dave = await login(report, url, "dave", app_id, token)
    c, d = Locks(carol, channel), Locks(dave, channel)
    for peer in (carol, dave):
        await peer.request("subscribe", channel=channel, features=1)
    await c.request("setLock", lockName="T", ttl=10)
    await c.request("acquireLock", lockName="T")
    answer = await d.request("acquireLock", lockName="T", retry=True)
    report.check("dave waits for T", queued(answer), repr(answer))
    carol.heartbeats.cancel()
    await carol.ws.close()  # no logout: the session waits for a resume
    await asyncio.sleep(8)
    report.check("8 s after the cut, dave has not got T", not d.own_pushes("lockGranted"))
    answer = await w.request("getLocks")
    report.check("carol still owns T", any(lock.get("lockName") == "T" and lock.get("owner") == "carol"
                                           for lock in answer.get("locks", [])), repr(answer))
    granted = await dave.wait_for_pushes(lambda p: p.get("t") == "lockGranted", 1)
    report.check("after the ttl, dave gets T", len(granted) == 1 and granted[0].get("lockName") == "T", repr(granted))
    released = [e for e in w.events() if e.get("eventType") == LOCK_RELEASED and e["locks"][0].get("lockName") == "T"]
    report.check("the watcher saw lockReleased naming carol",
                 len(released) == 1 and released[0]["locks"][0].get("owner") == "carol", repr(released))
    dave.heartbeats.cancel()
    await dave.request("logout")
    await dave.close()


def main():
    parser = argparse.ArgumentParser(description="Switchboard lock self-check (see docs/PROTOCOL.md section 14).")
    parser.add_argument("--url", help="the server, e.g. ws://127.0.0.1:8080")
    parser.add_argument("--app-id", default=os.environ.get("SWITCHBOARD_APP_ID", "demo"))
    parser.add_argument("--token", default=os.environ.get("SWITCHBOARD_TOKEN", ""))
    parser.add_argument("--ttl-check", action="store_true", help="also wait out a 10 s lock ttl (about 12 s)")
    parser.add_argument("--timeout", type=float, default=SELF_CHECK_TIMEOUT, help="total time allowed, in seconds")
    parser.add_argument("--selftest-encoding", action="store_true", help="only check the hex examples")
    args = parser.parse_args()

    if args.selftest_encoding:
        return selftest_encoding(EXAMPLES, "peer_lock selftest")
    if not args.url:
        parser.error("--url is required (or use --selftest-encoding)")
    return run_check("peer_lock", lambda url, app_id, token: self_check(url, app_id, token, args.ttl_check), args)


if __name__ == "__main__":
    sys.exit(main())
