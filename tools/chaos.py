#!/usr/bin/env python3
"""Faults under load for cluster mode, and a checker of what must hold through them.

    tools/chaos.sh [minutes]        (builds switchboard, then runs this)
    python3 tools/chaos.py --switchboard PATH [--minutes M] [--seed S] [--keep]

Starts redis-server (appendonly, fsync on every write) and three `switchboard serve --cluster`
nodes on free loopback ports, then, for the given minutes, keeps a load going while it injects one
fault at a time at random: kill -9 of a node (started again 2-4 s later, same port and node id),
SIGSTOP of a node for 3-8 s (then SIGCONT), kill -9 of redis-server (started again 1-2 s later).
The clients are Python peers written from docs/PROTOCOL.md (tools/peer.py):
  - two subscribers of one message channel per node; one that loses its connection logs in again
    on another live node (the same user id) and subscribes again, and notes the time it was away;
  - one publisher per node, numbering its messages; it notes which were answered ok;
  - two metadata writers that each read a counter and write it plus one under the read revision
    (compare-and-set), and note which writes were answered ok;
  - one lock worker per node taking turns at one lock (acquire with retry, a write of a second
    counter guarded by the lock and by compare-and-set, release); it notes the fencing token of each
    grant and which guarded writes were answered ok;
  - one ghost per node, a member of the message channel like a subscriber, that never resumes: when
    it loses its node it drops the connection, waits until its session must have ended (presence
    timeout + TIMEOUT_MARGIN + settling) and logs in as a new session, which subscribes again;
  - one laggard per node, a member like a subscriber that resumes late: LATE_RESUME (6 s) after it
    lost its node, past a killed node's restart and within its presence timeout;
  - one presence watcher per node, quiet (subscribe features presence | beQuiet), that notes every
    presence push of the channel with the time it arrived; it resumes as the others do.
  The members of the message channel (subscribers, ghosts, laggards, watchers) ask for a presence
  timeout of MEMBER_PRESENCE_TIMEOUT (10 s), the other clients for 30 s.
Afterwards it checks, printing one line per invariant:
  1. per publishing session, each session of a subscriber got its messages in order and none twice
     (a subscriber's sessions overlap while a paused node still holds its first; a publish a paused
     node still holds is carried out when it wakes, after what the publisher's next session sent);
  2. every acknowledged publish reached every subscriber that was subscribed, on a live node, from
     a second before it to a second after it; the misses are split into those during a Redis or node
     fault (pub/sub is at most once and the cluster does not tell clients of a gap yet) and the
     others, which must be none;
  3. the counter's final value is at least the number of acknowledged increments and at most that
     plus the writes whose answer never came or said Redis did not answer (storageOperationTimeout:
     made or not); the revisions each writer read only grow;
  4. a subscriber's first session, left on a node that was paused, is closed once that node wakes
     (`closing` 27, sameUidLogin, or 28, kickedOutByServer, when the cluster reaped the paused node
     meanwhile) or with its node;
  5. every grant of the lock had a fencing token no grant had before, and each worker's tokens only
     grow; the guarded counter ends within the acknowledged guarded writes (and those whose answer
     never came); after the faults, a new client gets the lock within its ttl and a margin;
  6. presence. After the quiet period, before any client closes: `whoNow` of the channel, asked on
     each node by a fresh client (again for up to 40 s, until a dead node's sessions timed out),
     lists exactly the subscribers, ghosts and laggards whose connection answers a heartbeat, and
     `whereNow` of each of them and of the watchers and absent members, on each node, names the
     channel for those and nothing for the rest (a watcher is quiet); then a probe joins and leaves,
     and every live watcher must hear both. From the watchers' records, cut into windows with
     nothing missing (from a snapshot, or from a resume that lost the session's history, to the end
     of that connection, or to a gap: `messagesMayBeLost`, or a snapshot in mid-stream), judging
     only moments a window covers:
     - no user is told gone (leave or timeout) twice with no join or snapshot between;
     - a session that resumed within its presence timeout is told gone neither while it was away
       nor after; no user is told its last session left while it had a connection;
     - a client that comes back with its ticket within its presence timeout of losing a killed node
       gets its session back (PROTOCOL.md §2.4), unless Redis was down then (after a pause, a node
       that finds itself reaped ends its sessions as it wakes: counted apart, not a failure);
     - each new session's join is told; each ended session is told gone exactly once;
     - a session of a node killed with kill -9 that nobody resumed is told timed out
       (remoteConnectionTimeout) within its presence timeout + TIMEOUT_MARGIN (3 beats of 1 s, 2 s
       for delivery) of the kill, longer by each Redis kill meanwhile (its outage, the 3 s allowed
       for links to come back, and 1 s);
     - after every gap a watcher is told of, it gets a new snapshot.
--keep keeps the work directory: the nodes' logs and presence.log, the record invariant 6 is judged
from (every member's connections, every watcher's presence pushes and windows).
Exits 0 when every invariant held, 1 when one did not, 2 when it could not run.
"""

import asyncio
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from load_runs import free_port, run_load  # noqa: E402
from peer import connect  # noqa: E402

APP = "chaos-app"
CHANNEL = "chaos"
COUNTER_CHANNEL = "chaos-counter"
LOCK_CHANNEL = "chaos-lock"
LOCK_NAME = "L"
LOCK_TTL = 10  # seconds a lost owner keeps the lock (the least the server allows)
PRESENCE, METADATA, MESSAGE, BE_QUIET = 1, 2, 4, 16  # subscribe features (PROTOCOL.md §3.5)
SNAPSHOT, INTERVAL, JOIN, LEAVE, TIMEOUT = 1, 2, 3, 4, 5  # presence push eventType (PROTOCOL.md §12.3)
MEMBER_PRESENCE_TIMEOUT = 10  # seconds the channel's members ask for (the server clamps into 5-300)
BEAT = 1.0  # a node's beat (docs/CLUSTER.md, "Dead nodes")
TIMEOUT_MARGIN = 3 * BEAT + 2.0  # past a killed node's sessions' presence timeout: its last beat, the next, delivery
SETTLE = 3.0  # seconds a presence event may take to reach a watcher on a loaded machine
STALE_AFTER = 3.0  # seconds without an answer after which a client takes its node for gone
LATE_RESUME = 6.0  # seconds a laggard waits after losing its node: past a killed node's restart, within the timeout
SAME_UID_LOGIN = 27
STORAGE_OPERATION_TIMEOUT = -12018  # Redis took the write and did not answer: it may have been made
MARGIN = 1.0  # seconds around a publish a subscriber must have been subscribed for its miss to count



class Cluster:
    """redis-server and three nodes, each started again on its own port after a fault."""

    def __init__(self, switchboard, work):
        self.switchboard = switchboard
        self.work = work
        self.redis_port = free_port()
        self.ports = [free_port() for _ in range(3)]
        self.redis = None
        self.nodes = [None, None, None]
        self.paused = set()
        self.faults = []  # (start, end, kind, index)
        self.t0 = time.monotonic()  # times in reports are seconds since the cluster started

    def start_redis(self):
        self.redis = subprocess.Popen(
            ["redis-server", "--port", str(self.redis_port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "yes",
             "--appendfsync", "always", "--dir", self.work], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def start_node(self, index):
        data = os.path.join(self.work, f"n{index}")
        os.makedirs(data, exist_ok=True)
        log = open(os.path.join(self.work, f"n{index}.log"), "a")
        self.nodes[index] = subprocess.Popen(
            [self.switchboard, "serve", "--listen", f"127.0.0.1:{self.ports[index]}", "--admin-listen", "off",
             "--data-dir", data, "--cluster", f"redis://127.0.0.1:{self.redis_port}", "--node-id", f"n{index}",
             "--no-rate-limits", "--log-level", "warning"], stdout=subprocess.DEVNULL, stderr=log)

    def url(self, index):
        return f"ws://127.0.0.1:{self.ports[index]}"

    def live(self):
        return [i for i, node in enumerate(self.nodes) if node is not None and node.poll() is None and i not in self.paused]

    async def wait_accepting(self, port, timeout=60):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                _, writer = await asyncio.open_connection("127.0.0.1", port)
                writer.close()
                return
            except OSError:
                await asyncio.sleep(0.2)
        raise RuntimeError(f"nothing accepts on port {port}")

    async def start(self):
        self.t0 = time.monotonic()
        self.start_redis()
        await self.wait_accepting(self.redis_port)
        for index in range(3):
            self.start_node(index)
        for port in self.ports:
            await self.wait_accepting(port)

    async def fault(self, rng):
        kind = rng.choice(["kill-node", "pause-node", "kill-redis"])
        index = rng.randrange(3)
        start = time.monotonic()
        if kind == "kill-node":
            self.nodes[index].kill()
            self.nodes[index].wait()
            await asyncio.sleep(rng.uniform(2, 4))
            self.start_node(index)
            await self.wait_accepting(self.ports[index])
        elif kind == "pause-node":
            self.paused.add(index)
            self.nodes[index].send_signal(signal.SIGSTOP)
            await asyncio.sleep(rng.uniform(3, 8))
            self.nodes[index].send_signal(signal.SIGCONT)
            self.paused.discard(index)
        else:
            self.redis.kill()
            self.redis.wait()
            await asyncio.sleep(rng.uniform(1, 2))
            self.start_redis()
            await self.wait_accepting(self.redis_port)
        self.faults.append((start, time.monotonic() + 3.0, kind, index))  # 3 s for links to come back
        print(f"  fault: {kind}{'' if kind == 'kill-redis' else f' n{index}'} at {start - self.t0:.1f} s "
              f"({time.monotonic() - start:.1f} s)", flush=True)

    def stop(self):
        for process in self.nodes + [self.redis]:
            if process is not None and process.poll() is None:
                process.send_signal(signal.SIGCONT)
                process.kill()
                process.wait()


class TimedPushes(list):
    """A peer's pushes, with the time each arrived (time.monotonic()) in `times`."""

    def __init__(self):
        super().__init__()
        self.times = []

    def append(self, push):
        self.times.append(time.monotonic())
        super().append(push)


async def open_peer(url, name):
    """A connection whose pushes are timed and which notes when it closed (`closed_at`)."""
    peer = await connect(url, name)
    peer.pushes = TimedPushes()  # before the login: nothing is pushed before it
    peer.closed_at = None
    peer.reader.add_done_callback(lambda _: setattr(peer, "closed_at", time.monotonic()))
    return peer


def drop(peer):
    """Gives a connection up at once, as a client does with one it no longer trusts."""
    if peer.heartbeats is not None:
        peer.heartbeats.cancel()
    transport = getattr(peer.ws, "transport", None)
    if transport is not None:
        transport.abort()


def counted(peer):
    """The pushes of `peer` a resume counts: every frame without an id but `closing` (PROTOCOL.md §3.1)."""
    return sum(1 for push in peer.pushes if push.get("t") != "closing")


class Connection:
    """One connection a client logged in on: its node, its session, and when it began and ended."""

    def __init__(self, peer, node, answer):
        self.peer, self.node = peer, node
        self.session = answer.get("session")
        self.resumed = answer.get("resumed") is True
        self.history_lost = bool(answer.get("historyLost"))
        self.lost_messages = answer.get("lostMessages") or 0
        self.presence_timeout = answer.get("presenceTimeout") or MEMBER_PRESENCE_TIMEOUT
        self.start = time.monotonic()  # its loginOk came
        self.ready = None  # subscribed (a new session) or resumed: from then on it shows
        self.asked_resume = False  # the login gave a ticket
        self.end = None  # the last moment it surely worked: its close, or its last answer before a silence
        self.stale = False

    def left(self, stale):
        now = time.monotonic()
        self.stale = stale
        self.end = now - STALE_AFTER if stale else min(self.peer.closed_at or now, now)


class Client:
    """A peer that logs in as `user` on a live node and logs in again elsewhere when it loses it."""

    presence_timeout = 30  # what it asks for at login

    def __init__(self, cluster, user, home, rng):
        self.cluster, self.user, self.home, self.rng = cluster, user, home, rng
        self.peer = None
        self.stale = False  # the node stopped answering (paused): log in elsewhere, as the SDK does
        self.old_peers = []  # (peer, node index, was that node paused when this one left it)
        self.node = None
        self.ticket = None  # (session, secret) of the session to resume, as the SDK keeps it
        self.received_before = 0  # pushes of that session received on earlier connections
        self.logins = {"resumed": 0, "resumed across nodes": 0, "new": 0, "new after a ticket": 0}
        self.resume_losses = []  # lostChannels of each resume that says historyLost
        self.first_of_session = 0  # the first of old_peers that carried the current session
        self.connections = []  # every connection it logged in on and could use (Connection), oldest first
        self.stop = None

    async def call(self, t, **fields):
        """A request that gives up after 3 s (the node is taken for gone) instead of 15."""
        try:
            return await asyncio.wait_for(self.peer.request(t, **fields), STALE_AFTER)
        except asyncio.TimeoutError:
            self.stale = True
            raise

    async def before_login_again(self):
        """Called when the client left its connection, before it logs in again."""

    def gave_up(self):
        """True when the client logs in no more (a ghost once the run stops)."""
        return False

    async def ensure(self, after_login):
        """Logs in (resuming the session when it has a ticket) until it has a connection; False when it gave up."""
        while self.peer is None or self.peer.failure is not None or self.stale:
            if self.peer is not None:
                self.old_peers.append((self.peer, self.node, self.node in self.cluster.paused))
                if self.connections and self.connections[-1].peer is self.peer:
                    self.connections[-1].left(self.stale)
                self.peer, self.stale = None, False
                await self.before_login_again()
            if self.gave_up():
                return False
            self.peer, self.stale = None, False
            live = self.cluster.live()
            if not live:
                await asyncio.sleep(0.2)
                continue
            index = self.home if self.home in live and self.node is None else self.rng.choice(live)
            peer = None
            try:
                peer = await open_peer(self.cluster.url(index), self.user)
                resume = {}
                if self.ticket is not None:
                    received = self.received_before + sum(counted(old) for old, _, _ in self.old_peers[self.first_of_session:])
                    resume = {"resumeSession": self.ticket[0], "resumeSecret": self.ticket[1], "resumeReceived": received}
                answer = await peer.request("login", appId=APP, userId=self.user, token="", heartbeatInterval=5,
                                            presenceTimeout=self.presence_timeout, **resume)
                if answer.get("t") != "loginOk":
                    raise ConnectionError(repr(answer))
                peer.start_heartbeats(answer["heartbeatInterval"])
                connection = Connection(peer, index, answer)
                connection.asked_resume = bool(resume)
                if answer.get("resumed") is True:
                    self.peer, previous, self.node = peer, self.node, index
                    self.logins["resumed across nodes" if previous != index else "resumed"] += 1
                    if answer.get("historyLost"):
                        self.resume_losses.append(answer.get("lostChannels"))
                    # The server kept the session's subscriptions (PROTOCOL.md §2.4): nothing to do again.
                    connection.ready = connection.start
                    self.connections.append(connection)
                    self.resumed_on(peer)
                else:
                    kind = "new after a ticket" if self.ticket else "new"
                    # The ticket is kept only once the session is whole: a session whose subscribe
                    # failed is not resumed (it would lack the subscription), a new one replaces it.
                    await after_login(peer)
                    self.logins[kind] += 1
                    self.peer, self.node = peer, index
                    self.ticket = (answer["session"], answer["resumeSecret"])
                    self.received_before, self.first_of_session = 0, len(self.old_peers)
                    connection.ready = time.monotonic()
                    self.connections.append(connection)
            except Exception:  # noqa: BLE001 - a node going away mid-login: try another
                if peer is not None and peer is not self.peer:
                    drop(peer)
                self.peer = None
                await asyncio.sleep(0.3)
        return True

    def resumed_on(self, peer):
        """The session went on on `peer` (a resume): what it had stands."""


class Subscriber(Client):
    """A member of the message channel that hears its messages."""

    presence_timeout = MEMBER_PRESENCE_TIMEOUT
    features = MESSAGE

    def __init__(self, *args):
        super().__init__(*args)
        self.windows = []  # [start, end] of being subscribed
        self.seen = 0

    async def run(self, stop):
        self.stop = stop

        async def subscribe(peer):
            answer = await peer.request("subscribe", channel=CHANNEL, features=self.features)
            if answer.get("t") != "ok":
                raise ConnectionError(repr(answer))
            self.windows.append([time.monotonic(), None])
        while not stop.is_set():
            if not await self.ensure(subscribe):
                break
            while self.peer.failure is None and not stop.is_set():
                try:
                    await self.call("heartbeat")
                except Exception:  # noqa: BLE001 - gone or not answering
                    break
                await asyncio.sleep(0.5)
            if self.windows and self.windows[-1][1] is None:
                # Subscribed until the last answer before the silence, at the latest.
                self.windows[-1][1] = time.monotonic() - (3.0 if self.stale else 0.0)

    def resumed_on(self, peer):
        self.windows.append([time.monotonic(), None])

    def peers(self):
        """Every connection this user had, oldest first."""
        return [old for old, _, _ in self.old_peers] + ([self.peer] if self.peer else [])

    def received(self):
        """For each of this user's connections, the (publisher, seq) of every chaos message, in arrival order."""
        peers = self.peers()
        return [[tuple(push["message"].split(":")) for push in peer.pushes
                 if push.get("t") == "message" and push.get("channel") == CHANNEL] for peer in peers]


class Watcher(Subscriber):
    """A quiet listener of the channel's presence: it hears every join, leave and timeout, and shows to nobody."""

    features = PRESENCE | BE_QUIET


class Ghost(Subscriber):
    """A member that never resumes: once it loses its node it drops the connection, waits until its
    session must have ended (by its presence timeout, as a killed node's session times out) and logs in
    as a new session, which subscribes again."""

    async def before_login_again(self):
        last = self.connections[-1] if self.connections else None
        if last is None or last.end is None:
            return
        drop(last.peer)
        self.ticket = None
        wait = last.end + last.presence_timeout + TIMEOUT_MARGIN + 2 * SETTLE - time.monotonic()
        if wait > 0:
            try:
                await asyncio.wait_for(self.stop.wait(), wait)
            except asyncio.TimeoutError:
                pass

    def gave_up(self):
        return self.stop.is_set()


class Laggard(Subscriber):
    """A member that resumes late: LATE_RESUME s after it lost its node, past a killed node's restart
    (2-4 s) and within its presence timeout, so its session must stand though its node came back meanwhile."""

    async def before_login_again(self):
        last = self.connections[-1] if self.connections else None
        if last is not None and last.end is not None and last.end + LATE_RESUME > time.monotonic():
            await asyncio.sleep(last.end + LATE_RESUME - time.monotonic())


class Publisher(Client):
    def __init__(self, *args):
        super().__init__(*args)
        self.acked = {}  # seq -> ack time
        self.seq = 0

    async def run(self, stop):
        async def nothing(peer):
            return None
        while not stop.is_set():
            await self.ensure(nothing)
            self.seq += 1
            sent = time.monotonic()
            try:
                # The session is named too: order holds per publishing session (a request a paused
                # node still holds is carried out when it wakes, after what the next session sent).
                answer = await self.call("publish", channelType=1, channel=CHANNEL,
                                         message=f"{self.user}:{self.seq}:{len(self.old_peers)}")
                if answer.get("t") == "ok":
                    self.acked[self.seq] = sent
            except Exception:  # noqa: BLE001 - unknown outcome
                pass
            await asyncio.sleep(0.02)


class CounterWriter(Client):
    def __init__(self, *args):
        super().__init__(*args)
        self.acked = 0
        self.unknown = 0
        self.revisions = []

    async def run(self, stop):
        async def nothing(peer):
            return None
        while not stop.is_set():
            await self.ensure(nothing)
            try:
                read = await self.call("getChannelMetadata", channelType=1, channel=COUNTER_CHANNEL)
                if read.get("t") == "error" or read.get("majorRevision", 0) <= 0:
                    await asyncio.sleep(0.1)
                    continue
                revision = read.get("majorRevision", 0)
                self.revisions.append(revision)
                items = {item["key"]: item.get("value") for item in read.get("items", [])}
                value = int(items.get("n", "0"))
            except Exception:  # noqa: BLE001 - reconnect
                continue
            try:
                answer = await self.call("setChannelMetadata", channelType=1, channel=COUNTER_CHANNEL,
                                                 items=[{"key": "n", "value": str(value + 1)}], majorRevision=revision)
                if answer.get("t") == "ok":
                    self.acked += 1
                elif answer.get("code") == STORAGE_OPERATION_TIMEOUT:
                    self.unknown += 1
            except Exception:  # noqa: BLE001 - unknown outcome
                self.unknown += 1
            await asyncio.sleep(0.05)


class LockWorker(Client):
    """Takes turns at the lock; under it, adds one to a counter the lock guards."""

    def __init__(self, *args):
        super().__init__(*args)
        self.tokens = []  # fencing tokens of this worker's grants, in the order it got them
        self.grants = []  # (token, time, node, session) of each grant
        self.holding = None  # (session, token) until a release is confirmed
        self.acked = 0
        self.unknown = 0

    async def take(self):
        """Acquires the lock with retry; its token, or None when the node went away first."""
        granted = lambda push: push.get("t") == "lockGranted" and push.get("channel") == LOCK_CHANNEL  # noqa: E731
        before = len([push for push in self.peer.pushes if granted(push)])
        answer = await self.call("acquireLock", channelType=1, channel=LOCK_CHANNEL, lockName=LOCK_NAME, retry=True)
        if answer.get("t") != "ok":
            return None
        if answer.get("acquired") is True:
            return answer.get("fencingToken")
        # In line: the grant comes as a push once the owner lets go (or its ttl ends).
        grants = await self.peer.wait_for_pushes(granted, before + 1, timeout=3 * LOCK_TTL + 10)
        if len(grants) <= before:
            self.stale = True
            return None
        return grants[before].get("fencingToken")

    async def run(self, stop):
        async def member(peer):
            await join_lock_channel(peer)
        while not stop.is_set():
            await self.ensure(member)
            try:
                token = await self.take()
            except Exception:  # noqa: BLE001 - gone or not answering: log in elsewhere
                continue
            if token is None:
                continue
            session = self.ticket[0] if self.ticket else None
            if self.holding == (session, token):
                pass  # its release was not confirmed, or its session was resumed elsewhere: the same hold
            else:
                self.tokens.append(token)
                self.grants.append((token, time.monotonic(), self.node, session))
            self.holding = (session, token)
            try:
                read = await self.call("getChannelMetadata", channelType=1, channel=LOCK_CHANNEL)
            except Exception:  # noqa: BLE001 - the node is left; its ttl lets the lock go
                continue
            if read.get("t") != "error" and read.get("majorRevision", 0) > 0:
                items = {item["key"]: item.get("value") for item in read.get("items", [])}
                try:
                    answer = await self.call("setChannelMetadata", channelType=1, channel=LOCK_CHANNEL, lock=LOCK_NAME,
                                             items=[{"key": "n", "value": str(int(items.get("n", "0")) + 1)},
                                                    {"key": "token", "value": str(token)}],
                                             majorRevision=read["majorRevision"])
                    if answer.get("t") == "ok":
                        self.acked += 1
                    elif answer.get("code") == STORAGE_OPERATION_TIMEOUT:
                        self.unknown += 1
                except Exception:  # noqa: BLE001 - unknown outcome; the node is left, and its ttl lets the lock go
                    self.unknown += 1
                    continue
            try:
                released = await self.call("releaseLock", channelType=1, channel=LOCK_CHANNEL, lockName=LOCK_NAME)
                if released.get("t") == "ok":
                    self.holding = None  # otherwise (Redis away, say) still the owner
            except Exception:  # noqa: BLE001 - the node went away; its ttl lets the lock go
                pass
            await asyncio.sleep(0.05)


async def join_lock_channel(peer):
    """Subscribes to the lock's channel: a channel's locks are for its members."""
    answer = await peer.request("subscribe", channel=LOCK_CHANNEL, features=MESSAGE)
    if answer.get("t") != "ok":
        raise ConnectionError(repr(answer))


async def lock_is_free_again(cluster):
    """Seconds a new client on a live node waits for the lock after the run, or None past the ttl and a margin."""
    live = cluster.live()
    if not live:
        return None
    peer = await connect(cluster.url(live[0]), "lock-check")
    try:
        await peer.request("login", appId=APP, userId="lock-check", token="", heartbeatInterval=5, presenceTimeout=30)
        await join_lock_channel(peer)
        start = time.monotonic()
        answer = await peer.request("acquireLock", channelType=1, channel=LOCK_CHANNEL, lockName=LOCK_NAME, retry=True)
        if answer.get("t") != "ok":
            return None
        if answer.get("acquired") is not True:
            granted = lambda push: push.get("t") == "lockGranted" and push.get("channel") == LOCK_CHANNEL  # noqa: E731
            if not await peer.wait_for_pushes(granted, 1, timeout=LOCK_TTL + 10):
                return None
        return time.monotonic() - start
    finally:
        await peer.close()


async def who_now(peer):
    """The users `whoNow` lists in the channel, every page."""
    users, page = [], ""
    while True:
        answer = await asyncio.wait_for(peer.request("whoNow", channelType=1, channel=CHANNEL, page=page), 5)
        if answer.get("t") != "ok":
            raise ConnectionError(repr(answer))
        users += [user.get("userId") for user in answer.get("users", [])]
        page = answer.get("nextPage") or ""
        if not page:
            return users


async def answers(peer):
    """True when `peer` answers a heartbeat within STALE_AFTER: its session is live."""
    try:
        return (await asyncio.wait_for(peer.request("heartbeat"), STALE_AFTER)).get("t") == "ok"
    except Exception:  # noqa: BLE001 - closed or not answering
        return False


async def presence_after(cluster, members, watchers, wait=40.0):
    """After the run, before any client closes: the members whose connection is live, what `whoNow` and
    `whereNow` answer on each node (asked again for up to `wait` s until every node says what is
    expected), and which live watchers hear a probe join and leave."""
    expected = set()
    for client in members:
        connection = client.connections[-1] if client.connections else None
        if (client.peer is not None and connection is not None and connection.peer is client.peer
                and client.peer.failure is None and not client.stale and await answers(client.peer)):
            expected.add(client.user)
    checkers = {}
    for index in range(3):
        if index not in cluster.live():
            continue
        try:
            peer = await open_peer(cluster.url(index), f"check-{index}")
            answer = await peer.request("login", appId=APP, userId=f"check-{index}", token="", heartbeatInterval=5,
                                        presenceTimeout=MEMBER_PRESENCE_TIMEOUT)
            if answer.get("t") == "loginOk":
                peer.start_heartbeats(answer["heartbeatInterval"])
                checkers[index] = peer
        except Exception:  # noqa: BLE001 - reported as a node not asked
            pass
    others = {client.user for client in members + watchers} - expected
    started = time.monotonic()
    who, where = {}, {}
    while True:
        for index, peer in checkers.items():
            try:
                who[index] = await who_now(peer)
            except Exception as error:  # noqa: BLE001
                who[index] = repr(error)
            where[index] = {}
            for user in sorted(expected | others):
                try:
                    answer = await asyncio.wait_for(peer.request("whereNow", userId=user), 5)
                    where[index][user] = sorted((c.get("channelType"), c.get("channel")) for c in answer.get("channels", []))
                except Exception as error:  # noqa: BLE001
                    where[index][user] = repr(error)
        right_who = {index: isinstance(users, list) and sorted(users) == sorted(expected) for index, users in who.items()}
        right_where = {index: all(channels == ([(1, CHANNEL)] if user in expected else []) for user, channels in places.items())
                       for index, places in where.items()}
        if (all(right_who.values()) and all(right_where.values())) or time.monotonic() - started > wait:
            break
        await asyncio.sleep(1.0)
    agreed_after = time.monotonic() - started
    # A probe joins and leaves: each watcher whose connection is live must hear both.
    live_watchers = [w for w in watchers if w.peer is not None and w.peer.failure is None and await answers(w.peer)]
    heard, deaf = 0, []
    probe_node = next(iter(checkers), None)
    if probe_node is not None:
        probe = await open_peer(cluster.url(probe_node), "probe")
        try:
            answer = await probe.request("login", appId=APP, userId="probe", token="", heartbeatInterval=5,
                                         presenceTimeout=MEMBER_PRESENCE_TIMEOUT)
            probe.start_heartbeats(answer["heartbeatInterval"])
            about = lambda kind: lambda push: (push.get("t") == "presence" and push.get("channel") == CHANNEL  # noqa: E731
                                               and push.get("eventType") == kind and push.get("publisher") == "probe")
            await probe.request("subscribe", channel=CHANNEL, features=MESSAGE)
            joined = await asyncio.gather(*(w.peer.wait_for_pushes(about(JOIN), 1, timeout=10) for w in live_watchers))
            await probe.request("unsubscribe", channel=CHANNEL)
            left = await asyncio.gather(*(w.peer.wait_for_pushes(about(LEAVE), 1, timeout=10) for w in live_watchers))
            heard = sum(1 for j, k in zip(joined, left) if j and k)
            deaf = [f"{w.user} (n{w.node}, session {w.connections[-1].session}, "
                    f"{'resumed' if w.connections[-1].resumed else 'new'})" for w, j, k in zip(live_watchers, joined, left)
                    if not (j and k)]
            await probe.request("logout")
        except Exception as error:  # noqa: BLE001 - reported: the probe did not get through
            deaf.append(f"the probe failed: {error!r}")
        finally:
            await probe.close()
    for peer in checkers.values():
        await peer.close()
    return {"expected": expected, "who": who, "where": where, "right_who": right_who, "right_where": right_where,
            "agreed_after": agreed_after, "live_watchers": [w.user for w in live_watchers], "probe_heard": heard, "deaf": deaf,
            "until": time.monotonic()}


def fault_at(cluster, moment):
    """The kind of the fault going on around `moment`, or None."""
    return next((kind for start, end, kind, _ in cluster.faults if start - MARGIN <= moment <= end + MARGIN), None)


def worked_until(connection, faults, until):
    """The last moment `connection` surely worked: its end, or the start of the pause or kill of its node
    that it ended in (a connection a paused node closes once awake stopped working when it was paused)."""
    if connection.end is None:
        return until
    for start, end, kind, index in faults:
        if index == connection.node and kind in ("pause-node", "kill-node") and start - 0.5 <= connection.end <= end:
            return min(connection.end, start)
    return connection.end


class Window:
    """A stretch of one watcher's record with nothing missing: from a snapshot (or from a resume that
    lost the session's history) to the end of that connection, the next gap, or the end of the run."""

    t0 = 0.0  # the cluster's start, for the times in its name

    def __init__(self, watcher, start, origin, armed):
        self.watcher, self.start, self.end, self.origin = watcher, start, None, origin
        self.armed = armed  # False after a take-over (a resume that lost the history) until a snapshot comes
        self.events = []  # (arrival, eventType, publisher or the snapshot's users, firstOrLast)

    def __str__(self):
        return (f"{self.watcher} ({self.origin} window from {self.start - self.t0:.1f} s"
                f"{'' if self.armed else ', after a take-over and no snapshot since'})")

    def covers(self, start, end):
        return self.start <= start and end <= self.end

    def gone(self, user, start, end):
        """The leaves and timeouts of `user` this window heard from `start` to `end`."""
        return [event for event in self.events
                if event[1] in (LEAVE, TIMEOUT) and event[2] == user and start <= event[0] <= end]


def windows_of(watcher, faults, until):
    """A watcher's windows, and the gaps it was told of that no snapshot followed. A resume that kept the
    session's history (no historyLost, nothing lost) goes on with the window; one that lost it starts a
    window of unknown state a second after its loginOk. A gap (`messagesMayBeLost`: the node's link to the
    others was down) or a snapshot in a window ends it where the gap may have begun (the start of the last
    fault before) and starts a new one: of unknown state at the gap, from the snapshot's list at a snapshot."""
    windows, current, unanswered = [], None, []
    last_fault = lambda moment: max([start for start, _, _, _ in faults if start <= moment] or [moment - 5.0])  # noqa: E731
    for connection in watcher.connections:
        end = worked_until(connection, faults, until)
        if not (connection.resumed and not connection.history_lost and not connection.lost_messages and current is not None):
            current = None
            if connection.resumed:
                current = Window(watcher.user, connection.start + 1.0, "resume", armed=False)
                windows.append(current)
        parts = []
        pushes = list(zip(connection.peer.pushes, connection.peer.pushes.times))
        snapshots = [at for push, at in pushes if push.get("t") == "presence" and push.get("eventType") == SNAPSHOT
                     and push.get("channel") == CHANNEL]
        for push, at in pushes:
            if at > end:
                break
            if push.get("t") == "messagesMayBeLost":
                if not any(at - 2.0 <= moment <= at + SETTLE for moment in snapshots):
                    unanswered.append((watcher.user, connection.node, at))
                if current is not None:
                    current.end = min(at, last_fault(at))
                current = Window(watcher.user, at, "gap", armed=current is not None and current.armed)
                windows.append(current)
                continue
            if push.get("t") != "presence" or push.get("channel") != CHANNEL:
                continue
            kind = push.get("eventType")
            if kind in (SNAPSHOT, INTERVAL):
                parts.append(push)
                if push.get("more"):
                    continue
                users = [user.get("userId") for part in parts for user in part.get("snapshot") or []]
                parts = []
                if current is not None:
                    current.end = min(at, last_fault(at))
                current = Window(watcher.user, at, "snapshot" if kind == SNAPSHOT else "interval", armed=True)
                windows.append(current)
                current.events.append((at, kind, users if kind == SNAPSHOT else None, None))
            elif current is not None:
                current.events.append((at, kind, push.get("publisher"), bool(push.get("firstOrLast"))))
        if current is not None:
            current.end = end
    return [window for window in windows if window.end is not None and window.end > window.start], unanswered


def sessions_of(client):
    """A client's sessions as [session, [its connections]], in the order it had them."""
    sessions = []
    for connection in client.connections:
        if sessions and sessions[-1][0] == connection.session and connection.resumed:
            sessions[-1][1].append(connection)
        else:
            sessions.append([connection.session, [connection]])
    return sessions


def check_presence(cluster, members, watchers, now):
    """Invariant 6 from what the watchers heard and what was asked after the run: (ok, line, details)."""
    t = lambda moment: f"{moment - cluster.t0:.1f}"  # noqa: E731
    until = now["until"]
    windows, unanswered = [], []
    for watcher in watchers:
        theirs, gaps = windows_of(watcher, cluster.faults, until)
        windows += theirs
        unanswered += gaps
    for window in windows:
        window.t0 = cluster.t0
    ended = lambda connection: worked_until(connection, cluster.faults, until)  # noqa: E731
    details = [f"{user} on n{node} was told of a gap (messagesMayBeLost) at {t(at)} s and got no new presence snapshot"
               for user, node, at in unanswered]

    # What the nodes answered after the quiet period.
    expected = now["expected"]
    for index, users in sorted(now["who"].items()):
        if not now["right_who"][index]:
            listed = set(users) if isinstance(users, list) else set()
            details.append(f"whoNow on n{index}: {users if not isinstance(users, list) else ''}"
                           f"missing {sorted(expected - listed)}, not expected {sorted(listed - expected)}")
        if not now["right_where"][index]:
            wrong = {user: channels for user, channels in now["where"][index].items()
                     if channels != ([(1, CHANNEL)] if user in expected else [])}
            details.append(f"whereNow on n{index}: wrong for {wrong}")
    asked = len(now["who"])
    who_right = sum(1 for ok in now["right_who"].values() if ok)
    where_right = sum(1 for ok in now["right_where"].values() if ok)

    # (a) Told gone twice with no join or snapshot between, within one window.
    seen, duplicates, unlisted = 0, [], 0
    for window in windows:
        gone, listed, joined = {}, None, set()
        for at, kind, who, last in window.events:
            if kind in (SNAPSHOT, INTERVAL):
                gone, listed, joined = {}, (set(who) if kind == SNAPSHOT else None), set()
            elif kind == JOIN:
                gone.pop(who, None)
                joined.add(who)
            elif kind in (LEAVE, TIMEOUT):
                seen += 1
                if who in gone:
                    duplicates.append(f"{window} heard {who} "
                                      f"{'timed out' if kind == TIMEOUT else 'leave'} at {t(at)} s after "
                                      f"{'a timeout' if gone[who][1] == TIMEOUT else 'a leave'} at {t(gone[who][0])} s")
                elif listed is not None and who not in listed and who not in joined:
                    unlisted += 1
                if last:
                    gone[who] = (at, kind)
    details += duplicates

    # (b) A session that resumed within its presence timeout is told gone neither while it was away
    # nor (its last leave) while it had a connection.
    timely, watched, resumed_left, connected_left = 0, 0, [], []
    for client in members:
        for before, after in zip(client.connections, client.connections[1:]):
            if not after.resumed or after.session != before.session or before.end is None:
                continue
            if after.start - ended(before) >= after.presence_timeout - 1.0:
                continue  # came back too late to count on its session standing
            start, end = ended(before), after.start + SETTLE
            timely += 1
            watched += any(window.covers(start, end) for window in windows)
            told = [(window.watcher, event) for window in windows for event in window.gone(client.user, start, end)]
            if told:
                resumed_left.append(f"{client.user} (session {after.session}) lost n{before.node} at {t(start)} s, resumed "
                                    f"on n{after.node} at {t(after.start)} s, yet told gone: "
                                    + ", ".join(f"{w} {'timeout' if e[1] == TIMEOUT else 'leave'} at {t(e[0])} s" for w, e in told))
        for connection in client.connections:
            start, end = connection.ready + SETTLE, ended(connection)
            for window in windows:
                for event in window.gone(client.user, start, end):
                    if event[3]:
                        connected_left.append(f"{window.watcher} heard {client.user} "
                                              f"{'time out' if event[1] == TIMEOUT else 'leave'} (its last) at {t(event[0])} s while "
                                              f"connected on n{connection.node} (session {connection.session}, "
                                              f"{t(connection.ready)} s to {t(end)} s)")
    details += resumed_left + connected_left

    # A client that came back with its ticket within its presence timeout keeps its session (PROTOCOL.md
    # §2.4: for a dead node, counted from its last beat), unless Redis was down then.
    refused = {"kill-node": [], "pause-node": [], "other": []}
    for client in members:
        for before, after in zip(client.connections, client.connections[1:]):
            if not after.asked_resume or after.resumed or before.end is None:
                continue
            lost = ended(before)
            if after.start - lost >= before.presence_timeout - 1.0 or any(
                    kind == "kill-redis" and start - 1.0 <= after.start and lost <= end for start, end, kind, _ in cluster.faults):
                continue
            cause = next((kind for start, end, kind, index in cluster.faults if index == before.node
                          and kind in ("kill-node", "pause-node") and start - 0.5 <= lost <= start + 3.0), "other")
            told = [(window.watcher, t(event[0]), event[1]) for window in windows
                    for event in window.gone(client.user, lost, after.start + SETTLE)]
            refused[cause].append(f"{client.user} lost n{before.node} ({cause}) at {t(lost)} s, came back with its ticket "
                                  f"{after.start - lost:.1f} s later on n{after.node}: new session {after.session} instead of "
                                  f"{before.session}; told gone meanwhile: {told or 'no watcher heard'}")
    details += refused["kill-node"] + refused["other"]

    # Each new session's subscribe is told as a join to every window that covers it.
    joins_due, joins_heard, joins_missed = 0, 0, []
    for client in members:
        for connection in client.connections:
            if connection.resumed:
                continue
            start, end = connection.ready - 1.0, connection.ready + SETTLE
            for window in windows:
                if not window.covers(start, end):
                    continue
                joins_due += 1
                if any(event[1] == JOIN and event[2] == client.user and start <= event[0] <= end for event in window.events):
                    joins_heard += 1
                else:
                    joins_missed.append((window.armed, f"{window} was not told {client.user} joined at "
                                                       f"{t(connection.ready)} s (session {connection.session} on n{connection.node})"))
    details += [text for _, text in joins_missed]

    # (c) Every ended session is told gone once in each window that watched it throughout; one of a
    # killed node that nobody resumed is told timed out within its bound of the kill.
    judged, once, missing, twice, missing_unarmed = 0, 0, [], [], 0
    killed_total, killed_ok, delays, bounds = 0, 0, [], set()
    for client in members:
        sessions = sessions_of(client)
        for position, (session, connections) in enumerate(sessions):
            last = connections[-1]
            if last.end is None:
                continue  # still on
            lost = ended(last)
            following = sessions[position + 1][1][0] if position + 1 < len(sessions) else None
            limit = last.presence_timeout + TIMEOUT_MARGIN
            kill = next((fault for fault in cluster.faults if fault[2] == "kill-node" and fault[3] == last.node
                         and fault[0] - 0.5 <= lost <= fault[0] + 3.0), None)
            if kill is not None:
                limit += sum(end - start + 1.0 for start, end, kind, _ in cluster.faults
                             if kind == "kill-redis" and start < kill[0] + limit and end > kill[0])
            if kill is not None and (following is None or following.start > kill[0] + limit):
                start, end, timeout_only = kill[0], kill[0] + limit, True
            else:
                start, timeout_only = lost, False
                end = (min(following.start, lost + limit) if following else lost + limit) + SETTLE
            if following is not None and following.end is not None:
                end = min(end, following.end)  # the next session's own end is not this one's
            if end > until:
                continue
            verdicts = [(window, window.gone(client.user, start - 0.5, end)) for window in windows]
            verdicts = [(window, told) for window, told in verdicts if told or window.covers(start, end)]
            if not verdicts:
                continue
            judged += 1
            where = (f"{client.user} session {session} on n{last.node}, lost at {t(lost)} s"
                     + (f", node killed at {t(kill[0])} s" if kill else "")
                     + (f", new session at {t(following.start)} s" if following else ""))
            if any(len(told) > 1 for _, told in verdicts):
                twice.append(f"{where}: told gone " + "; ".join(f"{w.watcher}: {[(t(e[0]), e[1]) for e in told]}"
                                                                for w, told in verdicts if len(told) > 1))
            elif any(not told for _, told in verdicts):
                missing_unarmed += all(not w.armed for w, told in verdicts if not told)
                later = [(str(w), [(t(e[0]), e[1]) for e in w.gone(client.user, end, w.end)][:1])
                         for w, told in verdicts if not told]
                missing.append(f"{where}: not told gone by {t(end)} s in the windows of {later} (first told after, if ever)")
            else:
                once += 1
            if timeout_only:
                killed_total += 1
                bounds.add(round(limit, 1))
                if all(len(told) == 1 and told[0][1] == TIMEOUT and told[0][0] <= end for _, told in verdicts):
                    killed_ok += 1
                    delays += [told[0][0] - kill[0] for _, told in verdicts]
                elif not any(len(told) > 1 or not told for _, told in verdicts):
                    missing.append(f"{where}: told {[(w.watcher, t(e[0]), e[1]) for w, told in verdicts for e in told]}, "
                                   f"not a timeout (type {TIMEOUT})")
    details += twice + missing

    probe_ok = now["probe_heard"] == len(now["live_watchers"]) and now["live_watchers"]
    if not probe_ok:
        details.append(f"the probe was heard joining and leaving by {now['probe_heard']} of the live watchers "
                       f"{now['live_watchers']}; not by {now['deaf']}")
    ok = (bool(expected) and asked == 3 and who_right == 3 and where_right == 3 and not duplicates and not resumed_left
          and not refused["kill-node"] and not refused["other"] and not joins_missed
          and not connected_left and not twice and not missing and killed_ok == killed_total and bool(probe_ok)
          and not unanswered)
    origins = {origin: sum(1 for window in windows if window.origin == origin)
               for origin in ("snapshot", "resume", "gap", "interval")}
    intervals = f", {origins['interval']} from an interval event" if origins["interval"] else ""
    base = MEMBER_PRESENCE_TIMEOUT + TIMEOUT_MARGIN
    longer = sorted(b for b in bounds if b > base)
    bound = f"{base:g} s" + (f" ({', '.join(f'{b:g}' for b in longer)} s with a Redis kill meanwhile)" if longer else "")
    unarmed_joins = sum(1 for armed, _ in joins_missed if not armed)
    spread = f", {min(delays):.1f}-{max(delays):.1f} s after the kill" if delays else ""
    summary = (f"     presence: {len(windows)} watcher windows ({origins['snapshot']} from a snapshot, {origins['resume']} from a "
               f"resume, {origins['gap']} from a gap{intervals}); {len(unanswered)} gaps told with no new snapshot; whoNow and whereNow "
               f"{'as expected' if who_right == where_right == asked == 3 else 'still not as expected'} "
               f"{now['agreed_after']:.1f} s after the first question; {timely} resumes within the presence timeout "
               f"({watched} watched throughout); ended sessions judged: {judged}, told gone once: {once}, never: "
               f"{len(missing)} ({missing_unarmed} of them only in windows after a take-over and no snapshot since), twice: "
               f"{len(twice)}; joins not told: {len(joins_missed)} ({unarmed_joins} in windows after a take-over and no "
               f"snapshot since); resumes refused within the presence timeout after a node kill: "
               f"{len(refused['kill-node'])}, after a pause (a reaped node ends its sessions when it wakes): "
               f"{len(refused['pause-node'])}, otherwise: {len(refused['other'])}; {unlisted} leaves of users the last snapshot did not list; the probe "
               f"heard by {now['probe_heard']}/{len(now['live_watchers'])} live watchers")
    line = (f"6. presence: {len(expected)} users expected, whoNow right on {who_right}/{asked} nodes, whereNow on "
            f"{where_right}/{asked}; {seen} leaves/timeouts heard, {len(duplicates)} twice in a row; "
            f"{len(resumed_left)} resumed sessions told gone, {len(connected_left)} told gone while connected, "
            f"{sum(len(v) for k, v in refused.items() if k != 'pause-node')} resumes refused; joins told {joins_heard}/{joins_due}; "
            f"killed-node sessions timed out within {bound}: {killed_ok}/{killed_total}{spread}")
    return ok, line, [summary] + [f"     {detail}" for detail in details[:40]]


def write_presence_record(cluster, members, watchers, until, path):
    """The record invariant 6 is judged from, for reading after a run (--keep): faults, every member's
    connections, every watcher's presence pushes with their arrival, and its windows; seconds since start."""
    t = lambda moment: "-" if moment is None else f"{moment - cluster.t0:.2f}"  # noqa: E731
    with open(path, "w") as out:
        for start, end, kind, index in cluster.faults:
            out.write(f"fault {t(start)} {t(end)} {kind} n{index}\n")
        for client in members + watchers:
            for c in client.connections:
                out.write(f"connection {client.user} n{c.node} session {c.session} resumed {c.resumed} historyLost "
                          f"{c.history_lost} asked {c.asked_resume} start {t(c.start)} ready {t(c.ready)} end {t(c.end)} stale {c.stale}\n")
        for watcher in watchers:
            for c in watcher.connections:
                for push, at in zip(c.peer.pushes, c.peer.pushes.times):
                    if push.get("t") == "presence":
                        users = [user.get("userId") for user in push.get("snapshot") or []]
                        out.write(f"heard {watcher.user} {t(at)} n{c.node} session {c.session} type {push.get('eventType')} "
                                  f"{push.get('publisher')} last {bool(push.get('firstOrLast'))} "
                                  f"{users if push.get('eventType') == SNAPSHOT else ''}\n")
                    elif push.get("t") in ("closing", "messagesMayBeLost"):
                        out.write(f"heard {watcher.user} {t(at)} n{c.node} session {c.session} {push}\n")
            for window in windows_of(watcher, cluster.faults, until)[0]:
                out.write(f"window {watcher.user} {window.origin} {t(window.start)} {t(window.end)} {len(window.events)} events\n")


def node_log_lines(cluster, words, per_node=8):
    """The last lines of each node's log that mention one of `words`."""
    lines = []
    for index in range(3):
        try:
            with open(os.path.join(cluster.work, f"n{index}.log"), errors="replace") as log:
                found = [line.rstrip() for line in log if any(word in line for word in words)]
        except OSError:
            continue
        lines += [f"     n{index}.log: {line[:300]}" for line in found[-per_node:]]
    return lines


def check(cluster, subscribers, publishers, writers, final_counter, lockers, final_guarded, free_after, members, watchers,
          presence):
    failures = 0

    def report(ok, line):
        nonlocal failures
        failures += 0 if ok else 1
        print(f"{'ok  ' if ok else 'FAIL'} {line}", flush=True)

    disorder = 0
    for subscriber in subscribers:
        for session in subscriber.received():
            last = {}
            for publisher, seq, publishing_session in session:
                key, seq = (publisher, publishing_session), int(seq)
                if seq <= last.get(key, 0):
                    disorder += 1
                last[key] = seq
    report(disorder == 0,
           f"1. per publishing session, each subscribing session got its messages in order and once: {disorder} out of order or repeated")

    missed_in_fault, missed_outside, expected = {}, 0, 0
    for subscriber in subscribers:
        got = {(publisher, int(seq)) for session in subscriber.received() for publisher, seq, _ in session}
        for publisher in publishers:
            for seq, moment in publisher.acked.items():
                covered = any(start <= moment - MARGIN and (end is None or moment + MARGIN <= end)
                              for start, end in subscriber.windows)
                if not covered:
                    continue
                expected += 1
                if (publisher.user, seq) not in got:
                    kind = fault_at(cluster, moment)
                    if kind:
                        missed_in_fault[kind] = missed_in_fault.get(kind, 0) + 1
                    else:
                        missed_outside += 1
    during = ", ".join(f"{count} during {kind}" for kind, count in sorted(missed_in_fault.items())) or "none during faults"
    gaps = sum(1 for subscriber in subscribers for peer in subscriber.peers() for push in peer.pushes
               if push.get("t") == "messagesMayBeLost" and push.get("channel") == CHANNEL)
    report(missed_outside == 0,
           f"2. acknowledged publishes to subscribers that stayed: {expected} due, {missed_outside} missed outside faults; "
           f"{during} (pub/sub is at most once: subscribers were told of {gaps} gaps, messagesMayBeLost)")

    acked = sum(writer.acked for writer in writers)
    unknown = sum(writer.unknown for writer in writers)
    grows = all(a <= b for writer in writers for a, b in zip(writer.revisions, writer.revisions[1:]))
    report(final_counter is not None and acked <= final_counter <= acked + unknown and grows,
           f"3. counter {final_counter}: {acked} increments acknowledged, {unknown} unknown; revisions read only grow: {grows}")

    left = [(peer, index) for client in subscribers + publishers + writers for peer, index, paused in client.old_peers if paused]
    lingering = [index for peer, index in left if not peer.reader.done()]
    report(not lingering, f"4. first sessions left on a paused node: {len(left)}, still open after it woke: {len(lingering)}")

    tokens = [token for locker in lockers for token in locker.tokens]
    distinct = len(set(tokens)) == len(tokens) and all(isinstance(token, int) for token in tokens)
    growing = all(a < b for locker in lockers for a, b in zip(locker.tokens, locker.tokens[1:]))
    guarded_acked = sum(locker.acked for locker in lockers)
    guarded_unknown = sum(locker.unknown for locker in lockers)
    bounded = final_guarded is not None and guarded_acked <= final_guarded <= guarded_acked + guarded_unknown
    free = free_after is not None
    if not (distinct and growing):
        seen = {}
        for locker in lockers:
            for token, moment, node, session in locker.grants:
                seen.setdefault(token, []).append((locker.user, round(moment, 2), node, session))
        for token, holders in sorted(seen.items()):
            if len(holders) > 1:
                print(f"     token {token} granted {len(holders)} times: {holders}; faults around: "
                      f"{[f for f in cluster.faults if f[0] - 5 <= holders[0][1] <= f[1] + 5]}")
        for locker in lockers:
            for (a, ta, na, sa), (b, tb, nb, sb) in zip(locker.grants, locker.grants[1:]):
                if a >= b:
                    print(f"     {locker.user}: token {a} (t {ta:.2f} n{na} s{sa}) then {b} (t {tb:.2f} n{nb} s{sb})")
    clients = subscribers + publishers + writers + lockers
    logins = {kind: sum(client.logins[kind] for client in clients) for kind in clients[0].logins}
    lost = sum(len(client.resume_losses) for client in clients)
    print(f"     logins again: {logins['resumed across nodes']} resumed on another node ({lost} saying historyLost), "
          f"{logins['resumed']} resumed on the same node, {logins['new after a ticket']} new sessions though a ticket "
          f"was given", flush=True)
    report(distinct and growing and bounded and free,
           f"5. lock: {len(tokens)} grants, tokens distinct: {distinct}, growing per worker: {growing}; guarded counter "
           f"{final_guarded}: {guarded_acked} acknowledged, {guarded_unknown} unknown; free again after "
           f"{'never' if free_after is None else f'{free_after:.1f} s'}")

    ok, line, details = check_presence(cluster, subscribers + members, watchers, presence)
    for detail in details:
        print(detail, flush=True)
    if not ok:
        for detail in node_log_lines(cluster, ("presence", "[error]")):
            print(detail, flush=True)
    report(ok, line)
    return failures


async def main_async(args):
    rng = random.Random(args.seed)
    work = tempfile.mkdtemp(prefix="switchboard-chaos-")
    cluster = Cluster(args.switchboard, work)
    try:
        await cluster.start()
        print(f"cluster up: nodes on {cluster.ports}, redis on {cluster.redis_port}; seed {args.seed}", flush=True)
        stop = asyncio.Event()
        watchers = [Watcher(cluster, f"watch-{n}", n, rng) for n in range(3)]
        subscribers = [Subscriber(cluster, f"sub-{n}-{k}", n, rng) for n in range(3) for k in range(2)]
        ghosts = [Ghost(cluster, f"ghost-{n}", n, rng) for n in range(3)]
        laggards = [Laggard(cluster, f"late-{n}", n, rng) for n in range(3)]
        publishers = [Publisher(cluster, f"pub-{n}", n, rng) for n in range(3)]
        writers = [CounterWriter(cluster, f"writer-{n}", n, rng) for n in range(2)]
        tasks = [asyncio.create_task(client.run(stop)) for client in watchers + subscribers + ghosts + laggards]
        await asyncio.sleep(2)
        # The counter starts at 0, so that every increment is a compare-and-set on a set that exists.
        setup = await connect(cluster.url(0), "setup")
        await setup.request("login", appId=APP, userId="setup", token="", heartbeatInterval=5, presenceTimeout=30)
        answer = await setup.request("setChannelMetadata", channelType=1, channel=COUNTER_CHANNEL,
                                     items=[{"key": "n", "value": "0"}], majorRevision=-1)
        if answer.get("t") != "ok":
            raise RuntimeError(f"cannot set the counter up: {answer!r}")
        await join_lock_channel(setup)
        lock = await setup.request("setLock", channelType=1, channel=LOCK_CHANNEL, lockName=LOCK_NAME, ttl=LOCK_TTL)
        guarded = await setup.request("setChannelMetadata", channelType=1, channel=LOCK_CHANNEL,
                                      items=[{"key": "n", "value": "0"}], majorRevision=-1)
        await setup.close()
        if lock.get("t") != "ok" or guarded.get("t") != "ok":
            raise RuntimeError(f"cannot set the lock up: {lock!r} {guarded!r}")
        lockers = [LockWorker(cluster, f"locker-{n}", n, rng) for n in range(3)]
        tasks += [asyncio.create_task(client.run(stop)) for client in publishers + writers + lockers]
        deadline = time.monotonic() + args.minutes * 60
        while time.monotonic() < deadline:
            await asyncio.sleep(rng.uniform(4, 10))
            await cluster.fault(rng)
        await asyncio.sleep(8)  # quiet: links back, paused nodes' kicks delivered
        stop.set()
        await asyncio.wait(tasks, timeout=30)
        await asyncio.sleep(2)
        final = None
        reader = writers[0].peer
        if reader is not None and reader.failure is None:
            read = await reader.request("getChannelMetadata", channelType=1, channel=COUNTER_CHANNEL)
            items = {item["key"]: item.get("value") for item in read.get("items", [])}
            final = int(items.get("n", "0"))
        final_guarded = None
        if reader is not None and reader.failure is None:
            read = await reader.request("getChannelMetadata", channelType=1, channel=LOCK_CHANNEL)
            items = {item["key"]: item.get("value") for item in read.get("items", [])}
            final_guarded = int(items.get("n", "0"))
        free_after = await lock_is_free_again(cluster)
        presence = await presence_after(cluster, subscribers + ghosts + laggards, watchers)
        print(f"faults: {len(cluster.faults)}; messages acknowledged: {sum(len(p.acked) for p in publishers)}", flush=True)
        failures = check(cluster, subscribers, publishers, writers, final, lockers, final_guarded, free_after,
                         ghosts + laggards, watchers, presence)
        if args.keep:
            write_presence_record(cluster, subscribers + ghosts + laggards, watchers, presence["until"], os.path.join(work, "presence.log"))
        for client in subscribers + publishers + writers + lockers + ghosts + laggards + watchers:
            for peer in [old for old, _, _ in client.old_peers] + ([client.peer] if client.peer else []):
                try:
                    await asyncio.wait_for(peer.close(), 5)
                except Exception:  # noqa: BLE001
                    pass
        return 1 if failures else 0
    finally:
        cluster.stop()
        if args.keep:
            print(f"work directory kept: {work}", flush=True)
        else:
            shutil.rmtree(work, ignore_errors=True)


def main():
    def keep(parser):
        parser.add_argument("--keep", action="store_true",
                            help="keep the work directory (the nodes' logs, Redis's files) and say where")
    return run_load("Switchboard cluster faults under load, and a checker.", main_async, minutes=3.0,
                    more_arguments=keep)


if __name__ == "__main__":
    sys.exit(main())
