#!/usr/bin/env python3
"""An independent check of Switchboard's cluster mode for session resume on another node, written from
docs/PROTOCOL.md §2.4 and docs/CLUSTER.md alone: a client whose node dies logs in on another node with its
resume ticket and goes on with the same session.

    python3 tools/peer_cluster_resume.py --url ws://127.0.0.1:P1 --url ws://127.0.0.1:P2 --kill-first-node PID

Alice logs in on the first node, subscribes to a channel with presence and sets a state there; Bob, on the
second node, listens to the channel's presence. The first node is then killed with SIGKILL (PID is its
process id), and 6 s later (after the cluster reaped the dead node, within her presence timeout of 30 s)
Alice's client logs in on the second node with `resumeSession`, `resumeSecret` and `resumeReceived`. Checked: `loginOk` says `resumed: true` with the same session and `historyLost: true`
(her old node's kept pushes are gone), naming the channel in `lostChannels`; she gets Bob's messages on the
channel and on her user channel without subscribing again; `whoNow` lists her with her state; and Bob hears
no leave and no timeout of hers, neither while she is away nor after.

Needs PyPI's `websockets` and `msgpack`. Run the nodes with `switchboard serve --no-rate-limits`.
Exits 0 when every check passed, 1 when one failed, 2 when it could not run.
"""

import argparse
import asyncio
import functools
import os
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer import connect, login, run_cluster_cli  # noqa: E402

PRESENCE, MESSAGE = 1, 4  # subscribe's feature bits (§3.5)
SNAPSHOT, JOIN, LEAVE, TIMEOUT, STATE_CHANGED = 1, 3, 4, 5, 6  # presence event types (§12)


def presence_of(channel):
    return lambda push: push.get("t") == "presence" and push.get("channel") == channel


def message_of(channel, channel_type):
    return lambda push: (push.get("t") == "message" and push.get("channel") == channel
                         and push.get("channelType") == channel_type)


async def resume_checks(kill_pid, report, urls, app_id, token, suffix):
    channel = f"cluster-resume-{suffix}"
    alice_id, bob_id = f"rs-alice-{suffix}", f"rs-bob-{suffix}"
    alice = await connect(urls[0], alice_id)
    first = await alice.request("login", appId=app_id, userId=alice_id, token=token, heartbeatInterval=5,
                                presenceTimeout=30)
    report.check("alice logs in on the first node", first.get("t") == "loginOk" and first.get("resumed") is False,
                 repr(first))
    alice.start_heartbeats(5)
    bob = await login(report, urls[1], bob_id, app_id, token)
    try:
        answer = await bob.request("subscribe", channel=channel, features=MESSAGE | PRESENCE)
        await bob.wait_for_pushes(presence_of(channel), 1)
        report.check("bob listens to the channel's presence on the second node", answer.get("t") == "ok", repr(answer))
        answer = await alice.request("subscribe", channel=channel, features=MESSAGE | PRESENCE)
        report.check("alice subscribes on the first node", answer.get("t") == "ok", repr(answer))
        answer = await alice.request("setState", channelType=1, channel=channel, items={"mood": "calm"})
        report.check("alice sets her state", answer.get("t") == "ok", repr(answer))
        heard = await bob.wait_for_pushes(presence_of(channel), 3)
        report.check("bob hears alice join and set her state",
                     [push.get("eventType") for push in heard[1:3]] == [JOIN, STATE_CHANGED], repr(heard))
        await bob.request("publish", channelType=1, channel=channel, message="before")
        before = await alice.wait_for_pushes(message_of(channel, 1), 1)
        report.check("alice gets a message on the first node", len(before) == 1, repr(before))
        received = len(alice.pushes)

        os.kill(kill_pid, signal.SIGKILL)
        await alice.close()
        # Her client comes back after the cluster has reaped the dead node (4 s after its last beat):
        # her session waits for a take-over for its presence timeout (30 s), not just until then.
        await asyncio.sleep(6)
        events = [push.get("eventType") for push in bob.pushes if presence_of(channel)(push)]
        report.check("while she is away bob hears no leave and no timeout of hers",
                     LEAVE not in events and TIMEOUT not in events, repr(events))
        alice = await connect(urls[1], alice_id)
        resumed = await alice.request("login", appId=app_id, userId=alice_id, token=token, heartbeatInterval=5,
                                      presenceTimeout=30, resumeSession=first.get("session"),
                                      resumeSecret=first.get("resumeSecret"), resumeReceived=received)
        report.check("on the second node her login resumes the same session",
                     resumed.get("t") == "loginOk" and resumed.get("resumed") is True
                     and resumed.get("session") == first.get("session"), repr(resumed))
        lost = resumed.get("lostChannels") or []
        report.check("the answer says the old node's kept pushes are lost, naming the channel",
                     resumed.get("historyLost") is True
                     and {"channelType": 1, "channel": channel} in lost, repr(resumed))
        alice.start_heartbeats(5)

        await bob.request("publish", channelType=1, channel=channel, message="after")
        after = await alice.wait_for_pushes(message_of(channel, 1), 1)
        report.check("she gets the channel's messages on the second node without subscribing again",
                     [push.get("message") for push in after] == ["after"], repr(after))
        await bob.request("publish", channelType=3, channel=alice_id, message="direct")
        direct = await alice.wait_for_pushes(message_of(bob_id, 3), 1)
        report.check("a message to her user channel reaches her", [push.get("message") for push in direct] == ["direct"],
                     repr(direct))
        who = await bob.request("whoNow", channelType=1, channel=channel, includeState=True)
        users = {user.get("userId"): user.get("states") for user in who.get("users") or []}
        report.check("whoNow lists her with her state", users.get(alice_id) == {"mood": "calm"}, repr(who))

        await asyncio.sleep(1)
        events = [push.get("eventType") for push in bob.pushes if presence_of(channel)(push)]
        report.check("bob heard no leave and no timeout of hers", LEAVE not in events and TIMEOUT not in events,
                     repr(events))
        who = await bob.request("whoNow", channelType=1, channel=channel)
        report.check("she is still in the channel",
                     alice_id in [user.get("userId") for user in who.get("users") or []], repr(who))
        answer = await alice.request("setState", channelType=1, channel=channel, items={"mood": "busy"})
        changed = await bob.wait_for_pushes(presence_of(channel), len(events) + 1)
        report.check("a state she sets on the second node is heard",
                     answer.get("t") == "ok" and changed[-1:] and changed[-1].get("eventType") == STATE_CHANGED,
                     repr(changed[-1:]))
    finally:
        await alice.close()
        await bob.close()


def main():
    options = argparse.ArgumentParser(add_help=False)
    options.add_argument("--kill-first-node", type=int, metavar="PID", required=True)
    known, rest = options.parse_known_args()
    sys.argv = sys.argv[:1] + rest
    return run_cluster_cli("cluster resume peer", "Switchboard cluster session-resume check (see docs/CLUSTER.md).",
                           [functools.partial(resume_checks, known.kill_first_node)])


if __name__ == "__main__":
    sys.exit(main())
