#!/usr/bin/env python3
"""An end-to-end check of the Switchboard server API, from outside the server: every method over
real HTTP (Python's http.client), its effects seen by real clients (the protocol peer of
tools/peer.py, written from docs/PROTOCOL.md alone), every error status.

    python3 tools/peer_api.py --url ws://127.0.0.1:PORT --admin-port PORT --api-key KEY --app-id APP
        the whole check; the server must hold the app's certificate (it mints the clients' tokens)
    python3 tools/peer_api.py ... --scenario rate
        against a server whose API allows 5 calls a second per key: the sixth is 429

Needs PyPI's `websockets` and `msgpack` (tools/requirements.txt; tools/test.sh installs them).
Exits 0 when every check passed, 1 when one failed, 2 when it could not run.
"""

import argparse
import asyncio
import base64
import os
import secrets
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pydeps import require  # noqa: E402

require("msgpack", "websockets")

from api_call import API  # noqa: E402
from peer import Report, connect, login, run_check  # noqa: E402

# Error codes (docs/PROTOCOL.md section 5).
INVALID_APP_ID = -10003
INVALID_CHANNEL_NAME = -10008
INVALID_PARAMETER = -10014
NOT_AUTHORIZED = -10015
INVALID_CHANNEL_TYPE = -10019
RATE = -10021
NOT_SUPPORTED = -10022
NOT_SUBSCRIBED = -11002
TOO_LONG = -11010
OUTDATED_REVISION = -12014
USER_NOT_EXIST = -13011
LOCK_NOT_ACQUIRED = -14006
KICKED_OUT_BY_SERVER = 28
# Subscribe features (section 3.5): presence 1, metadata 2, message 4, lock 8.
ALL_FEATURES = 15
STATE_CHANGED, LEAVE = 6, 4


def failed(status, answer, expected_status, code):
    """An error answer of `expected_status` with `code` and the code's name."""
    return (status == expected_status and isinstance(answer, dict) and answer.get("code") == code
            and isinstance(answer.get("error"), str) and isinstance(answer.get("reason"), str))


def messages(channel):
    return lambda push: push.get("t") == "message" and push.get("channel") == channel


class Checks:
    """The API, the report and the names of one run."""

    def __init__(self, args):
        self.api = API(args.admin_port, args.api_key)
        self.app = args.app_id
        self.url = args.url
        self.report = Report("peer_api")
        self.suffix = secrets.token_hex(4)
        self.room = f"room-{self.suffix}"
        self.lobby = f"lobby-{self.suffix}"
        self.stage = f"stage-{self.suffix}"

    def check(self, name, condition, detail=""):
        return self.report.check(name, condition, detail)

    def call(self, method, **params):
        return self.api.call(method, {"appId": self.app, **params})

    def user(self, name):
        return f"{name}-{self.suffix}"


def check_auth_and_errors(c):
    bare = API(c.api.port, None)
    status, response, body = bare.raw("POST", "/api/info", b'{"appId": "x"}')
    c.check("no key: 401 with WWW-Authenticate", status == 401 and response.getheader("WWW-Authenticate") == "apikey",
            f"{status} {body!r}")
    status, answer = API(c.api.port, "not-the-key-0123456789").call("info", {"appId": c.app})
    c.check(f"a wrong key: 401 with {NOT_AUTHORIZED}", failed(status, answer, 401, NOT_AUTHORIZED), f"{status} {answer}")
    status, response, _ = c.api.raw("GET", "/api/info")
    c.check("GET is 405 with Allow: POST", status == 405 and response.getheader("Allow") == "POST", str(status))
    status, answer = c.call("nothingLikeThis")
    c.check(f"an unknown method: 404 with {NOT_SUPPORTED}", failed(status, answer, 404, NOT_SUPPORTED), f"{status} {answer}")
    status, _, body = c.api.raw("POST", "/api/info", b'{"appId": ')
    c.check("a body that is not JSON: 400", status == 400 and b"invalidParameter" in body, f"{status} {body!r}")
    status, answer = c.call("info", colour="blue")
    c.check("an unknown parameter: 400 naming it", failed(status, answer, 400, INVALID_PARAMETER) and "colour" in answer["reason"],
            f"{status} {answer}")
    status, answer = c.api.call("channels", {})
    c.check("no appId: 400", failed(status, answer, 400, INVALID_PARAMETER), f"{status} {answer}")
    status, answer = c.api.call("info", {"appId": "not-served"})
    c.check(f"an app the server does not serve: 400 with {INVALID_APP_ID}", failed(status, answer, 400, INVALID_APP_ID),
            f"{status} {answer}")
    status, answer = c.call("publish", channel="", message="x")
    c.check(f"an empty channel name: 400 with {INVALID_CHANNEL_NAME}", failed(status, answer, 400, INVALID_CHANNEL_NAME),
            f"{status} {answer}")
    status, answer = c.call("presence", channelType="user", channel="bob")
    c.check(f"presence of a user channel: 400 with {INVALID_CHANNEL_TYPE}",
            failed(status, answer, 400, INVALID_CHANNEL_TYPE), f"{status} {answer}")


async def log_in_with_minted_tokens(c):
    """alice (a 007 token), bob (006) and carol (007) log in with tokens the API minted."""
    peers = {}
    for name, token_format in (("alice", "007"), ("bob", "006"), ("carol", "007")):
        status, answer = c.call("mintToken", userId=c.user(name), format=token_format, expireSeconds=600)
        c.check(f"mintToken {token_format} for {name}", status == 200 and answer["token"].startswith(token_format)
                and isinstance(answer["expiresAt"], int), f"{status} {answer}")
        peers[name] = await login(c.report, c.url, c.user(name), c.app, answer["token"])
    status, answer = c.call("mintToken", userId="x", format="005")
    c.check("mintToken of an unknown format: 400", failed(status, answer, 400, INVALID_PARAMETER), f"{status} {answer}")
    status, answer = c.call("mintToken", userId=c.user("carol"), streamChannel=c.stage)
    joined = await peers["carol"].request("join", channel=c.stage, token=answer.get("token", ""), features=1)
    c.check("a minted stream-channel token joins carol to the stream channel", status == 200 and joined.get("t") == "ok",
            f"{status} {answer} {joined}")
    for name, channel in (("alice", c.room), ("bob", c.room), ("carol", c.lobby)):
        answer = await peers[name].request("subscribe", channel=channel, features=ALL_FEATURES)
        c.check(f"{name} subscribed to {channel}", answer.get("t") == "ok", repr(answer))
    return peers["alice"], peers["bob"], peers["carol"]


async def check_messages(c, alice, bob, carol):
    status, answer = c.call("publish", channel=c.room, message="from the server", customType="notice", **{"from": "ops"})
    c.check("publish to a message channel: 200 {}", status == 200 and answer == {}, f"{status} {answer}")
    for who, peer in (("alice", alice), ("bob", bob)):
        pushes = await peer.wait_for_pushes(messages(c.room), 1)
        c.check(f"{who} got the server's message from 'ops' with its customType",
                len(pushes) == 1 and pushes[0].get("message") == "from the server" and pushes[0].get("publisher") == "ops"
                and pushes[0].get("customType") == "notice" and pushes[0].get("channelType") == 1, repr(pushes))
    status, answer = c.call("publish", channel=c.room, messageBase64=base64.b64encode(b"\x00\x01\xff").decode())
    pushes = await alice.wait_for_pushes(messages(c.room), 2)
    c.check("a binary message arrives as bytes from 'server'", status == 200 and len(pushes) == 2
            and pushes[1].get("message") == b"\x00\x01\xff" and pushes[1].get("publisher") == "server", f"{status} {pushes}")

    status, answer = c.call("publish", channelType="user", channel=c.user("bob"), message="psst")
    pushes = await bob.wait_for_pushes(lambda p: p.get("t") == "message" and p.get("channelType") == 3, 1)
    c.check("publish to an online user: {online: true}, bob gets it", status == 200 and answer == {"online": True}
            and len(pushes) == 1 and pushes[0].get("message") == "psst" and pushes[0].get("channel") == "server",
            f"{status} {answer} {pushes}")
    status, answer = c.call("publish", channelType="user", channel=c.user("nobody"), message="psst")
    c.check("publish to an offline user: {online: false}", status == 200 and answer == {"online": False}, f"{status} {answer}")
    status, answer = c.call("publish", channel=c.room, message="x" * 40_000)
    c.check(f"a message over the payload limit: 400 with {TOO_LONG}", failed(status, answer, 400, TOO_LONG), f"{status} {answer}")

    status, answer = c.call("broadcast", channels=[c.room, c.lobby], message="everyone")
    c.check("broadcast to two channels: published 2", status == 200 and answer == {"published": 2}, f"{status} {answer}")
    for who, peer, channel in (("alice", alice, c.room), ("bob", bob, c.room), ("carol", carol, c.lobby)):
        pushes = await peer.wait_for_pushes(lambda p, ch=channel: messages(ch)(p) and p.get("message") == "everyone", 1)
        c.check(f"{who} got the broadcast", len(pushes) == 1, repr(pushes))
    await check_counters(c, alice, bob, carol)

    status, answer = c.call("broadcast", channels=[c.room, ""], message="never")
    c.check("a broadcast naming a bad channel sends nothing: 400", failed(status, answer, 400, INVALID_CHANNEL_NAME),
            f"{status} {answer}")


async def check_counters(c, alice, bob, carol):
    """`counters`: the node's totals move by what one publish to two subscribers did."""
    status, before = c.api.call("counters", {})
    c.check("counters: 200 with the node, three clients of the app logged in", status == 200
            and before.get("node", {}).get("url") == c.url and before["connections"]["loggedIn"] == 3
            and {"appId": c.app, "connections": 3} in before.get("apps", []), f"{status} {before}")
    c.call("publish", channel=c.room, message="counted")
    for peer in (alice, bob):
        await peer.wait_for_pushes(lambda p: messages(c.room)(p) and p.get("message") == "counted", 1)
    status, after = c.api.call("counters", {})
    c.check("counters: the server's publish to the room made two deliveries", status == 200
            and after["deliveries"]["message"] - before["deliveries"]["message"] == 2, f"{before} {after}")
    answer = await carol.request("publish", channelType=1, channel=c.lobby, message="from carol")
    status, last = c.api.call("counters", {})
    c.check("counters: a client's publish counts one more message-channel publish", answer.get("t") == "ok" and status == 200
            and last["publishes"]["message"] - after["publishes"]["message"] == 1, f"{answer} {after} {last}")
    status, answer = c.api.call("counters", {"appId": c.app})
    c.check(f"counters names no app: 400 with {INVALID_PARAMETER}", failed(status, answer, 400, INVALID_PARAMETER), f"{status} {answer}")


async def check_presence(c, alice, bob):
    bob_id = c.user("bob")
    status, answer = c.call("presence", channel=c.room)
    users = sorted(user["userId"] for user in answer.get("users", []))
    c.check("presence lists alice and bob", status == 200 and answer.get("totalOccupancy") == 2
            and users == sorted([c.user("alice"), bob_id]) and answer.get("nextPage") == "", f"{status} {answer}")
    status, answer = c.call("setState", channel=c.room, userId=bob_id, states={"mood": "busy"})
    c.check("setState for bob: 200", status == 200 and answer == {}, f"{status} {answer}")
    pushes = await alice.wait_for_pushes(
        lambda p: p.get("t") == "presence" and p.get("eventType") == STATE_CHANGED and p.get("publisher") == bob_id, 1)
    c.check("alice heard bob's state change", len(pushes) == 1 and pushes[0].get("states") == {"mood": "busy"}, repr(pushes))
    status, answer = c.call("getState", channel=c.room, userId=bob_id)
    c.check("getState reads it", status == 200 and answer == {"userId": bob_id, "states": {"mood": "busy"}}, f"{status} {answer}")
    status, answer = c.call("presence", channel=c.room, includeState=True)
    states = {user["userId"]: user["states"] for user in answer.get("users", [])}
    c.check("presence with states", status == 200 and states.get(bob_id) == {"mood": "busy"}, f"{status} {answer}")
    status, answer = c.call("setState", channel=c.room, userId=c.user("carol"), states={"k": "v"})
    c.check(f"setState of a non-member: 404 with {USER_NOT_EXIST}", failed(status, answer, 404, USER_NOT_EXIST), f"{status} {answer}")
    status, answer = c.call("whereNow", userId=bob_id)
    c.check("whereNow finds bob in the room", status == 200
            and answer == {"channels": [{"channelType": "message", "channel": c.room}]}, f"{status} {answer}")
    status, answer = c.call("presenceStats", channels=[{"channel": c.room}, {"channelType": "message", "channel": c.lobby}])
    c.check("presenceStats counts 2 and 1", status == 200 and [ch.get("occupancy") for ch in answer.get("channels", [])] == [2, 1],
            f"{status} {answer}")


def check_channels_and_info(c):
    pattern = f"*-{c.suffix}"
    status, answer = c.call("channels", pattern=pattern)
    listed = [(ch["channelType"], ch["channel"], ch["members"], ch["users"]) for ch in answer.get("channels", [])]
    c.check("channels lists the room, the lobby and the stage with their members", status == 200 and listed == [
        ("message", c.lobby, 1, 1), ("message", c.room, 2, 2), ("stream", c.stage, 1, 1)], f"{status} {answer}")
    pages, page = [], ""
    for _ in range(5):
        status, answer = c.call("channels", pattern=pattern, limit=1, page=page)
        pages.append([ch["channel"] for ch in answer.get("channels", [])])
        page = answer.get("nextPage", "")
        if not page:
            break
    c.check("channels one a page", pages == [[c.lobby], [c.room], [c.stage]], repr(pages))
    status, answer = c.call("channels", page="not a token")
    c.check("a page token not of this method: 400", failed(status, answer, 400, INVALID_PARAMETER), f"{status} {answer}")
    status, answer = c.call("info")
    app = answer.get("app", {})
    c.check("info: version, uptime, one node", status == 200 and isinstance(answer.get("version"), str)
            and isinstance(answer.get("uptimeSeconds"), int) and len(answer.get("nodes", [])) == 1
            and answer["nodes"][0].get("url") == c.url, f"{status} {answer}")
    c.check("info counts the app's sessions, users and channels", app.get("sessions") == 3 and app.get("users") == 3
            and app.get("channels", {}).get("message") == {"channels": 2, "members": 3}
            and app.get("channels", {}).get("stream") == {"channels": 1, "members": 1}, repr(app))
    node = (answer.get("nodes") or [{}])[0]
    c.check("info: the node is this one, ready, with its load and the app's", node.get("self") is True and node.get("ready") is True
            and node.get("checks", {}).get("listener") == "ok" and node.get("version") == answer.get("version")
            and node.get("connections") == 3 and node.get("sessions") == {"attached": 3, "detached": 0}
            and node.get("app") == {"sessions": 3, "connections": 3} and isinstance(node.get("startedAtMs"), int)
            and "nodeId" not in node, repr(node))
    c.check("info: the app's sessions and connections summed over the nodes",
            app.get("acrossNodes") == {"sessions": 3, "connections": 3}, repr(app))
    status, answer = c.api.call("info", {})
    c.check("info without appId: the nodes, no app", status == 200 and "app" not in answer and len(answer.get("nodes", [])) == 1
            and "app" not in answer["nodes"][0], f"{status} {answer}")


async def check_metadata(c, alice):
    status, answer = c.call("setChannelMetadata", channel=c.room, items=[{"key": "topic", "value": "v1"}], recordUserId=True,
                            **{"from": "ops"})
    c.check("setChannelMetadata: 200", status == 200 and answer == {}, f"{status} {answer}")
    pushes = await alice.wait_for_pushes(lambda p: p.get("t") == "storage" and p.get("target") == c.room and p.get("eventType") == 3, 1)
    c.check("alice heard the metadata change", len(pushes) == 1 and pushes[0]["items"][0]["value"] == "v1", repr(pushes))
    status, answer = c.call("getChannelMetadata", channel=c.room)
    revision = answer.get("majorRevision", 0)
    c.check("getChannelMetadata reads it with its author", status == 200 and revision > 0
            and [(i["key"], i["value"], i["authorUserId"]) for i in answer.get("items", [])] == [("topic", "v1", "ops")],
            f"{status} {answer}")
    status, answer = c.call("setChannelMetadata", channel=c.room, majorRevision=revision + 5, items=[{"key": "topic", "value": "v2"}])
    c.check(f"a stale majorRevision: 409 with {OUTDATED_REVISION}", failed(status, answer, 409, OUTDATED_REVISION), f"{status} {answer}")
    status, answer = c.call("setChannelMetadata", channel=c.room, majorRevision=revision, items=[{"key": "topic", "value": "v2"}])
    c.check("the current majorRevision: 200", status == 200, f"{status} {answer}")
    status, answer = c.call("removeChannelMetadata", channel=c.room, items=[{"key": "topic"}])
    _, after = c.call("getChannelMetadata", channel=c.room)
    c.check("removeChannelMetadata empties the set", status == 200 and after.get("items") == [], f"{status} {answer} {after}")

    bob_id = c.user("bob")
    status, answer = c.call("setUserMetadata", userId=bob_id, items=[{"key": "tier", "value": "gold"}, {"key": "otp", "value": "1", "ttlMs": 60000}])
    _, read = c.call("getUserMetadata", userId=bob_id)
    items = {item["key"]: item for item in read.get("items", [])}
    c.check("user metadata set and read, with a time to live", status == 200 and items.get("tier", {}).get("value") == "gold"
            and isinstance(items.get("otp", {}).get("expiresAt"), int) and "expiresAt" not in items.get("tier", {}), f"{status} {read}")
    status, answer = c.call("removeUserMetadata", userId=bob_id)
    _, read = c.call("getUserMetadata", userId=bob_id)
    c.check("removeUserMetadata with no items removes the set", status == 200 and read.get("items") == [], f"{status} {read}")


async def check_locks(c, alice, bob):
    for request, fields in (("setLock", {}), ("acquireLock", {})):
        answer = await alice.request(request, channelType=1, channel=c.room, lockName="L", **fields)
        c.check(f"alice {request} L", answer.get("t") == "ok", repr(answer))
    answer = await bob.request("acquireLock", channelType=1, channel=c.room, lockName="L", retry=True)
    c.check("bob waits for L", answer.get("t") == "ok" and answer.get("acquired") is False, repr(answer))
    status, answer = c.call("getLocks", channel=c.room)
    locks = answer.get("locks", [])
    c.check("getLocks: L is alice's", status == 200 and len(locks) == 1 and locks[0]["lockName"] == "L"
            and locks[0]["owner"] == c.user("alice") and locks[0]["ttl"] == 10, f"{status} {answer}")
    status, answer = c.call("revokeLock", channel=c.room, lockName="L", userId=c.user("alice"))
    grants = await bob.wait_for_pushes(lambda p: p.get("t") == "lockGranted" and p.get("lockName") == "L", 1)
    c.check("revokeLock takes L from alice and bob is granted it", status == 200 and len(grants) == 1, f"{status} {answer} {grants}")
    status, answer = c.call("revokeLock", channel=c.room, lockName="L", userId=c.user("alice"))
    c.check(f"revoking from one who does not hold it: {LOCK_NOT_ACQUIRED}", failed(status, answer, 400, LOCK_NOT_ACQUIRED),
            f"{status} {answer}")


async def check_users(c, alice, bob, carol):
    bob_id = c.user("bob")
    status, answer = c.call("unsubscribe", channel=c.room, userId=bob_id)
    c.check("unsubscribe bob from the room: one session", status == 200 and answer == {"sessions": 1}, f"{status} {answer}")
    leaves = await alice.wait_for_pushes(lambda p: p.get("t") == "presence" and p.get("eventType") == LEAVE and p.get("publisher") == bob_id, 1)
    c.check("alice saw bob leave", len(leaves) == 1, repr(leaves))
    c.call("publish", channel=c.room, message="after bob left")
    arrived = await alice.wait_for_pushes(lambda p: messages(c.room)(p) and p.get("message") == "after bob left", 1)
    c.check("the room's next message reaches alice and not bob", len(arrived) == 1
            and not [p for p in bob.pushes if messages(c.room)(p) and p.get("message") == "after bob left"], repr(arrived))
    status, answer = c.call("unsubscribe", channel=c.room, userId=bob_id)
    c.check(f"unsubscribing again: 404 with {NOT_SUBSCRIBED}", failed(status, answer, 404, NOT_SUBSCRIBED), f"{status} {answer}")

    status, answer = c.call("sessions", userId=c.user("carol"))
    sessions = answer.get("sessions", []) if status == 200 else []
    c.check("sessions: carol has one, connected, from 127.0.0.1", len(sessions) == 1 and sessions[0].get("connected") is True
            and sessions[0].get("address", "").startswith("127.0.0.1:") and sessions[0].get("heartbeatInterval") == 5,
            f"{status} {answer}")
    status, answer = c.call("disconnect", userId=c.user("carol"), reason="maintenance")
    c.check("disconnect carol: one session", status == 200 and answer == {"sessions": 1}, f"{status} {answer}")
    closing = await carol.wait_for_pushes(lambda p: p.get("t") == "closing", 1)
    c.check(f"carol was told {KICKED_OUT_BY_SERVER} (kickedOutByServer)", len(closing) == 1
            and closing[0].get("reason") == KICKED_OUT_BY_SERVER and closing[0].get("detail") == "maintenance", repr(closing))
    try:
        await asyncio.wait_for(carol.reader, 15)
    except (asyncio.TimeoutError, asyncio.CancelledError):
        pass
    c.check("carol's connection closed", carol.failure is not None, repr(carol.failure))
    status, answer = c.call("sessions", userId=c.user("carol"))
    c.check("sessions: carol has none left", status == 200 and answer == {"sessions": []}, f"{status} {answer}")
    status, answer = c.call("disconnect", userId=c.user("nobody"))
    c.check("disconnecting a user with no session: 0", status == 200 and answer == {"sessions": 0}, f"{status} {answer}")


def check_batch_and_metrics(c):
    calls = [
        {"method": "publish", "params": {"appId": c.app, "channel": c.room, "message": "batched"}},
        {"method": "getChannelMetadata", "params": {"appId": c.app, "channel": c.room}},
        {"method": "nothingLikeThis", "params": {}},
        {"method": "setChannelMetadata", "params": {"appId": c.app, "channel": c.room, "items": [{"key": "k", "value": "v"}]}},
        {"method": "setChannelMetadata", "params": {"appId": c.app, "channel": c.room, "majorRevision": 999999,
                                                     "items": [{"key": "k", "value": "w"}]}},
    ]
    status, answer = c.api.call("batch", {"calls": calls})
    c.check("a batch answers each call in order: 200, 200, 404, 200, 409", status == 200
            and [r.get("status") for r in answer.get("results", [])] == [200, 200, 404, 200, 409]
            and "result" in answer["results"][1] and answer["results"][4]["error"]["code"] == OUTDATED_REVISION, f"{status} {answer}")
    status, answer = c.api.call("batch", {"calls": [{"method": "batch", "params": {}}]})
    c.check("a batch in a batch: 400", failed(status, answer, 400, INVALID_PARAMETER), f"{status} {answer}")
    status, answer = c.api.call("batch", {"calls": [{"method": "info", "params": {"appId": c.app}}] * 101})
    c.check("a batch of 101 calls: 400", failed(status, answer, 400, INVALID_PARAMETER), f"{status} {answer}")

    status, text = c.api.get("/metrics")
    samples = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            samples[name] = float(value)
    c.check("/metrics counts the API's calls by method and status",
            samples.get('switchboard_api_calls_total{method="publish",status="200"}', 0) >= 5
            and samples.get('switchboard_api_calls_total{method="setChannelMetadata",status="409"}', 0) >= 2
            and samples.get('switchboard_api_calls_total{method="unknown",status="404"}', 0) >= 2,
            repr({name: value for name, value in samples.items() if "api_calls" in name}))
    c.check("/metrics counts the refused keys", samples.get('switchboard_refusals_total{reason="api_key_missing"}', 0) >= 1
            and samples.get('switchboard_refusals_total{reason="api_key_wrong"}', 0) >= 1,
            repr({name: value for name, value in samples.items() if "refusals" in name}))


async def whole_check(args):
    c = Checks(args)
    check_auth_and_errors(c)
    alice, bob, carol = await log_in_with_minted_tokens(c)
    try:
        await check_messages(c, alice, bob, carol)
        await check_presence(c, alice, bob)
        check_channels_and_info(c)
        await check_metadata(c, alice)
        await check_locks(c, alice, bob)
        await check_users(c, alice, bob, carol)
        check_batch_and_metrics(c)
    finally:
        for peer in (alice, bob, carol):
            try:
                await peer.close()
            except Exception:  # noqa: BLE001 - carol's connection is gone already
                pass
    return c.report.summary()


async def rate_check(args):
    """Against a server allowing 5 calls a second per key: a batch of 8 gets 5 answers, then 429s."""
    c = Checks(args)
    status, answer = c.api.call("batch", {"calls": [{"method": "info", "params": {"appId": c.app}}] * 8})
    statuses = [r.get("status") for r in answer.get("results", [])]
    c.check("the first five calls are answered", status == 200 and statuses[:5] == [200] * 5, f"{status} {statuses}")
    c.check(f"the others are 429 with {RATE}", statuses[5:] == [429] * 3
            and all(r["error"]["code"] == RATE for r in answer["results"][5:]), repr(answer))
    status, answer = c.call("info")
    c.check("a call right after is 429 too", failed(status, answer, 429, RATE), f"{status} {answer}")
    return c.report.summary()


def main():
    parser = argparse.ArgumentParser(description="Switchboard server API end-to-end check.")
    parser.add_argument("--url", required=True, help="the client port, e.g. ws://127.0.0.1:9100")
    parser.add_argument("--admin-port", type=int, required=True, help="the admin listener's port")
    parser.add_argument("--api-key", required=True)
    parser.add_argument("--app-id", required=True, help="an app whose certificate the server holds")
    parser.add_argument("--scenario", choices=["whole", "rate"], default="whole")
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.set_defaults(token="")
    args = parser.parse_args()
    check = whole_check if args.scenario == "whole" else rate_check
    return run_check("peer_api", lambda url, app_id, token: check(args), args)


if __name__ == "__main__":
    sys.exit(main())
