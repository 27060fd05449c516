#!/usr/bin/env python3
"""Stream channels and topics from Python, written from docs/PROTOCOL.md (sections 1, 2 and 11) alone.

    python3 tools/peer_stream.py --url ws://127.0.0.1:PORT

Needs PyPI's `websockets` and `msgpack`; reuses the connection helpers of tools/peer.py.
Exits 0 when every check passed, 1 when one failed, 2 when it could not run.
"""

import asyncio
import os
import secrets
import sys

import msgpack

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer import Report, is_error, login, run_cli  # noqa: E402

# Error codes of PROTOCOL.md section 11.5.
CHANNEL_NOT_JOINED = -11001
INVALID_TOPIC_NAME = -11008
MESSAGE_TOO_LONG = -11010
TOPIC_NOT_SUBSCRIBED = -11013
TOPIC_NOT_JOINED = -11016
INVALID_TOPIC_META = -11018
DUPLICATE_OPERATION = -10017

SNAPSHOT, REMOTE_JOIN_TOPIC, REMOTE_LEAVE_TOPIC = 1, 2, 3

# The examples of PROTOCOL.md section 11.6.
EXAMPLES = [
    ({"t": "joinTopic", "id": 7, "channel": "live", "topic": "video", "qos": 1, "priority": 4, "meta": "cam",
      "syncWithMedia": False},
     "88a174a96a6f696e546f706963a2696407a76368616e6e656ca46c697665a5746f706963a5766964656fa3716f7301a87072696f"
     "7269747904a46d657461a363616dad73796e63576974684d65646961c2"),
    ({"t": "topic", "eventType": 2, "channel": "live", "publisher": "alice",
      "topicInfos": [{"topic": "video", "publishers": [{"userId": "alice", "meta": "cam"}]}],
      "timestamp": 1764400000123},
     "86a174a5746f706963a96576656e745479706502a76368616e6e656ca46c697665a97075626c6973686572a5616c696365aa74"
     "6f706963496e666f739182a5746f706963a5766964656faa7075626c6973686572739182a6757365724964a5616c696365a46d"
     "657461a363616da974696d657374616d70cf0000019ace6f6c7b"),
]


def ok(answer):
    return answer.get("t") == "ok"


def topic_events(peer, event_type):
    return [push for push in peer.pushes if push.get("t") == "topic" and push.get("eventType") == event_type]


def joined_snapshots(pushes, channel):
    """The snapshots of `channel` among `pushes`, each joined from its parts as section 11.3 says:
    parts are concatenated, a topic cut between two parts is one topic; the part without `more` ends it."""
    snapshots, current = [], None
    for push in pushes:
        if push.get("t") != "topic" or push.get("eventType") != SNAPSHOT or push.get("channel") != channel:
            continue
        if current is None:
            current = {**push, "topicInfos": [], "parts": 0}
        current["parts"] += 1
        for info in push.get("topicInfos", []):
            if current["topicInfos"] and current["topicInfos"][-1]["topic"] == info.get("topic"):
                current["topicInfos"][-1]["publishers"] += info.get("publishers", [])
            else:
                current["topicInfos"].append({"topic": info.get("topic"), "publishers": list(info.get("publishers", []))})
        if not push.get("more", False):
            current.pop("more", None)
            snapshots.append(current)
            current = None
    return snapshots


async def large_snapshot_check(report, url, app_id, token, suffix):
    """Publishers enough that the snapshot outgrows one frame: it comes in parts, each a frame
    this client accepts (peer.py refuses frames over 66,560 bytes), and joins into the whole."""
    channel = f"py-full-{suffix}"
    topics = [f"topic-{index}" for index in range(8)]
    members = []
    try:
        for index in range(26):
            prefix = f"py-f{index}-{suffix}-"
            member = await login(report, url, prefix + "u" * (64 - len(prefix)), app_id, token)
            members.append(member)
            meta = f"meta-{index}-" + "m" * (256 - len(f"meta-{index}-"))
            answers = [await member.request("join", channel=channel, features=0)]
            answers += [await member.request("joinTopic", channel=channel, topic=topic, meta=meta) for topic in topics]
            report.check(f"member {index} joined and publishes in 8 topics", all(ok(a) for a in answers), repr(answers))
        expected = [{"topic": topic, "publishers": [{"userId": m.name, "meta": f"meta-{i}-" + "m" * (256 - len(f"meta-{i}-"))}
                                                      for i, m in enumerate(members)]} for topic in topics]
        joiner = await login(report, url, f"py-j-{suffix}", app_id, token)
        members.append(joiner)
        answer = await joiner.request("join", channel=channel, features=0)
        report.check("the joiner of the full channel joined", ok(answer), repr(answer))
        await joiner.wait_for_pushes(lambda p: p.get("t") == "topic" and not p.get("more", False), 1)
        snapshots = joined_snapshots(joiner.pushes, channel)
        report.check("the large snapshot came in parts and joins into every topic with every publisher",
                     len(snapshots) == 1 and snapshots[0]["parts"] > 1 and snapshots[0]["topicInfos"] == expected,
                     repr([(s["parts"], len(s["topicInfos"])) for s in snapshots]))
        report.check("no part closed the connection", joiner.failure is None, repr(joiner.failure))
    finally:
        for member in members:
            await member.close()


async def self_check(url, app_id, token):
    report = Report("peer_stream")
    for frame, expected in EXAMPLES:
        report.check(f"example {frame['t']} encodes as documented",
                     msgpack.packb(frame, use_bin_type=True).hex() == expected)
    suffix = secrets.token_hex(4)
    channel = f"py-stream-{suffix}"
    alice = await login(report, url, f"py-sa-{suffix}", app_id, token)
    bob = await login(report, url, f"py-sb-{suffix}", app_id, token)
    try:
        answer = await alice.request("joinTopic", channel=channel, topic="video")
        report.check(f"joinTopic before join gets {CHANNEL_NOT_JOINED}", is_error(answer, CHANNEL_NOT_JOINED), repr(answer))

        answer = await alice.request("join", channel=channel, token="", features=1)
        report.check("alice joined the stream channel", ok(answer), repr(answer))
        answer = await alice.request("join", channel=channel, token="", features=1)
        report.check(f"a second join gets {DUPLICATE_OPERATION}", is_error(answer, DUPLICATE_OPERATION), repr(answer))
        answer = await alice.request("joinTopic", channel=channel, topic="video", qos=1, priority=0, meta="cam")
        report.check("alice joined topic video", ok(answer), repr(answer))

        answer = await bob.request("join", channel=channel, features=1)
        report.check("bob joined (no token key)", ok(answer), repr(answer))
        snapshots = await bob.wait_for_pushes(lambda p: p.get("t") == "topic" and p.get("eventType") == SNAPSHOT, 1)
        report.check("bob got a snapshot with alice publishing video, in one part (no `more`)",
                     len(snapshots) == 1 and snapshots[0].get("channel") == channel and "more" not in snapshots[0]
                     and snapshots[0].get("topicInfos") == [
                         {"topic": "video", "publishers": [{"userId": alice.name, "meta": "cam"}]}],
                     repr(snapshots))

        answer = await bob.request("subscribeTopic", channel=channel, topic="video", users=[alice.name, ""])
        report.check("subscribeTopic answers ok with result, succeedUsers and failedUsers (an empty id fails)",
                     ok(answer) and answer.get("result") == "subscribeTopic"
                     and answer.get("succeedUsers") == [alice.name] and answer.get("failedUsers") == [""],
                     repr(answer))

        bodies = [f"frame {index}" for index in range(10)] + [b"\x00\x01\xff"]
        for body in bodies:
            answer = await alice.request("publishTopicMessage", channel=channel, topic="video", message=body,
                                         customType="f")
            if not ok(answer):
                report.check("publishTopicMessage answered ok", False, repr(answer))
        is_topic_message = lambda p: p.get("t") == "message" and p.get("channelType") == 2  # noqa: E731
        got = await bob.wait_for_pushes(is_topic_message, len(bodies))
        report.check("bob got every topic message once, in order, with its type kept",
                     [p.get("message") for p in got] == bodies, repr([p.get("message") for p in got]))
        report.check("each names the channel, topic, publisher and customType",
                     all(p.get("channel") == channel and p.get("topic") == "video" and p.get("publisher") == alice.name
                         and p.get("customType") == "f" and isinstance(p.get("timestamp"), int) for p in got))
        report.check("alice, not subscribed to herself, got none", not [p for p in alice.pushes if is_topic_message(p)])

        answer = await alice.request("publishTopicMessage", channel=channel, topic="video", message=b"x" * 1025)
        report.check(f"a 1,025-byte topic message gets {MESSAGE_TOO_LONG}", is_error(answer, MESSAGE_TOO_LONG), repr(answer))
        answer = await alice.request("publishTopicMessage", channel=channel, topic="audio", message="x")
        report.check(f"publishing in a topic not joined gets {TOPIC_NOT_JOINED}", is_error(answer, TOPIC_NOT_JOINED),
                     repr(answer))
        answer = await alice.request("joinTopic", channel=channel, topic="t" * 17)
        report.check(f"a 17-character topic gets {INVALID_TOPIC_NAME}", is_error(answer, INVALID_TOPIC_NAME), repr(answer))
        answer = await alice.request("joinTopic", channel=channel, topic="meta", meta="m" * 257)
        report.check(f"257 bytes of meta get {INVALID_TOPIC_META}", is_error(answer, INVALID_TOPIC_META), repr(answer))

        answer = await bob.request("joinTopic", channel=channel, topic="chat", meta="")
        report.check("bob joined topic chat", ok(answer), repr(answer))
        joins = await alice.wait_for_pushes(
            lambda p: p.get("t") == "topic" and p.get("eventType") == REMOTE_JOIN_TOPIC, 1)
        report.check("alice heard remoteJoinTopic from bob",
                     len(joins) == 1 and joins[0].get("publisher") == bob.name
                     and joins[0].get("topicInfos") == [{"topic": "chat", "publishers": [{"userId": bob.name, "meta": ""}]}],
                     repr(joins))
        answer = await bob.request("leaveTopic", channel=channel, topic="chat")
        report.check("bob left topic chat", ok(answer), repr(answer))
        leaves = await alice.wait_for_pushes(
            lambda p: p.get("t") == "topic" and p.get("eventType") == REMOTE_LEAVE_TOPIC, 1)
        report.check("alice heard remoteLeaveTopic from bob", len(leaves) == 1 and leaves[0].get("publisher") == bob.name,
                     repr(leaves))

        answer = await bob.request("unsubscribeTopic", channel=channel, topic="video")
        report.check("bob unsubscribed from video", ok(answer), repr(answer))
        answer = await bob.request("unsubscribeTopic", channel=channel, topic="video")
        report.check(f"a second unsubscribe gets {TOPIC_NOT_SUBSCRIBED}", is_error(answer, TOPIC_NOT_SUBSCRIBED),
                     repr(answer))
        answer = await bob.request("renewChannelToken", channel=channel, token="")
        report.check("renewChannelToken answered ok", ok(answer), repr(answer))

        answer = await alice.request("leave", channel=channel)
        report.check("alice left the stream channel", ok(answer), repr(answer))
        gone = await bob.wait_for_pushes(
            lambda p: p.get("t") == "topic" and p.get("eventType") == REMOTE_LEAVE_TOPIC, 1)
        report.check("bob heard alice leave video", len(gone) == 1 and gone[0].get("publisher") == alice.name
                     and [info.get("topic") for info in gone[0].get("topicInfos", [])] == ["video"], repr(gone))
        answer = await alice.request("leave", channel=channel)
        report.check(f"leaving again gets {CHANNEL_NOT_JOINED}", is_error(answer, CHANNEL_NOT_JOINED), repr(answer))
        report.check("no frame was left unexplained", not [p for p in bob.pushes + alice.pushes
                                                           if p.get("t") not in ("message", "topic", "presence")])
    finally:
        await alice.close()
        await bob.close()
    await large_snapshot_check(report, url, app_id, token, suffix)
    return report.summary()


def main():
    return run_cli("peer_stream", "Switchboard stream-channel self-check (docs/PROTOCOL.md §11).", self_check)


if __name__ == "__main__":
    sys.exit(main())
