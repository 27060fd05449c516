#!/usr/bin/env python3
"""An independent check of Switchboard's cluster mode for metadata, written from docs/PROTOCOL.md §13 alone:
clients on different nodes of one cluster share one set of channel and user metadata, and every listener,
on whichever node, hears every change.

    python3 tools/peer_cluster_storage.py --url ws://127.0.0.1:P1 --url ws://127.0.0.1:P2 [--url ws://127.0.0.1:P3 …]

Needs PyPI's `websockets` and `msgpack`. Makes more than 10 storage calls a second: run the nodes with
`switchboard serve --no-rate-limits`.
Exits 0 when every check passed, 1 when one failed, 2 when it could not run.
"""

import asyncio
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer import is_error, login, run_cluster_cli  # noqa: E402

STORAGE_OUTDATED_REVISION = -12014  # §13.7
METADATA = 2  # the metadata bit of subscribe's features (§3.5, §13.4)
SNAPSHOT, UPDATE = 1, 3  # §13.5


def values(items):
    return {item["key"]: item.get("value", "") for item in items}


def storage_on(target):
    return lambda push: push.get("t") == "storage" and push.get("target") == target


async def updates(peer, target, count):
    """Waits until `count` storage pushes about `target` arrived; returns all of them."""
    return await peer.wait_for_pushes(storage_on(target), count)


async def channel_checks(report, urls, app_id, token, suffix):
    """A listener and a writer on every node; one set, every change heard everywhere, in revision order."""
    channel = f"cluster-md-{suffix}"
    listeners = [await login(report, url, f"md-listen-{index}-{suffix}", app_id, token) for index, url in enumerate(urls)]
    writers = [await login(report, url, f"md-write-{index}-{suffix}", app_id, token) for index, url in enumerate(urls)]
    try:
        for peer in listeners:
            answer = await peer.request("subscribe", channel=channel, features=METADATA)
            snapshot = await updates(peer, channel, 1)
            report.check(f"{peer.name} subscribed with the metadata feature and got a snapshot",
                         answer.get("t") == "ok" and snapshot[:1] and snapshot[0].get("eventType") == SNAPSHOT,
                         repr(snapshot[:1]))

        answer = await writers[0].request("setChannelMetadata", channelType=1, channel=channel,
                                          items=[{"key": "topic", "value": "hello"}, {"key": "price", "value": "1"}],
                                          recordUserId=True)
        report.check("a write on the first node is ok", answer.get("t") == "ok", repr(answer))
        for peer in listeners:
            got = await updates(peer, channel, 2)
            last = got[-1] if len(got) >= 2 else {}
            report.check(f"{peer.name} got the whole set as an update",
                         last.get("eventType") == UPDATE and values(last.get("items", [])) == {"topic": "hello", "price": "1"}
                         and all(item.get("authorUserId") == writers[0].name for item in last.get("items", [])), repr(last))
        read = await writers[-1].request("getChannelMetadata", channelType=1, channel=channel)
        revision = read.get("majorRevision")
        report.check("a read on the last node answers the same set and revision",
                     values(read.get("items", [])) == {"topic": "hello", "price": "1"}
                     and revision == updates_revision(listeners[0], channel), repr(read))

        racing = await asyncio.gather(*[
            writer.request("updateChannelMetadata", channelType=1, channel=channel,
                           items=[{"key": "price", "value": f"bid-{index}", "revision": revision}])
            for index, writer in enumerate(writers)])
        winners = [index for index, answer in enumerate(racing) if answer.get("t") == "ok"]
        report.check(f"of {len(writers)} writers on {len(urls)} nodes with one revision exactly one wins, the others get "
                     f"{STORAGE_OUTDATED_REVISION}",
                     len(winners) == 1 and sum(is_error(a, STORAGE_OUTDATED_REVISION) for a in racing) == len(writers) - 1,
                     repr(racing))
        read = await writers[0].request("getChannelMetadata", channelType=1, channel=channel)
        report.check("every node reads the winner's value",
                     winners and values(read.get("items", [])).get("price") == f"bid-{winners[0]}"
                     and read.get("majorRevision", 0) > revision, repr(read))

        for peer in listeners:  # the race's update first
            await peer.wait_for_pushes(lambda push: storage_on(channel)(push)
                                       and push.get("majorRevision") == read.get("majorRevision"), 1)
        before = [len(peer.pushes) for peer in listeners]
        for number in range(12):
            writer = writers[number % len(writers)]
            answer = await writer.request("setChannelMetadata", channelType=1, channel=channel,
                                          items=[{"key": "n", "value": str(number)}])
            report.check(f"write {number} on node {number % len(writers)} is ok", answer.get("t") == "ok", repr(answer))
        final = await writers[-1].request("getChannelMetadata", channelType=1, channel=channel)
        for peer, start in zip(listeners, before):
            await peer.wait_for_pushes(lambda push: storage_on(channel)(push)
                                       and push.get("majorRevision") == final.get("majorRevision"), 1)
            got = [push for push in peer.pushes[start:] if storage_on(channel)(push)]
            revisions = [push.get("majorRevision") for push in got]
            report.check(f"{peer.name} heard the 12 writes from every node in revision order, each once",
                         [values(push.get("items", [])).get("n") for push in got] == [str(n) for n in range(12)]
                         and revisions == sorted(set(revisions)) and revisions[-1:] == [final.get("majorRevision")],
                         repr(revisions))

        answer = await writers[1].request("removeChannelMetadata", channelType=1, channel=channel)
        for peer in listeners:
            gone = await peer.wait_for_pushes(lambda push: storage_on(channel)(push) and push.get("items") == [], 1)
            report.check(f"{peer.name} heard the set removed on another node",
                         gone[:1] and gone[0].get("majorRevision") == 0, repr(gone[:1]))
        answer = await writers[0].request("setChannelMetadata", channelType=1, channel=channel, items=[{"key": "again"}])
        read = await writers[-1].request("getChannelMetadata", channelType=1, channel=channel)
        report.check("a set made again gets a revision never used before",
                     answer.get("t") == "ok" and read.get("majorRevision", 0) > final.get("majorRevision", 0), repr(read))
    finally:
        for peer in listeners + writers:
            await peer.close()


def updates_revision(peer, target):
    got = [push for push in peer.pushes if storage_on(target)(push)]
    return got[-1].get("majorRevision") if got else None


async def user_checks(report, urls, app_id, token, suffix):
    """A user's metadata written on one node, its leases ended on another, heard on a third."""
    user = f"md-user-{suffix}"
    subscriber = await login(report, urls[-1], f"md-sub-{suffix}", app_id, token)
    writer = await login(report, urls[0], f"md-uw-{suffix}", app_id, token)
    leaser = await login(report, urls[1 % len(urls)], f"md-lease-{suffix}", app_id, token)
    try:
        answer = await subscriber.request("subscribeUserMetadata", userId=user)
        await updates(subscriber, user, 1)
        report.check("subscribeUserMetadata on the last node is ok", answer.get("t") == "ok", repr(answer))
        answer = await writer.request("setUserMetadata", userId=user,
                                      items=[{"key": "mood", "value": "sunny"}, {"key": "offer", "value": "5", "ttl": 1500}])
        answer2 = await leaser.request("setUserMetadata", userId=user, items=[{"key": "seat", "value": "3", "sessionLease": True}])
        report.check("writes of leased items on two nodes are ok", answer.get("t") == "ok" and answer2.get("t") == "ok",
                     repr((answer, answer2)))
        got = await updates(subscriber, user, 3)
        last = got[-1] if len(got) >= 3 else {}
        items = {item["key"]: item for item in last.get("items", [])}
        report.check("the subscriber heard both, with expiresAt and sessionBound",
                     set(items) == {"mood", "offer", "seat"} and isinstance(items["offer"].get("expiresAt"), int)
                     and items["seat"].get("sessionBound") is True, repr(last))

        leaser.heartbeats.cancel()
        answer = await leaser.request("logout")
        report.check("the leaser logged out", answer.get("t") == "ok", repr(answer))
        later = lambda push: storage_on(user)(push) and push.get("majorRevision", 0) > last.get("majorRevision", 0)  # noqa: E731
        no_seat = await subscriber.wait_for_pushes(lambda push: later(push) and "seat" not in values(push["items"]), 1)
        report.check("its session-bound item went, heard on another node", len(no_seat) == 1, repr(no_seat[:1]))
        expired = await subscriber.wait_for_pushes(lambda push: later(push) and values(push["items"]) == {"mood": "sunny"}, 1)
        report.check("the ttl item went when its time ran out, heard on another node", len(expired) == 1, repr(expired[:1]))
        read = await writer.request("getUserMetadata", userId=user)
        report.check("the writer's node reads what is left",
                     values(read.get("items", [])) == {"mood": "sunny"}
                     and read.get("majorRevision") == updates_revision(subscriber, user), repr(read))
    finally:
        for peer in (subscriber, writer, leaser):
            await peer.close()


def main():
    return run_cluster_cli("cluster storage peer", "Switchboard cluster metadata self-check (see docs/PROTOCOL.md §13).",
                           [channel_checks, user_checks])


if __name__ == "__main__":
    sys.exit(main())
