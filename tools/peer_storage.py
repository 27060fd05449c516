#!/usr/bin/env python3
"""An independent check of Switchboard's storage (metadata), written from docs/PROTOCOL.md §13 alone.

    python3 tools/peer_storage.py --url ws://127.0.0.1:PORT

Needs PyPI's `websockets` and `msgpack`. Makes more than 10 storage calls a second: run it against a
server without rate limits (`switchboard serve --no-rate-limits`).
Exits 0 when every check passed, 1 when one failed, 2 when it could not run.
"""

import asyncio
import os
import secrets
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer import Report, is_error, login, run_cli  # noqa: E402 - the shared client of tools/peer.py

# Codes of PROTOCOL.md §13.7.
STORAGE_INVALID_METADATA_ITEM = -12003
STORAGE_KEY_LENGTH_OVERFLOW = -12011
STORAGE_DUPLICATE_KEY = -12013
STORAGE_OUTDATED_REVISION = -12014
STORAGE_NOT_SUBSCRIBE = -12015
STORAGE_INVALID_METADATA_INSTANCE = -12016

# §13.5
USER, CHANNEL = 1, 2
SNAPSHOT, UPDATE = 1, 3


def storage_pushes(peer, target):
    return [push for push in peer.pushes if push.get("t") == "storage" and push.get("target") == target]


def values(items):
    return {item["key"]: item.get("value", "") for item in items}


async def next_push(peer, target, count):
    """Waits until `count` storage pushes about `target` arrived; returns the last, or None."""
    pushes = await peer.wait_for_pushes(lambda push: push.get("t") == "storage" and push.get("target") == target, count)
    return pushes[count - 1] if len(pushes) >= count else None


async def channel_checks(report, alice, bob, channel):
    answer = await alice.request("subscribe", channel=channel, features=2)
    report.check("subscribe with the metadata feature is ok", answer.get("t") == "ok", repr(answer))
    snapshot = await next_push(alice, channel, 1)
    report.check("a snapshot of the empty set follows the subscribe",
                 snapshot is not None and snapshot.get("eventType") == SNAPSHOT and snapshot.get("majorRevision") == 0
                 and snapshot.get("items") == [] and snapshot.get("storageType") == CHANNEL, repr(snapshot))

    answer = await bob.request("setChannelMetadata", channelType=1, channel=channel, majorRevision=-1,
                               items=[{"key": "topic", "value": "hello"}, {"key": "price", "value": "1"}],
                               recordTs=True, recordUserId=True)
    report.check("setChannelMetadata is ok", answer == {"t": "ok", "id": answer.get("id")}, repr(answer))
    update = await next_push(alice, channel, 2)
    items = (update or {}).get("items", [])
    report.check("the member gets the whole set as an update",
                 update is not None and update.get("eventType") == UPDATE and update.get("channelType") == 1
                 and values(items) == {"topic": "hello", "price": "1"} and [i["key"] for i in items] == ["topic", "price"],
                 repr(update))
    report.check("items carry revision, updateTs and authorUserId",
                 all(i.get("revision") == update.get("majorRevision") and i.get("authorUserId") == "py-s-bob"
                     and isinstance(i.get("updateTs"), int) and i["updateTs"] > 0 for i in items), repr(items))

    read = await alice.request("getChannelMetadata", channelType=1, channel=channel)
    report.check("getChannelMetadata answers ok with its result name and the set",
                 read.get("t") == "ok" and read.get("result") == "getChannelMetadata"
                 and read.get("majorRevision") == update.get("majorRevision") and read.get("items") == items, repr(read))

    revision = read.get("majorRevision")
    stale = await bob.request("updateChannelMetadata", channelType=1, channel=channel,
                              items=[{"key": "price", "value": "2", "revision": revision + 1000}])
    report.check("a stale item revision is refused with -12014", is_error(stale, STORAGE_OUTDATED_REVISION), repr(stale))
    racing = await asyncio.gather(*[
        peer.request("updateChannelMetadata", channelType=1, channel=channel,
                     items=[{"key": "price", "value": f"bid-{n}", "revision": revision}])
        for n, peer in enumerate([alice, bob, alice, bob])])
    winners = [answer for answer in racing if answer.get("t") == "ok"]
    report.check("of four writers with one revision exactly one wins, the others get -12014",
                 len(winners) == 1 and sum(is_error(a, STORAGE_OUTDATED_REVISION) for a in racing) == 3, repr(racing))
    missing = await bob.request("updateChannelMetadata", channelType=1, channel=channel, items=[{"key": "nope", "value": "x"}])
    report.check("updating a missing item is refused with -12003", is_error(missing, STORAGE_INVALID_METADATA_ITEM), repr(missing))
    long_key = await bob.request("setChannelMetadata", channelType=1, channel=channel, items=[{"key": "k" * 33}])
    report.check("a 33-character key is refused with -12011", is_error(long_key, STORAGE_KEY_LENGTH_OVERFLOW), repr(long_key))
    twice = await bob.request("setChannelMetadata", channelType=1, channel=channel, items=[{"key": "a"}, {"key": "a"}])
    report.check("a key given twice is refused with -12013", is_error(twice, STORAGE_DUPLICATE_KEY), repr(twice))

    answer = await bob.request("removeChannelMetadata", channelType=1, channel=channel, items=[{"key": "topic"}])
    removed = await next_push(alice, channel, 4)
    report.check("removing an item leaves the rest", answer.get("t") == "ok" and removed is not None
                 and list(values(removed.get("items", [])).keys()) == ["price"], repr(removed))
    answer = await bob.request("removeChannelMetadata", channelType=1, channel=channel)
    gone = await next_push(alice, channel, 5)
    report.check("removing with no items removes the set", answer.get("t") == "ok" and gone is not None
                 and gone.get("items") == [] and gone.get("majorRevision") == 0, repr(gone))
    again = await bob.request("removeChannelMetadata", channelType=1, channel=channel)
    report.check("removing a set that does not exist is refused with -12016",
                 is_error(again, STORAGE_INVALID_METADATA_INSTANCE), repr(again))


async def user_checks(report, alice, bob):
    user = "py-s-bob"
    answer = await bob.request("setUserMetadata", userId=user, items=[{"key": "mood", "value": "sunny"}])
    report.check("setUserMetadata is ok", answer.get("t") == "ok", repr(answer))
    answer = await alice.request("subscribeUserMetadata", userId=user)
    snapshot = await next_push(alice, user, 1)
    report.check("subscribeUserMetadata is ok and a snapshot follows",
                 answer.get("t") == "ok" and snapshot is not None and snapshot.get("eventType") == SNAPSHOT
                 and snapshot.get("storageType") == USER and snapshot.get("channelType") == 3
                 and values(snapshot.get("items", [])) == {"mood": "sunny"}, repr(snapshot))
    await bob.request("setUserMetadata", userId=user, items=[{"key": "seat", "value": "7", "ttl": 1000}])
    update = await next_push(alice, user, 2)
    seat = [i for i in (update or {}).get("items", []) if i["key"] == "seat"]
    report.check("a ttl item is reported with expiresAt",
                 len(seat) == 1 and isinstance(seat[0].get("expiresAt"), int), repr(update))
    expired = await next_push(alice, user, 3)
    report.check("the ttl item goes with an update when its time runs out",
                 expired is not None and values(expired.get("items", [])) == {"mood": "sunny"}, repr(expired))
    read = await alice.request("getUserMetadata", userId=user)
    report.check("getUserMetadata answers with its result name",
                 read.get("result") == "getUserMetadata" and values(read.get("items", [])) == {"mood": "sunny"}, repr(read))
    answer = await alice.request("unsubscribeUserMetadata", userId=user)
    again = await alice.request("unsubscribeUserMetadata", userId=user)
    report.check("unsubscribe is ok once, then -12015", answer.get("t") == "ok" and is_error(again, STORAGE_NOT_SUBSCRIBE),
                 repr(again))
    count = len(storage_pushes(alice, user))
    await bob.request("removeUserMetadata", userId=user)
    await asyncio.sleep(0.2)
    report.check("no push after unsubscribing", len(storage_pushes(alice, user)) == count)


async def self_check(url, app_id, token):
    report = Report("peer-storage")
    alice = await login(report, url, "py-s-alice", app_id, token)
    bob = await login(report, url, "py-s-bob", app_id, token)
    try:
        await channel_checks(report, alice, bob, f"py-storage-{secrets.token_hex(4)}")
        await user_checks(report, alice, bob)
    finally:
        await alice.close()
        await bob.close()
    return report.summary()


def main():
    return run_cli("peer-storage", "Switchboard storage self-check (docs/PROTOCOL.md §13).", self_check)


if __name__ == "__main__":
    sys.exit(main())
