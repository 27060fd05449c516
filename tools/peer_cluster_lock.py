#!/usr/bin/env python3
"""An independent check of Switchboard's cluster mode for locks, written from docs/PROTOCOL.md §14 alone:
clients on different nodes of one cluster share one set of locks per channel; one owner at a time with
fencing tokens that only grow, events heard on every node, waiters granted across nodes, and metadata
writes under a lock checked wherever the owner is.

    python3 tools/peer_cluster_lock.py --url ws://127.0.0.1:P1 --url ws://127.0.0.1:P2 [--url ws://127.0.0.1:P3 …]
        [--kill-first-node PID | --pause-first-node PID]

With --kill-first-node (the process id of the first --url's node), it then kills that node with SIGKILL
while a client of it holds a lock (ttl 10 s) that a client of the second node waits for, and checks that
the cluster reaps the dead node: the waiter is granted the lock between TTL − 1 s and TTL + 3 s after
the kill (the ttl counts from the dead node's last beat, at most a second before the kill; docs/CLUSTER.md
states the bound), and a member on the last node hears lockReleased then lockAcquired.

With --pause-first-node instead, it stops that node (SIGSTOP) for 6 s while its client holds a lock with a
ttl of 30 s that the second node's client waits for, then lets it go on (SIGCONT): meanwhile the cluster
reaps the node, so once awake it ends its sessions (the holder is told `closing` 28, kickedOutByServer),
and the waiter gets the lock then, long before the ttl.

Needs PyPI's `websockets` and `msgpack`. Run the nodes with `switchboard serve --no-rate-limits`.
Exits 0 when every check passed, 1 when one failed, 2 when it could not run.
"""

import argparse
import asyncio
import functools
import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer import is_error, login, run_cluster_cli  # noqa: E402

LOCK = 8  # the lock bit of subscribe's features (§3.5)
MESSAGE = 4
SNAPSHOT, LOCK_SET, LOCK_REMOVED, LOCK_ACQUIRED, LOCK_RELEASED = 1, 2, 3, 4, 5  # §14.4
LOCK_ACQUIRE_FAILED = -14007  # §14.6
STORAGE_LOCK_NOT_ACQUIRED = -12008  # §13.7


def lock_events(channel):
    return lambda push: push.get("t") == "lockEvent" and push.get("channel") == channel


def granted(channel):
    return lambda push: push.get("t") == "lockGranted" and push.get("channel") == channel


async def take(peer, channel, name):
    """Acquires `name` with retry and returns its token: at once, or from the `lockGranted` that follows."""
    before = len([push for push in peer.pushes if granted(channel)(push)])
    answer = await peer.request("acquireLock", channelType=1, channel=channel, lockName=name, retry=True)
    if answer.get("t") != "ok":
        raise ValueError(f"{peer.name}: acquireLock: {answer!r}")
    if answer.get("acquired") is True:
        return answer.get("fencingToken")
    grants = await peer.wait_for_pushes(granted(channel), before + 1)
    if len(grants) <= before:
        raise ValueError(f"{peer.name}: no lockGranted")
    return grants[before].get("fencingToken")


async def lock_checks(report, urls, app_id, token, suffix):
    channel = f"cluster-lock-{suffix}"
    members = [await login(report, url, f"lk-member-{index}-{suffix}", app_id, token) for index, url in enumerate(urls)]
    workers = [await login(report, url, f"lk-worker-{index}-{suffix}", app_id, token) for index, url in enumerate(urls)]
    try:
        for peer in members:
            answer = await peer.request("subscribe", channel=channel, features=LOCK)
            snapshot = await peer.wait_for_pushes(lock_events(channel), 1)
            report.check(f"{peer.name} subscribed with the lock feature and got a snapshot",
                         answer.get("t") == "ok" and snapshot[:1] and snapshot[0].get("eventType") == SNAPSHOT,
                         repr(snapshot[:1]))
        for peer in workers:
            answer = await peer.request("subscribe", channel=channel, features=MESSAGE)
            report.check(f"{peer.name} subscribed", answer.get("t") == "ok", repr(answer))

        answer = await members[0].request("setLock", channelType=1, channel=channel, lockName="L", ttl=30)
        report.check("setLock on the first node is ok", answer.get("t") == "ok", repr(answer))
        for peer in members:
            got = await peer.wait_for_pushes(lock_events(channel), 2)
            report.check(f"{peer.name} heard lockSet", got[1:2] and got[1].get("eventType") == LOCK_SET, repr(got[1:2]))

        first = await workers[1].request("acquireLock", channelType=1, channel=channel, lockName="L")
        report.check("the second node's worker acquires the free lock",
                     first.get("acquired") is True and isinstance(first.get("fencingToken"), int), repr(first))
        other = await workers[-1].request("acquireLock", channelType=1, channel=channel, lockName="L", retry=False)
        report.check(f"the same lock on the last node is held: {LOCK_ACQUIRE_FAILED}", is_error(other, LOCK_ACQUIRE_FAILED),
                     repr(other))
        written = await workers[1].request("setChannelMetadata", channelType=1, channel=channel,
                                           items=[{"key": "k", "value": "v"}], lock="L")
        report.check("the owner writes metadata under the lock", written.get("t") == "ok", repr(written))
        refused = await workers[0].request("setChannelMetadata", channelType=1, channel=channel,
                                           items=[{"key": "k", "value": "w"}], lock="L")
        report.check(f"a non-owner on another node is refused: {STORAGE_LOCK_NOT_ACQUIRED}",
                     is_error(refused, STORAGE_LOCK_NOT_ACQUIRED), repr(refused))

        queued = await workers[-1].request("acquireLock", channelType=1, channel=channel, lockName="L", retry=True)
        report.check("a waiter on the last node is queued", queued.get("acquired") is False, repr(queued))
        answer = await workers[1].request("releaseLock", channelType=1, channel=channel, lockName="L")
        grants = await workers[-1].wait_for_pushes(granted(channel), 1)
        report.check("the owner's release on one node grants the waiter on another, with a larger token",
                     answer.get("t") == "ok" and grants[:1]
                     and grants[0].get("fencingToken", 0) > first.get("fencingToken", 0), repr(grants[:1]))
        for peer in members:
            got = await peer.wait_for_pushes(lock_events(channel), 5)
            kinds = [(push.get("eventType"), (push.get("locks") or [{}])[0].get("owner", "")) for push in got[2:5]]
            report.check(f"{peer.name} heard acquired, released, acquired, in order",
                         kinds == [(LOCK_ACQUIRED, workers[1].name), (LOCK_RELEASED, workers[1].name),
                                   (LOCK_ACQUIRED, workers[-1].name)], repr(kinds))
        await workers[-1].request("releaseLock", channelType=1, channel=channel, lockName="L")

        # Every worker takes the lock three times, all at once: one owner at a time, tokens that only grow.
        state = {"holder": None, "last": 0, "violations": [], "turns": 0}

        async def turns(peer):
            for _ in range(3):
                token_now = await take(peer, channel, "L")
                if state["holder"] is not None:
                    state["violations"].append(f"{peer.name} entered while {state['holder']} held it")
                if not isinstance(token_now, int) or token_now <= state["last"]:
                    state["violations"].append(f"token {token_now} after {state['last']}")
                state["holder"], state["last"] = peer.name, token_now if isinstance(token_now, int) else state["last"]
                state["turns"] += 1
                await asyncio.sleep(0.01)
                state["holder"] = None
                await peer.request("releaseLock", channelType=1, channel=channel, lockName="L")

        await asyncio.gather(*[turns(peer) for peer in workers])
        report.check(f"{len(workers)} workers on {len(urls)} nodes took {3 * len(workers)} turns, one owner at a time, "
                     "tokens growing", state["turns"] == 3 * len(workers) and not state["violations"],
                     repr(state["violations"][:3]))

        answer = await members[-1].request("removeLock", channelType=1, channel=channel, lockName="L")
        for peer in members:
            got = await peer.wait_for_pushes(lambda push: lock_events(channel)(push)
                                             and push.get("eventType") == LOCK_REMOVED, 1)
            report.check(f"{peer.name} heard the lock removed on another node", answer.get("t") == "ok" and len(got) == 1,
                         repr(got[:1]))
    finally:
        for peer in members + workers:
            await peer.close()


TTL = 10  # the least ttl a lock may have (§14.6)
KICKED_OUT_BY_SERVER = 28  # §4.6


async def dead_holder_checks(pid, report, urls, app_id, token, suffix):
    """Kills node `pid` (the first url's) while its client holds a lock a client of the second node waits for."""
    channel = f"cluster-dead-{suffix}"
    holder = await login(report, urls[0], f"dh-holder-{suffix}", app_id, token)
    waiter = await login(report, urls[1], f"dh-waiter-{suffix}", app_id, token)
    member = await login(report, urls[-1], f"dh-member-{suffix}", app_id, token)
    try:
        for peer in (holder, waiter, member):
            await peer.request("subscribe", channel=channel, features=LOCK)
            await peer.wait_for_pushes(lock_events(channel), 1)
        answer = await holder.request("setLock", channelType=1, channel=channel, lockName="L", ttl=TTL)
        taken = await holder.request("acquireLock", channelType=1, channel=channel, lockName="L")
        queued = await waiter.request("acquireLock", channelType=1, channel=channel, lockName="L", retry=True)
        report.check("the first node's client holds the lock, the second node's waits for it",
                     answer.get("t") == "ok" and taken.get("acquired") is True and queued.get("acquired") is False,
                     repr((answer, taken, queued)))
        os.kill(pid, signal.SIGKILL)
        killed = time.monotonic()
        grants = await waiter.wait_for_pushes(granted(channel), 1, timeout=TTL + 10)
        waited = time.monotonic() - killed
        report.check(f"the holder's node killed: the waiter on another node got the lock {waited:.2f} s later "
                     f"(bound {TTL - 1}-{TTL + 3} s), with a larger token",
                     grants[:1] and TTL - 1 <= waited <= TTL + 3
                     and grants[0].get("fencingToken", 0) > taken.get("fencingToken", 0), repr(grants[:1]))
        got = await member.wait_for_pushes(lock_events(channel), 5)
        kinds = [(push.get("eventType"), (push.get("locks") or [{}])[0].get("owner", "")) for push in got[3:5]]
        report.check("a member on a third node heard the dead holder's lock released, then acquired by the waiter",
                     kinds == [(LOCK_RELEASED, holder.name), (LOCK_ACQUIRED, waiter.name)], repr(got))
    finally:
        for peer in (waiter, member):
            await peer.close()
        try:
            await asyncio.wait_for(holder.close(), 2)
        except Exception:  # noqa: BLE001 - its node is gone, and its connection with it
            pass


async def paused_holder_checks(pid, report, urls, app_id, token, suffix):
    """Pauses node `pid` (the first url's) past its liveness record while its client holds a lock."""
    channel = f"cluster-paused-{suffix}"
    holder = await login(report, urls[0], f"ph-holder-{suffix}", app_id, token)
    waiter = await login(report, urls[1], f"ph-waiter-{suffix}", app_id, token)
    try:
        for peer in (holder, waiter):
            await peer.request("subscribe", channel=channel, features=LOCK)
            await peer.wait_for_pushes(lock_events(channel), 1)
        await holder.request("setLock", channelType=1, channel=channel, lockName="L", ttl=30)
        taken = await holder.request("acquireLock", channelType=1, channel=channel, lockName="L")
        queued = await waiter.request("acquireLock", channelType=1, channel=channel, lockName="L", retry=True)
        report.check("the first node's client holds the lock (ttl 30 s), the second node's waits for it",
                     taken.get("acquired") is True and queued.get("acquired") is False, repr((taken, queued)))
        os.kill(pid, signal.SIGSTOP)
        try:
            await asyncio.sleep(6)
            report.check("while the node is paused (6 s), the waiter is not granted: the ttl runs from its last beat",
                         not [push for push in waiter.pushes if granted(channel)(push)])
        finally:
            os.kill(pid, signal.SIGCONT)
        woke = time.monotonic()
        closing = await holder.wait_for_pushes(lambda push: push.get("t") == "closing", 1, timeout=10)
        report.check(f"once awake, the reaped node ends its session: closing {KICKED_OUT_BY_SERVER}",
                     closing[:1] and closing[0].get("reason") == KICKED_OUT_BY_SERVER, repr(closing[:1]))
        grants = await waiter.wait_for_pushes(granted(channel), 1, timeout=10)
        waited = time.monotonic() - woke
        report.check(f"and the waiter on another node got the lock {waited:.2f} s after the node woke, long before the ttl",
                     grants[:1] and waited < 5, repr(grants[:1]))
    finally:
        for peer in (holder, waiter):
            try:
                await asyncio.wait_for(peer.close(), 2)
            except Exception:  # noqa: BLE001 - the holder's connection is closed by its node
                pass


def main():
    options = argparse.ArgumentParser(add_help=False)
    options.add_argument("--kill-first-node", type=int, metavar="PID")
    options.add_argument("--pause-first-node", type=int, metavar="PID")
    known, rest = options.parse_known_args()
    sys.argv = sys.argv[:1] + rest
    checks = [lock_checks]
    if known.pause_first_node:
        checks.append(functools.partial(paused_holder_checks, known.pause_first_node))
    if known.kill_first_node:
        checks.append(functools.partial(dead_holder_checks, known.kill_first_node))
    return run_cluster_cli("cluster lock peer", "Switchboard cluster lock self-check (see docs/PROTOCOL.md §14).",
                           checks)


if __name__ == "__main__":
    sys.exit(main())
