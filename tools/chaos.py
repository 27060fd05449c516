#!/usr/bin/env python3
"""Faults under load for cluster mode, and a checker of what must hold through them.

    tools/chaos.sh [minutes]        (builds switchboard, then runs this)
    python3 tools/chaos.py --switchboard PATH [--minutes M] [--seed S]

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
    grant and which guarded writes were answered ok.
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
     never came); after the faults, a new client gets the lock within its ttl and a margin.
Exits 0 when every invariant held, 1 when one did not, 2 when it could not run.
"""

import asyncio
import os
import random
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
MESSAGE, METADATA = 4, 2  # subscribe features (PROTOCOL.md §3.5)
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
        print(f"  fault: {kind}{'' if kind == 'kill-redis' else f' n{index}'} ({time.monotonic() - start:.1f} s)", flush=True)

    def stop(self):
        for process in self.nodes + [self.redis]:
            if process is not None and process.poll() is None:
                process.send_signal(signal.SIGCONT)
                process.kill()
                process.wait()


class Client:
    """A peer that logs in as `user` on a live node and logs in again elsewhere when it loses it."""

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

    async def call(self, t, **fields):
        """A request that gives up after 3 s (the node is taken for gone) instead of 15."""
        try:
            return await asyncio.wait_for(self.peer.request(t, **fields), 3)
        except asyncio.TimeoutError:
            self.stale = True
            raise

    async def ensure(self, after_login):
        while self.peer is None or self.peer.failure is not None or self.stale:
            if self.peer is not None:
                self.old_peers.append((self.peer, self.node, self.node in self.cluster.paused))
            self.peer, self.stale = None, False
            live = self.cluster.live()
            if not live:
                await asyncio.sleep(0.2)
                continue
            index = self.home if self.home in live and self.node is None else self.rng.choice(live)
            try:
                peer = await connect(self.cluster.url(index), self.user)
                resume = {}
                if self.ticket is not None:
                    received = self.received_before + sum(len(old.pushes) for old, _, _ in self.old_peers[self.first_of_session:])
                    resume = {"resumeSession": self.ticket[0], "resumeSecret": self.ticket[1], "resumeReceived": received}
                answer = await peer.request("login", appId=APP, userId=self.user, token="", heartbeatInterval=5,
                                            presenceTimeout=30, **resume)
                if answer.get("t") != "loginOk":
                    await peer.close()
                    raise ConnectionError(repr(answer))
                peer.start_heartbeats(answer["heartbeatInterval"])
                self.peer, previous, self.node = peer, self.node, index
                if answer.get("resumed") is True:
                    self.logins["resumed across nodes" if previous != index else "resumed"] += 1
                    if answer.get("historyLost"):
                        self.resume_losses.append(answer.get("lostChannels"))
                    # The server kept the session's subscriptions (PROTOCOL.md §2.4): nothing to do again.
                    self.resumed_on(peer)
                else:
                    self.logins["new after a ticket" if self.ticket else "new"] += 1
                    self.ticket = (answer["session"], answer["resumeSecret"])
                    self.received_before, self.first_of_session = 0, len(self.old_peers)
                    await after_login(peer)
            except Exception:  # noqa: BLE001 - a node going away mid-login: try another
                self.peer = None
                await asyncio.sleep(0.3)


    def resumed_on(self, peer):
        """The session went on on `peer` (a resume): what it had stands."""


class Subscriber(Client):
    def __init__(self, *args):
        super().__init__(*args)
        self.windows = []  # [start, end] of being subscribed
        self.seen = 0

    async def run(self, stop):
        async def subscribe(peer):
            answer = await peer.request("subscribe", channel=CHANNEL, features=MESSAGE)
            if answer.get("t") != "ok":
                raise ConnectionError(repr(answer))
            self.windows.append([time.monotonic(), None])
        while not stop.is_set():
            await self.ensure(subscribe)
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


def fault_at(cluster, moment):
    """The kind of the fault going on around `moment`, or None."""
    return next((kind for start, end, kind, _ in cluster.faults if start - MARGIN <= moment <= end + MARGIN), None)


def check(cluster, subscribers, publishers, writers, final_counter, lockers, final_guarded, free_after):
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
    return failures


async def main_async(args):
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="switchboard-chaos-") as work:
        cluster = Cluster(args.switchboard, work)
        try:
            await cluster.start()
            print(f"cluster up: nodes on {cluster.ports}, redis on {cluster.redis_port}; seed {args.seed}", flush=True)
            stop = asyncio.Event()
            subscribers = [Subscriber(cluster, f"sub-{n}-{k}", n, rng) for n in range(3) for k in range(2)]
            publishers = [Publisher(cluster, f"pub-{n}", n, rng) for n in range(3)]
            writers = [CounterWriter(cluster, f"writer-{n}", n, rng) for n in range(2)]
            tasks = [asyncio.create_task(client.run(stop)) for client in subscribers]
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
            print(f"faults: {len(cluster.faults)}; messages acknowledged: {sum(len(p.acked) for p in publishers)}", flush=True)
            failures = check(cluster, subscribers, publishers, writers, final, lockers, final_guarded, free_after)
            for client in subscribers + publishers + writers + lockers:
                for peer in [old for old, _, _ in client.old_peers] + ([client.peer] if client.peer else []):
                    try:
                        await peer.close()
                    except Exception:  # noqa: BLE001
                        pass
            return 1 if failures else 0
        finally:
            cluster.stop()


def main():
    return run_load("Switchboard cluster faults under load, and a checker.", main_async, minutes=3.0)


if __name__ == "__main__":
    sys.exit(main())
