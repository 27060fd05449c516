#!/usr/bin/env python3
"""A presence check for a Switchboard server, written from docs/PROTOCOL.md (sections 3 and 12) alone.

    python3 tools/peer_presence.py --url ws://127.0.0.1:PORT     check the presence requests and pushes
    python3 tools/peer_presence.py --selftest-encoding           check msgpack encoding against section 11.6

Reuses the connection helpers of tools/peer.py. Needs PyPI's `websockets` and `msgpack`, pinned in
tools/requirements.txt (tools/test.sh installs them).
Exits 0 when every check passed, 1 when one failed, 2 when it could not run.
"""

import asyncio
import os
import secrets
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pydeps import require  # noqa: E402

require("msgpack", "websockets")

import msgpack  # noqa: E402
from peer import Report, answer_to, connect, decode, encode, is_error, run_cli  # noqa: E402

# Event types (section 11.3).
SNAPSHOT, INTERVAL, JOIN, LEAVE, TIMEOUT, STATE_CHANGED = 1, 2, 3, 4, 5, 6
# Subscribe features (section 3.5).
PRESENCE, MESSAGE, QUIET = 1, 4, 16
# Error codes (section 11.2).
INVALID_CHANNEL_TYPE = -10019
CHANNEL_NOT_SUBSCRIBED = -11002
PRESENCE_INVALID_ARGUMENT = -13003
STATE_COUNT_OVERFLOW = -13005
STATE_KEY_SIZE_OVERFLOW = -13008
STATE_DUPLICATE_KEY = -13010
USER_NOT_EXIST = -13011

# The examples of section 11.6: (name, map in key order, hex).
EXAMPLES = [
    ("setState", {"t": "setState", "id": 6, "channelType": 1, "channel": "room", "items": {"mood": "happy"}},
     "85a174a87365745374617465a2696406ab6368616e6e656c5479706501a76368616e6e656ca4726f6f6da56974656d7381a46d6f6f"
     "64a56861707079"),
    ("whoNow", {"t": "whoNow", "id": 7, "channelType": 1, "channel": "room", "includeUserId": True, "includeState": True},
     "86a174a677686f4e6f77a2696407ab6368616e6e656c5479706501a76368616e6e656ca4726f6f6dad696e636c756465557365724964"
     "c3ac696e636c7564655374617465c3"),
    ("whoNow answer",
     {"t": "ok", "id": 7, "result": "whoNow", "totalOccupancy": 2,
      "users": [{"userId": "alice", "states": {}}, {"userId": "bob", "states": {"mood": "happy"}}], "nextPage": ""},
     "86a174a26f6ba2696407a6726573756c74a677686f4e6f77ae746f74616c4f63637570616e637902a575736572739282a6757365724964"
     "a5616c696365a67374617465738082a6757365724964a3626f62a673746174657381a46d6f6f64a56861707079a86e65787450616765a0"),
    ("join push",
     {"t": "presence", "eventType": 3, "channelType": 1, "channel": "room", "publisher": "bob", "states": {},
      "timestamp": 1764400000123, "firstOrLast": True},
     "88a174a870726573656e6365a96576656e745479706503ab6368616e6e656c5479706501a76368616e6e656ca4726f6f6da97075626c"
     "6973686572a3626f62a673746174657380a974696d657374616d70cf0000019ace6f6c7bab66697273744f724c617374c3"),
    ("state push",
     {"t": "presence", "eventType": 6, "channelType": 1, "channel": "room", "publisher": "bob",
      "states": {"mood": "happy"}, "timestamp": 1764400000123},
     "87a174a870726573656e6365a96576656e745479706506ab6368616e6e656c5479706501a76368616e6e656ca4726f6f6da97075626c"
     "6973686572a3626f62a673746174657381a46d6f6f64a56861707079a974696d657374616d70cf0000019ace6f6c7b"),
    ("interval push",
     {"t": "presence", "eventType": 2, "channelType": 1, "channel": "room", "publisher": "", "states": {},
      "timestamp": 1764400000123, "joinUserList": ["carol"], "leaveUserList": [], "timeoutUserList": ["dave"],
      "userStateList": [], "totalOccupancy": 51},
     "8ca174a870726573656e6365a96576656e745479706502ab6368616e6e656c5479706501a76368616e6e656ca4726f6f6da97075626c"
     "6973686572a0a673746174657380a974696d657374616d70cf0000019ace6f6c7bac6a6f696e557365724c69737491a56361726f6cad"
     "6c65617665557365724c69737490af74696d656f7574557365724c69737491a464617665ad7573657253746174654c69737490ae746f"
     "74616c4f63637570616e637933"),
]


def selftest_encoding():
    report = Report("peer_presence selftest")
    doc_path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs", "PROTOCOL.md")
    doc = open(doc_path, encoding="utf-8").read() if os.path.exists(doc_path) else None
    for name, frame, expected_hex in EXAMPLES:
        report.check(f"packb({name}) equals the documented bytes", encode(frame).hex() == expected_hex,
                     f"got {encode(frame).hex()}")
        report.check(f"unpackb({name}) gives the map back", decode(bytes.fromhex(expected_hex)) == frame)
        if doc is not None:
            report.check(f"{name} hex appears in PROTOCOL.md", expected_hex in doc)
    return report.summary()


async def login(url, user_id, app_id, token):
    peer = await connect(url, user_id)
    answer = await peer.request("login", appId=app_id, userId=user_id, token=token, heartbeatInterval=5,
                                presenceTimeout=30)
    if answer.get("t") != "loginOk":
        raise RuntimeError(f"{user_id} could not log in: {answer!r}")
    peer.start_heartbeats(answer["heartbeatInterval"])
    return peer


def presence(channel, event_type=None, publisher=None):
    """A predicate for presence pushes of one channel (and type, and publisher)."""
    return lambda push: (push.get("t") == "presence" and push.get("channel") == channel
                         and (event_type is None or push.get("eventType") == event_type)
                         and (publisher is None or push.get("publisher") == publisher))


async def raw_request(peer, t, fields):
    """Sends request `t` whose other fields are given as (key, value already packed), so that a value can be a
    map with a key twice (no Python dict can hold one); returns the answer."""
    peer.next_id += 1
    request_id = peer.next_id
    future = asyncio.get_running_loop().create_future()
    peer.pending[request_id] = future
    packer = msgpack.Packer(use_bin_type=True)
    frame = packer.pack_map_header(len(fields) + 2) + packer.pack("t") + packer.pack(t)
    frame += packer.pack("id") + packer.pack(request_id)
    for key, packed in fields:
        frame += packer.pack(key) + packed
    await peer.ws.send(frame)
    return await answer_to(peer.name, t, request_id, future)


async def self_check(url, app_id, token):
    report = Report("peer_presence")
    suffix = secrets.token_hex(4)
    channel = f"py-presence-{suffix}"
    names = {role: f"py-{role}-{suffix}" for role in ("alice", "bob", "carol", "dave")}
    alice, bob, carol, dave = [await login(url, names[role], app_id, token) for role in ("alice", "bob", "carol", "dave")]
    where = {"channelType": 1, "channel": channel}
    try:
        answer = await alice.request("subscribe", channel=channel, features=MESSAGE | PRESENCE)
        report.check("alice subscribed with presence", answer.get("t") == "ok", repr(answer))
        snapshots = await alice.wait_for_pushes(presence(channel, SNAPSHOT), 1)
        report.check("alice got a snapshot of herself", len(snapshots) == 1 and snapshots[0].get("snapshot")
                     == [{"userId": names["alice"], "states": {}}] and snapshots[0].get("totalOccupancy") == 1,
                     repr(snapshots))

        await bob.request("subscribe", channel=channel, features=MESSAGE | PRESENCE)
        snapshots = await bob.wait_for_pushes(presence(channel, SNAPSHOT), 1)
        report.check("bob's snapshot lists alice then bob",
                     len(snapshots) == 1 and [user["userId"] for user in snapshots[0].get("snapshot", [])]
                     == [names["alice"], names["bob"]] and snapshots[0].get("publisher") == names["bob"],
                     repr(snapshots))
        joins = await alice.wait_for_pushes(presence(channel, JOIN, names["bob"]), 1)
        report.check("alice saw bob join, his first connection",
                     len(joins) == 1 and joins[0].get("firstOrLast") is True and joins[0].get("states") == {}
                     and joins[0].get("channelType") == 1 and isinstance(joins[0].get("timestamp"), int), repr(joins))

        answer = await bob.request("setState", **where, items={"mood": "happy", "seat": "3"})
        report.check("bob's setState answered ok", answer.get("t") == "ok", repr(answer))
        changes = await alice.wait_for_pushes(presence(channel, STATE_CHANGED, names["bob"]), 1)
        report.check("alice saw bob's whole state", len(changes) == 1
                     and changes[0].get("states") == {"mood": "happy", "seat": "3"}, repr(changes))

        await carol.request("subscribe", channel=channel, features=MESSAGE | PRESENCE | QUIET)
        snapshots = await carol.wait_for_pushes(presence(channel, SNAPSHOT), 1)
        report.check("quiet carol's snapshot leaves her out",
                     len(snapshots) == 1 and [user["userId"] for user in snapshots[0].get("snapshot", [])]
                     == [names["alice"], names["bob"]], repr(snapshots))

        answer = await carol.request("whoNow", **where, includeState=True)
        report.check("whoNow lists alice and bob with states, quiet carol left out",
                     answer.get("t") == "ok" and answer.get("result") == "whoNow"
                     and answer.get("users") == [{"userId": names["alice"], "states": {}},
                                                 {"userId": names["bob"], "states": {"mood": "happy", "seat": "3"}}]
                     and answer.get("totalOccupancy") == 2 and answer.get("nextPage") == "", repr(answer))
        answer = await carol.request("whoNow", **where, includeUserId=False, includeState=False)
        report.check("whoNow with neither ids nor states gives the occupancy",
                     answer.get("totalOccupancy") == 2 and answer.get("users") == [], repr(answer))
        answer = await carol.request("whereNow", userId=names["bob"])
        report.check("whereNow finds bob in the channel", answer.get("result") == "whereNow"
                     and answer.get("channels") == [{"channelType": 1, "channel": channel}], repr(answer))
        answer = await carol.request("whereNow", userId=names["carol"])
        report.check("whereNow leaves quiet channels out", answer.get("channels") == [], repr(answer))
        answer = await carol.request("getState", **where, userId=names["bob"])
        report.check("getState reads bob's state", answer.get("result") == "getState"
                     and answer.get("userId") == names["bob"]
                     and answer.get("states") == {"mood": "happy", "seat": "3"}, repr(answer))
        answer = await alice.request("getState", **where, userId=names["carol"])
        report.check(f"getState of quiet carol gets {USER_NOT_EXIST}", is_error(answer, USER_NOT_EXIST), repr(answer))
        answer = await carol.request("getUserPresence", userIds=[names["alice"], f"py-nobody-{suffix}"])
        users = answer.get("users") or []
        report.check("getUserPresence: alice online, nobody offline",
                     answer.get("result") == "getUserPresence" and [user.get("online") for user in users] == [True, False]
                     and isinstance(users[0].get("lastSeen"), int) and users[0]["lastSeen"] > 0
                     and users[1].get("lastSeen") == 0, repr(answer))

        answer = await dave.request("setState", **where, items={"k": "v"})
        report.check(f"setState outside the channel gets {CHANNEL_NOT_SUBSCRIBED}",
                     is_error(answer, CHANNEL_NOT_SUBSCRIBED) and answer.get("operation") == "setState", repr(answer))
        answer = await dave.request("whoNow", channelType=3, channel=names["bob"])
        report.check(f"whoNow of a user channel gets {INVALID_CHANNEL_TYPE}", is_error(answer, INVALID_CHANNEL_TYPE),
                     repr(answer))
        answer = await dave.request("whoNow", **where, page="not-a-page")
        report.check(f"an invented page gets {PRESENCE_INVALID_ARGUMENT}", is_error(answer, PRESENCE_INVALID_ARGUMENT),
                     repr(answer))
        await dave.request("subscribe", channel=channel, features=MESSAGE)
        answer = await dave.request("setState", **where, items={"k" * 33: "v"})
        report.check(f"a 33-character key gets {STATE_KEY_SIZE_OVERFLOW}", is_error(answer, STATE_KEY_SIZE_OVERFLOW),
                     repr(answer))
        answer = await dave.request("setState", **where, items={f"k{index}": "v" for index in range(33)})
        report.check(f"33 keys get {STATE_COUNT_OVERFLOW}", is_error(answer, STATE_COUNT_OVERFLOW), repr(answer))
        packer = msgpack.Packer(use_bin_type=True)
        twice = packer.pack_map_header(2) + packer.pack("a") + packer.pack("1") + packer.pack("a") + packer.pack("2")
        answer = await raw_request(dave, "setState", [("channelType", packer.pack(1)), ("channel", packer.pack(channel)),
                                                      ("items", twice)])
        report.check(f"a key given twice gets {STATE_DUPLICATE_KEY}", is_error(answer, STATE_DUPLICATE_KEY), repr(answer))

        answer = await bob.request("removeState", **where, keys=["seat"])
        report.check("removeState of one key answered ok", answer.get("t") == "ok", repr(answer))
        answer = await bob.request("removeState", **where)
        report.check("removeState of every key answered ok", answer.get("t") == "ok", repr(answer))
        changes = await alice.wait_for_pushes(presence(channel, STATE_CHANGED, names["bob"]), 3)
        report.check("alice saw the state shrink, then empty",
                     [change.get("states") for change in changes[1:]] == [{"mood": "happy"}, {}], repr(changes))

        answer = await bob.request("unsubscribe", channel=channel)
        leaves = await alice.wait_for_pushes(presence(channel, LEAVE, names["bob"]), 1)
        report.check("alice saw bob leave, his last connection", len(leaves) == 1
                     and leaves[0].get("firstOrLast") is True and leaves[0].get("states") == {}, repr(leaves))
        await asyncio.sleep(0.3)  # time for a stray push to show up
        seen = [(push.get("eventType"), push.get("publisher")) for push in alice.pushes if presence(channel)(push)]
        expected = [(SNAPSHOT, names["alice"]), (JOIN, names["bob"]), (STATE_CHANGED, names["bob"]),
                    (JOIN, names["dave"]), (STATE_CHANGED, names["bob"]), (STATE_CHANGED, names["bob"]),
                    (LEAVE, names["bob"])]
        report.check("alice heard exactly that, and nothing of quiet carol", seen == expected, repr(seen))
        report.check("no event reached a member without the presence bit",
                     not [push for push in dave.pushes if push.get("t") == "presence"], repr(dave.pushes))
        await check_paging(report, url, app_id, token, suffix, dave)
    finally:
        for peer in (alice, bob, carol, dave):
            await peer.close()
    return report.summary()


async def check_paging(report, url, app_id, token, suffix, asker):
    """101 members: whoNow gives two pages (at most 100 users each) that list each exactly once."""
    hall = f"py-hall-{suffix}"
    crowd = []
    try:
        for index in range(101):
            member = await login(url, f"py-crowd{index:03}-{suffix}", app_id, token)
            crowd.append(member)
            await member.request("subscribe", channel=hall, features=MESSAGE)
        first = await asker.request("whoNow", channelType=1, channel=hall)
        second = await asker.request("whoNow", channelType=1, channel=hall, page=first.get("nextPage", ""))
        listed = [user["userId"] for user in first.get("users", []) + second.get("users", [])]
        report.check("whoNow pages 101 members as 100 then 1",
                     len(first.get("users", [])) == 100 and first.get("nextPage") != ""
                     and len(second.get("users", [])) == 1 and second.get("nextPage") == "", f"{first!r} {second!r}")
        report.check("every member is listed exactly once, in join order",
                     listed == [member.name for member in crowd], repr(listed))
    finally:
        for member in crowd:
            await member.close()


def main():
    return run_cli("peer_presence", "Switchboard presence check (see docs/PROTOCOL.md section 12).", self_check,
                   selftest_encoding)


if __name__ == "__main__":
    sys.exit(main())
