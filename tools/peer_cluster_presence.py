#!/usr/bin/env python3
"""An independent check of Switchboard's cluster mode for presence, written from docs/PROTOCOL.md §12 alone:
clients on different nodes of one cluster are one channel for whoNow, whereNow, getState and
getUserPresence, and every listener, on whichever node, gets a snapshot and then each join, state
change and leave once, in order.

    python3 tools/peer_cluster_presence.py --url ws://127.0.0.1:P1 --url ws://127.0.0.1:P2 [--url ws://127.0.0.1:P3 …]

Needs PyPI's `websockets` and `msgpack`. Run the nodes with `switchboard serve --no-rate-limits`.
Exits 0 when every check passed, 1 when one failed, 2 when it could not run.
"""

import asyncio
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer import login, run_cluster_cli  # noqa: E402

PRESENCE, MESSAGE = 1, 4  # subscribe's features (§3.5)
SNAPSHOT, JOIN, LEAVE, STATE_CHANGED = 1, 3, 4, 6  # §12.3


def presence(channel):
    return lambda push: push.get("t") == "presence" and push.get("channel") == channel


def heard(peer, channel):
    """What `peer` heard of `channel`, as (event type, publisher, states)."""
    return [(push.get("eventType"), push.get("publisher"), push.get("states") or {})
            for push in peer.pushes if presence(channel)(push)]


async def until(condition, timeout=5.0):
    """Asks `condition` (a coroutine function) again until it is true or `timeout` passed; its last answer."""
    deadline = time.monotonic() + timeout
    while True:
        answer = await condition()
        if answer or time.monotonic() > deadline:
            return answer
        await asyncio.sleep(0.05)


async def presence_checks(report, urls, app_id, token, suffix):
    channel = f"cluster-presence-{suffix}"
    members = [await login(report, url, f"pr-{index}-{suffix}", app_id, token) for index, url in enumerate(urls)]
    names = [peer.name for peer in members]
    try:
        # One listener per node, each after the one before has its snapshot, so each hears the later joins.
        for index, peer in enumerate(members):
            answer = await peer.request("subscribe", channel=channel, features=PRESENCE | MESSAGE)
            got = await peer.wait_for_pushes(presence(channel), 1)
            listed = [user.get("userId") for user in (got[0].get("snapshot") or [])] if got else None
            report.check(f"{peer.name} subscribed and its snapshot lists the members of every node so far",
                         answer.get("t") == "ok" and got and got[0].get("eventType") == SNAPSHOT
                         and listed == names[:index + 1], repr(got[:1]))

        for peer in members:
            async def lists_everyone(peer=peer):
                page = await peer.request("whoNow", channelType=1, channel=channel)
                return [user.get("userId") for user in page.get("users", [])] == names
            report.check(f"whoNow on {peer.name}'s node lists the members of every node, in join order",
                         await until(lists_everyone))

        first, last = members[0], members[-1]
        answer = await first.request("setState", channelType=1, channel=channel, items={"mood": "calm"})
        report.check("setState on the first node is ok", answer.get("t") == "ok", repr(answer))

        async def state_read_elsewhere():
            got = await last.request("getState", channelType=1, channel=channel, userId=first.name)
            return got.get("states") == {"mood": "calm"}
        report.check("getState on the last node reads the state set on the first", await until(state_read_elsewhere))
        where = await last.request("whereNow", userId=first.name)
        report.check("whereNow on the last node finds the first node's user",
                     where.get("channels") == [{"channelType": 1, "channel": channel}], repr(where))
        online = await last.request("getUserPresence", userIds=[first.name, f"nobody-{suffix}"])
        report.check("getUserPresence on the last node: the first node's user is online, a stranger is not",
                     [user.get("online") for user in online.get("users", [])] == [True, False], repr(online))

        # Everyone but the first hears its state change; then the first leaves.
        for peer in members[1:]:
            await peer.wait_for_pushes(lambda push: presence(channel)(push) and push.get("eventType") == STATE_CHANGED, 1)
        answer = await first.request("unsubscribe", channel=channel)
        report.check("the first node's user unsubscribes", answer.get("t") == "ok", repr(answer))
        for index, peer in enumerate(members[1:], start=1):
            await peer.wait_for_pushes(lambda push: presence(channel)(push) and push.get("eventType") == LEAVE, 1)
        await asyncio.sleep(0.3)  # anything told twice would have come by now
        for index, peer in enumerate(members):
            later_joins = [(JOIN, name, {}) for name in names[index + 1:]]
            expected = later_joins + ([(STATE_CHANGED, first.name, {"mood": "calm"}), (LEAVE, first.name, {})] if index else [])
            report.check(f"{peer.name} heard each later change once, in order",
                         heard(peer, channel)[1:] == expected, repr(heard(peer, channel)[1:]))

        async def gone_everywhere():
            for peer in members[1:]:
                page = await peer.request("whoNow", channelType=1, channel=channel)
                if [user.get("userId") for user in page.get("users", [])] != names[1:]:
                    return False
            return True
        report.check("whoNow on every node no longer lists the user who left", await until(gone_everywhere))
    finally:
        for peer in members:
            await peer.close()


def main():
    return run_cluster_cli("cluster presence peer", "Switchboard cluster presence self-check (see docs/PROTOCOL.md §12).",
                           [presence_checks])


if __name__ == "__main__":
    sys.exit(main())
