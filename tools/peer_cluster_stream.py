#!/usr/bin/env python3
"""An independent check of Switchboard's cluster mode for stream channels, written from docs/PROTOCOL.md §11
alone: members on different nodes of one cluster are one stream channel. Each joiner's snapshot lists the
publishers of every node; every member, on whichever node, hears each later remoteJoinTopic and
remoteLeaveTopic once, in order; subscribeTopic without users takes the publishers of every node; a topic
message reaches every subscriber on every node once, in the publisher's order, its body (text or binary) and
customType unchanged; a logout on one node is a remoteLeaveTopic for the others.

    python3 tools/peer_cluster_stream.py --url ws://127.0.0.1:P1 --url ws://127.0.0.1:P2 [--url ws://127.0.0.1:P3 …]

Needs PyPI's `websockets` and `msgpack`. Run the nodes with `switchboard serve --no-rate-limits`.
Exits 0 when every check passed, 1 when one failed, 2 when it could not run.
"""

import asyncio
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer import login, run_cluster_cli  # noqa: E402

SNAPSHOT, REMOTE_JOIN_TOPIC, REMOTE_LEAVE_TOPIC = 1, 2, 3  # §11.3
STREAM = 2  # a message's channelType (§11.4)


def topic_events(peer, channel):
    """What `peer` heard of `channel`'s topics, as (event type, publisher, [(topic, [(user, meta)])])."""
    return [(push.get("eventType"), push.get("publisher"),
             [(info.get("topic"), [(p.get("userId"), p.get("meta")) for p in info.get("publishers", [])])
              for info in push.get("topicInfos", [])])
            for push in peer.pushes if push.get("t") == "topic" and push.get("channel") == channel]


def stream_messages(peer, channel):
    return [push for push in peer.pushes
            if push.get("t") == "message" and push.get("channelType") == STREAM and push.get("channel") == channel]


def ok(answer):
    return answer.get("t") == "ok"


async def stream_checks(report, urls, app_id, token, suffix):
    channel = f"cluster-stream-{suffix}"
    members = [await login(report, url, f"st-{index}-{suffix}", app_id, token) for index, url in enumerate(urls)]
    names = [peer.name for peer in members]
    metas = [f"meta-{index}" for index in range(len(members))]
    try:
        # One member per node, each joining after the ones before publish in topic "video", so its snapshot
        # lists them all, in the order they joined the topic.
        for index, peer in enumerate(members):
            answer = await peer.request("join", channel=channel, token="", features=0)
            got = await peer.wait_for_pushes(lambda p: p.get("t") == "topic" and p.get("eventType") == SNAPSHOT, 1)
            expected = [("video", list(zip(names[:index], metas[:index])))] if index else []
            report.check(f"{peer.name} joined and its snapshot lists the publishers of every node so far",
                         ok(answer) and topic_events(peer, channel)[:1] == [(SNAPSHOT, peer.name, expected)],
                         repr(topic_events(peer, channel)[:1]))
            answer = await peer.request("joinTopic", channel=channel, topic="video", priority=1, meta=metas[index])
            report.check(f"{peer.name} joined topic video", ok(answer), repr(answer))
            for earlier in members[:index]:
                await earlier.wait_for_pushes(
                    lambda p, name=peer.name: p.get("t") == "topic" and p.get("publisher") == name, 1)

        # Without users, subscribeTopic takes the publishers of every node, in the order they joined the topic.
        for peer in members:
            answer = await peer.request("subscribeTopic", channel=channel, topic="video")
            report.check(f"{peer.name}'s subscribeTopic without users takes every node's publishers, in join order",
                         ok(answer) and answer.get("succeedUsers") == names and answer.get("failedUsers") == [],
                         repr(answer))

        # The first member publishes: every other member, each on another node, gets each message once, in order.
        publisher = members[0]
        bodies = [f"frame {index}" if index % 3 else bytes([index, 0, 255]) for index in range(30)]
        for index, body in enumerate(bodies):
            answer = await publisher.request("publishTopicMessage", channel=channel, topic="video", message=body,
                                             customType=f"c{index % 2}")
            if not ok(answer):
                report.check("publishTopicMessage answered ok", False, repr(answer))
        for peer in members[1:]:
            await peer.wait_for_pushes(lambda p: p.get("t") == "message" and p.get("channelType") == STREAM, len(bodies))
        await asyncio.sleep(0.3)  # anything delivered twice would have come by now
        for peer in members[1:]:
            got = stream_messages(peer, channel)
            report.check(f"{peer.name} got every topic message once, in order, text and binary unchanged",
                         [push.get("message") for push in got] == bodies, repr([push.get("message") for push in got][:5]))
            report.check(f"{peer.name}'s messages name the topic, publisher and customType",
                         all(push.get("topic") == "video" and push.get("publisher") == publisher.name
                             and push.get("customType") == f"c{index % 2}" for index, push in enumerate(got)))
        report.check(f"{publisher.name}, subscribed to itself, got its own messages once",
                     [push.get("message") for push in stream_messages(publisher, channel)] == bodies)

        # The last member leaves topic video on its node; then the first logs out on its own.
        last, first = members[-1], members[0]
        answer = await last.request("leaveTopic", channel=channel, topic="video")
        report.check(f"{last.name} left topic video", ok(answer), repr(answer))
        for peer in members[:-1]:
            await peer.wait_for_pushes(
                lambda p: p.get("t") == "topic" and p.get("eventType") == REMOTE_LEAVE_TOPIC and p.get("publisher") == last.name, 1)
        answer = await first.request("logout")
        report.check(f"{first.name} logged out", ok(answer), repr(answer))
        for peer in members[1:]:
            await peer.wait_for_pushes(
                lambda p: p.get("t") == "topic" and p.get("eventType") == REMOTE_LEAVE_TOPIC and p.get("publisher") == first.name, 1)
        await asyncio.sleep(0.3)  # anything told twice would have come by now
        for index, peer in enumerate(members[1:], start=1):
            later = [(REMOTE_JOIN_TOPIC, names[later], [("video", [(names[later], metas[later])])])
                     for later in range(index + 1, len(members))]
            leaves = ([(REMOTE_LEAVE_TOPIC, last.name, [("video", [(last.name, metas[-1])])])] if peer is not last else [])
            expected = later + leaves + [(REMOTE_LEAVE_TOPIC, first.name, [("video", [(first.name, metas[0])])])]
            report.check(f"{peer.name} heard each later topic event once, in order",
                         topic_events(peer, channel)[1:] == expected, repr(topic_events(peer, channel)[1:]))

        # A new member, on the first node, finds what is left.
        newcomer = await login(report, urls[0], f"st-new-{suffix}", app_id, token)
        members.append(newcomer)
        answer = await newcomer.request("join", channel=channel, token="", features=0)
        await newcomer.wait_for_pushes(lambda p: p.get("t") == "topic" and p.get("eventType") == SNAPSHOT, 1)
        left = list(zip(names[1:-1], metas[1:-1]))
        expected = [(SNAPSHOT, newcomer.name, [("video", left)] if left else [])]
        report.check("a new member's snapshot lists the publishers left, of every node",
                     ok(answer) and topic_events(newcomer, channel)[:1] == expected, repr(topic_events(newcomer, channel)[:1]))
    finally:
        for peer in members:
            await peer.close()


def main():
    return run_cluster_cli("cluster stream peer", "Switchboard cluster stream-channel self-check (see docs/PROTOCOL.md §11).",
                           [stream_checks])


if __name__ == "__main__":
    sys.exit(main())
