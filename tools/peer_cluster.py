#!/usr/bin/env python3
"""An independent check of Switchboard's cluster mode, written from docs/PROTOCOL.md alone: clients on
different nodes of one cluster see what they would see on one server.

    python3 tools/peer_cluster.py --url ws://127.0.0.1:P1 --url ws://127.0.0.1:P2 [--url ws://127.0.0.1:P3 …]

Needs PyPI's `websockets` and `msgpack`. Publishes faster than the per-client rate limit: run the
nodes with `switchboard serve --no-rate-limits`.
Exits 0 when every check passed, 1 when one failed, 2 when it could not run.
"""

import asyncio
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer import is_error, login, message_check, run_cluster_cli  # noqa: E402

CHANNEL_RECEIVER_OFFLINE = -11033
SAME_UID_LOGIN = 27  # `closing`'s reason when the same user id logged in elsewhere (PROTOCOL.md §4.6)
MESSAGES_PER_PUBLISHER = 50
MESSAGE = 4  # the `message` bit of subscribe's features (PROTOCOL.md §3.5)


def messages_on(channel):
    return lambda push: push.get("t") == "message" and push.get("channelType") == 1 and push.get("channel") == channel


async def channel_checks(report, urls, app_id, token, suffix):
    """One subscriber and one publisher on every node: each subscriber gets every message once, in each
    publisher's order."""
    channel = f"cluster-{suffix}"
    subscribers = [await login(report, url, f"sub-{index}-{suffix}", app_id, token) for index, url in enumerate(urls)]
    publishers = [await login(report, url, f"pub-{index}-{suffix}", app_id, token) for index, url in enumerate(urls)]
    peers = subscribers + publishers
    try:
        for peer in subscribers:
            answer = await peer.request("subscribe", channel=channel, features=MESSAGE)
            report.check(f"{peer.name} subscribed", answer.get("t") == "ok", repr(answer))

        async def publish_all(publisher):
            for number in range(MESSAGES_PER_PUBLISHER):
                answer = await publisher.request(
                    "publish", channelType=1, channel=channel, message=f"{publisher.name}:{number}", customType="seq")
                if answer.get("t") != "ok":
                    return answer
            return None

        failures = await asyncio.gather(*(publish_all(publisher) for publisher in publishers))
        report.check("every publish on every node was answered ok", not any(failures), repr(failures))

        expected = MESSAGES_PER_PUBLISHER * len(publishers)
        for subscriber in subscribers:
            await subscriber.wait_for_pushes(messages_on(channel), expected)
        await asyncio.sleep(0.5)  # time for a duplicate to show up
        for subscriber in subscribers:
            received = [push["message"] for push in subscriber.pushes if messages_on(channel)(push)]
            report.check(f"{subscriber.name} got {expected} messages, each once",
                         len(received) == expected and len(set(received)) == expected,
                         f"got {len(received)}, {len(set(received))} distinct")
            for publisher in publishers:
                numbers = [int(text.split(":")[1]) for text in received if text.startswith(publisher.name + ":")]
                report.check(f"{subscriber.name} got {publisher.name}'s messages in order",
                             numbers == list(range(MESSAGES_PER_PUBLISHER)), f"got {numbers[:10]}...")
            fields = [push for push in subscriber.pushes if messages_on(channel)(push)][:1]
            message_check(report, f"{subscriber.name} (first message's fields)", fields[:1], {
                "channelType": 1, "channel": channel, "topic": "", "publisher": fields[0]["message"].split(":")[0]
                if fields else "", "customType": "seq", "message": fields[0]["message"] if fields else ""})

        binary = bytes(range(256))
        answer = await publishers[0].request("publish", channelType=1, channel=channel, message=binary)
        report.check("a binary publish is answered ok", answer.get("t") == "ok", repr(answer))
        for subscriber in subscribers[1:]:
            got = await subscriber.wait_for_pushes(lambda push: push.get("message") == binary, 1)
            report.check(f"{subscriber.name} got the binary message on another node, as bytes",
                         len(got) == 1 and isinstance(got[0]["message"], bytes), repr(got[:1]))

        answer = await subscribers[1].request("unsubscribe", channel=channel)
        report.check(f"{subscribers[1].name} unsubscribed", answer.get("t") == "ok", repr(answer))
        after = f"after-unsubscribe-{suffix}"
        answer = await publishers[0].request("publish", channelType=1, channel=channel, message=after)
        report.check("a publish after the unsubscribe is answered ok", answer.get("t") == "ok", repr(answer))
        # The fence: a subscriber that stayed, on another node when there is one.
        fence = subscribers[2] if len(subscribers) > 2 else subscribers[0]
        await fence.wait_for_pushes(lambda push: push.get("message") == after, 1)
        await asyncio.sleep(0.3)
        report.check(f"{subscribers[1].name} gets nothing after its unsubscribe",
                     not [push for push in subscribers[1].pushes if push.get("message") == after])
    finally:
        for peer in peers:
            await peer.close()


async def user_checks(report, urls, app_id, token, suffix):
    """A user-channel message reaches the receiver on another node; "offline" exactly when the user is on
    no node."""
    alice = await login(report, urls[0], f"alice-{suffix}", app_id, token)
    bob = await login(report, urls[1], f"bob-{suffix}", app_id, token)
    try:
        answers = [await alice.request("publish", channelType=3, channel=bob.name, message=f"direct:{number}")
                   for number in range(20)]
        report.check("alice's 20 messages to bob on another node are answered ok",
                     all(answer.get("t") == "ok" for answer in answers), repr(answers[:3]))
        is_direct = lambda push: push.get("t") == "message" and str(push.get("message", "")).startswith("direct:")  # noqa: E731
        await bob.wait_for_pushes(is_direct, 20)
        await asyncio.sleep(0.3)
        received = [push for push in bob.pushes if is_direct(push)]
        report.check("bob got the 20 messages once each, in order",
                     [push["message"] for push in received] == [f"direct:{n}" for n in range(20)],
                     repr([push.get("message") for push in received][:5]))
        message_check(report, "bob (user channel across nodes)", received[:1], {
            "channelType": 3, "channel": alice.name, "topic": "", "message": "direct:0", "publisher": alice.name,
            "customType": ""})

        answer = await alice.request("publish", channelType=3, channel=f"nobody-{suffix}", message="anyone?")
        report.check(f"a message to a user online on no node gets {CHANNEL_RECEIVER_OFFLINE}",
                     is_error(answer, CHANNEL_RECEIVER_OFFLINE) and answer.get("operation") == "publish", repr(answer))

        bob.heartbeats.cancel()
        answer = await bob.request("logout")
        report.check("bob logged out", answer.get("t") == "ok", repr(answer))
        answer = await alice.request("publish", channelType=3, channel=bob.name, message="still there?")
        report.check(f"after bob's logout on the other node, a message to bob gets {CHANNEL_RECEIVER_OFFLINE}",
                     is_error(answer, CHANNEL_RECEIVER_OFFLINE), repr(answer))

        carol = await login(report, urls[-1], f"carol-{suffix}", app_id, token)
        try:
            answer = await carol.request("publish", channelType=3, channel=alice.name, message="from the third node")
            report.check("carol's message to alice, on the first node, is answered ok", answer.get("t") == "ok",
                         repr(answer))
            got = await alice.wait_for_pushes(lambda push: push.get("message") == "from the third node", 1)
            report.check("alice got carol's message", len(got) == 1 and got[0].get("channel") == carol.name, repr(got))
        finally:
            await carol.close()
    finally:
        await alice.close()
        await bob.close()


async def same_user_checks(report, urls, app_id, token, suffix):
    """The same user id logging in on another node replaces the first session, as on one server."""
    name = f"twice-{suffix}"
    first = await login(report, urls[0], name, app_id, token)
    second = await login(report, urls[1], name, app_id, token)
    sender = await login(report, urls[-1], f"sender-{suffix}", app_id, token)
    try:
        closing = await first.wait_for_pushes(lambda push: push.get("t") == "closing", 1)
        report.check(f"the first session, on node 1, is told {SAME_UID_LOGIN} (sameUidLogin) when the user logs in on node 2",
                     len(closing) == 1 and closing[0].get("reason") == SAME_UID_LOGIN, repr(closing))
        try:
            await asyncio.wait_for(first.reader, 15)
        except (asyncio.TimeoutError, asyncio.CancelledError):
            pass
        report.check("its connection is closed", first.failure is not None, repr(first.failure))
        answer = await sender.request("publish", channelType=3, channel=name, message="to the second")
        report.check("a message to the user is taken", answer.get("t") == "ok", repr(answer))
        got = await second.wait_for_pushes(lambda push: push.get("message") == "to the second", 1)
        report.check("the second session gets it", len(got) == 1, repr(got))
        await asyncio.sleep(0.3)
        report.check("the second session is not told to close", not any(push.get("t") == "closing" for push in second.pushes),
                     repr(second.pushes))
    finally:
        for peer in (first, second, sender):
            try:
                await peer.close()
            except Exception:  # noqa: BLE001 - the first one's connection is gone already
                pass


def main():
    return run_cluster_cli("cluster peer", "Switchboard cluster self-check (see docs/PROTOCOL.md).",
                           [channel_checks, user_checks, same_user_checks])


if __name__ == "__main__":
    sys.exit(main())
