#!/usr/bin/env python3
"""Sustained mixed load on one server, and a check that it does not drift.

    tools/soak.sh [minutes] [seed]      (builds switchboard in release mode, then runs this)
    python3 tools/soak.py --switchboard PATH [--minutes M] [--seed S] [--out DIR] [--commit C]

Starts one `switchboard serve --no-rate-limits` on free loopback ports with a fresh data directory
and, for the given minutes (default 30), keeps a moderate, seeded load of Python peers going (the
protocol code of tools/peer.py, written from docs/PROTOCOL.md):
  - message channels: 3 channels, 2 publishers each numbering their messages (25/s), 4 subscribers each;
  - user channels: 3 senders, each numbering messages (15/s) to its own receiver;
  - stream channels: 2 channels of 3 members, each joined to a topic, subscribed to the others
    and publishing in it (10/s);
  - presence churn: 6 users subscribing to 2 channels and leaving, setting their state, asking
    whoNow, ending their sessions by logout or by dropping the socket (the session times out);
    one listener follows the channels' presence events;
  - metadata: 3 writers incrementing one channel counter by compare-and-set (revision conflicts
    are expected) and writing their own user metadata; one listener of the counter's events;
  - locks: 3 users handing one lock over (acquire with retry, a write fenced by the lock,
    release); now and then one logs out holding it, or drops its socket and resumes;
  - reconnects: every subscriber, receiver, stream member, locker and the metadata listener drops
    its socket without logout every 30-90 s and resumes the session 0.5-3 s later (§2.4),
    telling the server how many pushes it received; the replay must fill the gap;
  - slow consumers: 2 users of a channel carrying 16 KB messages stop reading until the server
    closes them as slow consumers (§6: over 4 MiB queued), then log in again.
Every 5 s it samples the server's RSS (/proc/PID/status VmRSS), open descriptors (/proc/PID/fd),
CPU time, and the counters of /metrics (admin listener). After the load every client leaves.

Checks, one line each, and a JSON summary (out/soak.json) with an RSS/descriptor plot (out/soak.png):
  1. RSS after warm-up (the first max(60 s, 20 % of the load)) stays within ±10 % of its median;
  2. open descriptors return to the baseline (taken after a first client touched every module
     and left, before the load) once every client has left;
  3. every acknowledged publish reached every subscriber subscribed (connected or resumed) from
     before it was sent until after its answer: message channels, user channels, stream topics;
     per publisher in order and none twice;
  4. every resume within the presence timeout resumed its session, with nothing lost;
  5. metadata: the counter is at least the acknowledged increments (at most those plus the writes
     whose answer never came); each writer's user metadata holds its last acknowledged value; the
     listener never saw a revision go back;
  6. locks: fencing tokens grow in the order the lock was granted, every write fenced by the lock
     was accepted, and the lock is free with nobody waiting at the end;
  7. presence: the listener's view of each channel, built from its events, is what whoNow says
     at the end, and nobody is left in them;
  8. errors: no error code outside the ones the load provokes (revision conflicts), no connection
     lost or closed that the load did not drop itself, no warning or error in the server's log;
  9. slow consumers: each one that stopped reading was closed by the server, and what detached
     sessions keep stays within the protocol's bound (1 MB each).
Exits 0 when every check held, 1 when one did not, 2 when it could not run.
"""

import array
import asyncio
import bisect
import collections
import json
import os
import random
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from load_runs import free_port, run_load  # noqa: E402
from peer import MAX_FRAME, SUBPROTOCOL, NoAnswer, Peer, encode  # noqa: E402
from websockets.exceptions import WebSocketException  # noqa: E402  (peer.py checked that websockets is there)

APP = "soak"
SAMPLE_EVERY = 5.0
RESUME_TIMEOUT = 30  # presenceTimeout of clients that resume
SHORT_TIMEOUT = 5  # presenceTimeout of clients whose dropped sessions should end soon
MESSAGE, PRESENCE, METADATA, LOCK = 4, 1, 2, 8  # subscribe features (PROTOCOL.md §3.5)
OUTDATED_REVISION = -12014
PROVOKED = {OUTDATED_REVISION: "storageOutdatedRevision: two writers raced with the same revision (compare-and-set)"}
DETACHED_BOUND = 1_048_576  # bytes a detached session keeps for its resume (§2.4)



async def pause(event, seconds):
    """Sleeps `seconds`, or less when `event` is set; whether it is set."""
    try:
        await asyncio.wait_for(event.wait(), seconds)
    except asyncio.TimeoutError:
        pass
    return event.is_set()


class Sink:
    """Stands in for Peer.pushes: hands every push to a callback instead of keeping it."""

    def __init__(self, callback):
        self.callback = callback

    def append(self, frame):
        self.callback(frame)


class Runs:
    """The sequence numbers received from one publisher, as runs of consecutive numbers."""

    def __init__(self):
        self.starts, self.ends = [], []
        self.disorder = 0

    def add(self, seq):
        if self.ends and seq <= self.ends[-1]:
            self.disorder += 1
        elif self.ends and seq == self.ends[-1] + 1:
            self.ends[-1] = seq
        else:
            self.starts.append(seq)
            self.ends.append(seq)

    def __contains__(self, seq):
        index = bisect.bisect_right(self.starts, seq) - 1
        return index >= 0 and seq <= self.ends[index]


class Server:
    """One `switchboard serve` with a fresh data directory, sampled from /proc and /metrics."""

    def __init__(self, binary, work):
        self.port, self.admin_port = free_port(), free_port()
        self.log_path = os.path.join(work, "server.log")
        self.process = subprocess.Popen(
            [binary, "serve", "--listen", f"127.0.0.1:{self.port}", "--admin-listen", f"127.0.0.1:{self.admin_port}",
             "--data-dir", os.path.join(work, "data"), "--no-rate-limits", "--log-level", "warning",
             "--log-format", "json"],
            stdout=subprocess.DEVNULL, stderr=open(self.log_path, "w"))
        self.url = f"ws://127.0.0.1:{self.port}"

    async def ready(self, timeout=60):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"switchboard exited with {self.process.returncode}; see {self.log_path}")
            try:
                if (await self.get("/health/ready")).startswith("HTTP/1.1 200"):
                    return
            except OSError:
                pass
            await asyncio.sleep(0.2)
        raise RuntimeError("the server did not become ready")

    async def get(self, path):
        reader, writer = await asyncio.open_connection("127.0.0.1", self.admin_port)
        try:
            writer.write(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
            return (await asyncio.wait_for(reader.read(), 10)).decode()
        finally:
            writer.close()

    async def metrics(self):
        text = (await self.get("/metrics")).split("\r\n\r\n", 1)[-1]
        values = {}
        for line in text.splitlines():
            if line and not line.startswith("#"):
                name, _, value = line.rpartition(" ")
                values[name] = float(value)
        return values

    def rss_kb(self):
        with open(f"/proc/{self.process.pid}/status") as status:
            return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))

    def fds(self):
        return os.listdir(f"/proc/{self.process.pid}/fd")

    def fd_kinds(self):
        """How many open descriptors of each kind (socket, anon_inode:[eventpoll], a file's path …)."""
        kinds = collections.Counter()
        for fd in self.fds():
            try:
                target = os.readlink(f"/proc/{self.process.pid}/fd/{fd}")
            except OSError:
                continue
            kinds[re.sub(r"\[\d+\]$", "", target)] += 1
        return dict(kinds)

    def cpu_seconds(self):
        with open(f"/proc/{self.process.pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


class Soak:
    """What every client shares: the server, the stop signals, and the record of what went wrong."""

    def __init__(self, server, rng):
        self.server, self.rng = server, rng
        self.publishing = asyncio.Event()  # set: publishers stop
        self.stop = asyncio.Event()  # set: every client but the presence listener leaves
        self.stall_turn = asyncio.Lock()  # one slow consumer stalls at a time, so each close is its own
        self.errors = collections.Counter()  # (operation, code) of every error answer
        self.unexpected = collections.Counter()  # what no client did on purpose: lost connections, closings …
        self.metrics = {}
        self.samples = []

    def metric(self, name, default=0.0):
        return self.metrics.get(name, default)


class Client:
    """A logged-in user that can drop its socket and resume its session (§2.4)."""

    kind = "client"
    presence_timeout = RESUME_TIMEOUT
    resume_every = (30, 90)  # seconds between dropped sockets; None: never

    def __init__(self, soak, user):
        self.soak, self.user = soak, user
        self.rng = random.Random(f"{soak.rng.random()}{user}")
        self.peer = None
        self.session = self.secret = None
        self.received = 0  # pushes of this session (resumeReceived)
        self.dropped_at = None
        self.windows = []  # [start, end] of each session's subscriptions (monotonic seconds)
        self.resumes = collections.Counter()
        self.next_drop = self.schedule_drop()

    def due_to_drop(self):
        """Whether to drop the socket now: its time came, and the publishers still publish."""
        return self.next_drop is not None and time.monotonic() >= self.next_drop and not self.soak.publishing.is_set()

    def schedule_drop(self):
        return None if self.resume_every is None else time.monotonic() + self.rng.uniform(*self.resume_every)

    async def open(self, receive_buffer=None):
        from websockets.asyncio.client import connect as ws_connect
        sock = None
        if receive_buffer:
            sock = socket.socket()
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
            sock.setblocking(False)
            await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", self.soak.server.port))
        ws = await ws_connect(self.soak.server.url, subprotocols=[SUBPROTOCOL], max_size=MAX_FRAME, open_timeout=15,
                              ping_interval=None, sock=sock)
        peer = Peer(self.user, ws)
        peer.pushes = Sink(self.on_frame)  # before the reader's first step: nothing is kept
        return peer

    async def login(self, resume=False, receive_buffer=None):
        """Logs in, resuming the session when `resume`; sets the session up again when it is new."""
        peer = await self.open(receive_buffer)
        fields = dict(appId=APP, userId=self.user, token="", heartbeatInterval=5, presenceTimeout=self.presence_timeout)
        if resume:
            fields.update(resumeSession=self.session, resumeSecret=self.secret, resumeReceived=self.received)
        self.peer = peer
        answer = await self.call("login", **fields)
        if answer.get("t") != "loginOk":
            raise ConnectionError(f"login refused: {answer!r}")
        if resume:
            self.resumes["resumed" if answer.get("resumed") else "not resumed"] += 1
            self.resumes["lostMessages"] += answer.get("lostMessages", 0)
            if not answer.get("resumed") and self.windows and self.windows[-1][1] is None:
                self.windows[-1][1] = self.dropped_at
        peer.start_heartbeats(answer["heartbeatInterval"])
        if not answer.get("resumed"):
            self.session, self.secret, self.received = answer["session"], answer["resumeSecret"], 0
            await self.setup()

    async def setup(self):
        """What a new session does after login (subscribe, join …)."""

    def open_window(self):
        self.windows.append([time.monotonic(), None])

    async def call(self, t, **fields):
        answer = await self.peer.request(t, **fields)
        if answer.get("t") == "error":
            self.soak.errors[(t, answer.get("code"))] += 1
        return answer

    def on_frame(self, frame):
        if frame.get("t") == "closing":
            self.soak.unexpected[f"{self.kind}: closing {frame.get('reason')} ({frame.get('detail')})"] += 1
            return
        self.received += 1
        self.on_push(frame)

    def on_push(self, frame):
        pass

    async def drop(self):
        """Loses the connection as a network would: no logout, no close frame."""
        peer, self.peer = self.peer, None
        self.dropped_at = time.monotonic()
        if peer.heartbeats is not None:
            peer.heartbeats.cancel()
        peer.reader.cancel()
        await asyncio.gather(peer.reader, return_exceptions=True)
        peer.ws.transport.abort()

    async def logout(self):
        peer, self.peer = self.peer, None
        if peer is None:
            return
        peer.heartbeats.cancel()
        try:
            await peer.request("logout")
        except (ConnectionError, NoAnswer) as error:
            self.soak.unexpected[f"{self.kind}: logout: {type(error).__name__}"] += 1
        await peer.close()

    async def drop_and_resume(self):
        await self.drop()
        await asyncio.sleep(self.rng.uniform(0.5, 3))
        self.resumes["attempted"] += 1
        await self.login(resume=True)
        self.next_drop = self.schedule_drop()

    async def step(self):
        """One unit of the client's work; it returns within a few seconds."""
        await asyncio.sleep(1)

    def stop_event(self):
        return self.soak.stop

    async def run(self):
        await self.login()
        while not self.stop_event().is_set():
            try:
                if self.peer.failure is not None:
                    raise self.peer.failure
                await self.step()
                if self.due_to_drop():
                    await self.drop_and_resume()
            except (ConnectionError, NoAnswer, OSError, ValueError, WebSocketException) as error:
                # Not a drop of its own: the server closed it or did not answer. Resume, as the SDK would.
                self.soak.unexpected[f"{self.kind}: {type(error).__name__}: {error}"[:160]] += 1
                if self.peer is not None:
                    await self.drop()
                await asyncio.sleep(1)
                self.resumes["attempted"] += 1
                await self.login(resume=True)
        await self.logout()


class Publisher(Client):
    """Numbers its messages; remembers when each was sent and when its `ok` came (0: never)."""

    kind = "publisher"
    resume_every = None
    rate = 25.0

    def __init__(self, soak, user, channel_type, channel, body_bytes=80, rate=None):
        super().__init__(soak, user)
        self.channel_type, self.channel = channel_type, channel
        self.padding = "x" * body_bytes
        self.rate = rate or self.rate
        self.sent, self.acked = array.array("d"), array.array("d")

    def stop_event(self):
        return self.soak.publishing

    async def step(self):
        self.sent.append(time.monotonic())
        self.acked.append(0.0)
        seq = len(self.sent)
        answer = await self.publish(f"{self.user}:{seq}:{self.padding}")
        if answer.get("t") == "ok":
            self.acked[seq - 1] = time.monotonic()
        await asyncio.sleep(self.rng.expovariate(self.rate))

    def publish(self, body):
        return self.call("publish", channelType=self.channel_type, channel=self.channel, message=body)


class Receiver(Client):
    """Receives numbered messages of one channel type; keeps, per publisher, which arrived."""

    kind = "receiver"
    channel_type = 3

    def __init__(self, soak, user):
        super().__init__(soak, user)
        self.runs = collections.defaultdict(Runs)

    async def setup(self):
        self.open_window()

    def on_push(self, frame):
        if frame.get("t") == "message" and frame.get("channelType") == self.channel_type:
            publisher, seq, _ = frame["message"].split(":", 2)
            self.runs[publisher].add(int(seq))


class Subscriber(Receiver):
    kind = "subscriber"
    channel_type = 1

    def __init__(self, soak, user, channel, features=MESSAGE):
        super().__init__(soak, user)
        self.channel, self.features = channel, features

    async def setup(self):
        answer = await self.call("subscribe", channel=self.channel, features=self.features)
        if answer.get("t") != "ok":
            raise ConnectionError(f"subscribe refused: {answer!r}")
        self.open_window()


class StreamMember(Receiver):
    """Joins a stream channel and a topic, subscribes to the other members there, publishes in it."""

    kind = "stream member"
    channel_type = 2
    topic = "t"

    def __init__(self, soak, user, channel, members):
        super().__init__(soak, user)
        self.channel, self.others = channel, [member for member in members if member != user]
        self.sent, self.acked = array.array("d"), array.array("d")

    async def setup(self):
        for t, fields in (("join", dict(features=PRESENCE)), ("joinTopic", dict(topic=self.topic, qos=1)),
                          ("subscribeTopic", dict(topic=self.topic, users=self.others))):
            answer = await self.call(t, channel=self.channel, **fields)
            if answer.get("t") != "ok":
                raise ConnectionError(f"{t} refused: {answer!r}")
        self.open_window()

    async def step(self):
        if self.soak.publishing.is_set():
            await asyncio.sleep(1)
            return
        self.sent.append(time.monotonic())
        self.acked.append(0.0)
        seq = len(self.sent)
        answer = await self.call("publishTopicMessage", channel=self.channel, topic=self.topic,
                                 message=f"{self.user}:{seq}:{'y' * 60}")
        if answer.get("t") == "ok":
            self.acked[seq - 1] = time.monotonic()
        await asyncio.sleep(self.rng.expovariate(10.0))


class PresenceChurner(Client):
    """Subscribes to presence channels and leaves them, sets its state, asks whoNow; ends its
    session by logout or by dropping the socket (then it times out), and starts a new one."""

    kind = "presence churner"
    presence_timeout = SHORT_TIMEOUT
    resume_every = None

    def __init__(self, soak, user, channels):
        super().__init__(soak, user)
        self.channels = channels
        self.sessions = collections.Counter()
        self.name = user

    async def step(self):
        for _ in range(self.rng.randint(2, 6)):
            channel = self.rng.choice(self.channels)
            features = PRESENCE | (16 if self.rng.random() < 0.2 else 0)  # now and then quiet
            answer = await self.call("subscribe", channel=channel, features=features)
            if answer.get("t") == "ok":
                await self.call("setState", channelType=1, channel=channel,
                                items={"mood": self.rng.choice(["calm", "busy", "away"]), "n": str(self.rng.randrange(1000))})
                await self.call("whoNow", channelType=1, channel=channel, includeState=True)
                if self.rng.random() < 0.5:
                    await self.call("unsubscribe", channel=channel)
            # At most two subscribes to one channel in 5 s (channelSubscribeTooFrequent is the third).
            if await pause(self.soak.stop, self.rng.uniform(2.6, 4.0)):
                return
        if self.rng.random() < 0.7:
            self.sessions["logout"] += 1
            await self.logout()
        else:
            self.sessions["dropped"] += 1
            await self.drop()
            # Another user id next, so that the dropped session times out instead of being replaced.
            self.user = f"{self.name}-{self.sessions['dropped']}"
        await asyncio.sleep(self.rng.uniform(0.5, 2))
        await self.login()


class PresenceListener(Client):
    """Follows the presence events of channels and keeps who is there, as a client would."""

    kind = "presence listener"

    def __init__(self, soak, user, channels):
        super().__init__(soak, user)
        self.channels = channels
        self.view = {channel: set() for channel in channels}
        self.parts = {}
        self.events = collections.Counter()
        self.finished = asyncio.Event()

    def stop_event(self):
        return self.finished

    async def setup(self):
        for channel in self.channels:
            answer = await self.call("subscribe", channel=channel, features=PRESENCE)
            if answer.get("t") != "ok":
                raise ConnectionError(f"subscribe refused: {answer!r}")

    def on_push(self, frame):
        if frame.get("t") != "presence" or frame.get("channel") not in self.view:
            return
        channel, event = frame["channel"], frame.get("eventType")
        self.events[event] += 1
        if event == 1:
            self.parts.setdefault(channel, []).extend(user["userId"] for user in frame.get("snapshot", []))
            if not frame.get("more"):
                self.view[channel] = set(self.parts.pop(channel))
        elif event == 2:
            self.view[channel] |= set(frame.get("joinUserList", []))
            self.view[channel] -= set(frame.get("leaveUserList", [])) | set(frame.get("timeoutUserList", []))
        elif event in (3, 6):
            self.view[channel].add(frame["publisher"])
        elif event in (4, 5):
            self.view[channel].discard(frame["publisher"])

    async def compare(self):
        """For each channel: (what the events say, what whoNow says), the listener itself left out."""
        result = {}
        for channel in self.channels:
            answer = await self.call("whoNow", channelType=1, channel=channel)
            listed = {user["userId"] for user in answer.get("users", [])}
            result[channel] = (sorted(self.view[channel] - {self.user}), sorted(listed - {self.user}))
        return result


class CounterWriter(Client):
    """Reads a channel counter and writes it plus one under the read revision; writes its own
    user metadata with the number of increments acknowledged."""

    kind = "metadata writer"
    resume_every = None
    channel = "soak-counter"

    def __init__(self, soak, user):
        super().__init__(soak, user)
        self.acked = self.unknown = 0
        self.user_value = None  # the last acknowledged value of its user metadata

    def stop_event(self):
        return self.soak.publishing

    async def step(self):
        read = await self.call("getChannelMetadata", channelType=1, channel=self.channel)
        items = {item["key"]: item.get("value") for item in read.get("items", [])}
        try:
            answer = await self.call("setChannelMetadata", channelType=1, channel=self.channel,
                                     items=[{"key": "n", "value": str(int(items.get("n", "0")) + 1)}],
                                     majorRevision=read.get("majorRevision", -1))
        except (ConnectionError, NoAnswer):
            self.unknown += 1
            raise
        if answer.get("t") == "ok":
            self.acked += 1
            value = str(self.acked)
            if (await self.call("setUserMetadata", userId=self.user, items=[{"key": "n", "value": value}])).get("t") == "ok":
                self.user_value = value
        await asyncio.sleep(self.rng.uniform(0.1, 0.4))


class MetadataListener(Client):
    """Hears the counter's changes; a listener must never get an older set after a newer one."""

    kind = "metadata listener"

    def __init__(self, soak, user):
        super().__init__(soak, user)
        self.revisions = 0
        self.last = 0
        self.backwards = 0

    async def setup(self):
        answer = await self.call("subscribe", channel=CounterWriter.channel, features=METADATA)
        if answer.get("t") != "ok":
            raise ConnectionError(f"subscribe refused: {answer!r}")

    def on_push(self, frame):
        if frame.get("t") == "storage" and frame.get("target") == CounterWriter.channel:
            revision = frame.get("majorRevision", 0)
            self.backwards += revision < self.last
            self.last = max(self.last, revision)
            self.revisions += 1


class Locker(Client):
    """Hands one lock over with the others: acquire (waiting in line), a write fenced by the lock,
    release. Now and then it drops its socket while holding the lock and resumes (the lock's ttl
    keeps it), or logs out holding it (the next in line gets it at once)."""

    kind = "locker"
    channel, lock = "soak-lock", "L"
    resume_every = (40, 120)

    def __init__(self, soak, user):
        super().__init__(soak, user)
        self.grants = []  # (time the lock was ours, fencing token)
        self.granted = None
        self.fenced_writes = 0
        self.logouts = 0

    def stop_event(self):
        return self.soak.publishing

    async def setup(self):
        answer = await self.call("subscribe", channel=self.channel, features=LOCK)
        if answer.get("t") != "ok":
            raise ConnectionError(f"subscribe refused: {answer!r}")

    def on_push(self, frame):
        if frame.get("t") in ("lockGranted", "lockWaitFailed") and self.granted is not None and not self.granted.done():
            self.granted.set_result(frame)

    def lock_call(self, t, **fields):
        return self.call(t, channelType=1, channel=self.channel, lockName=self.lock, **fields)

    async def step(self):
        self.granted = asyncio.get_running_loop().create_future()  # lockGranted may come before the answer
        answer = await self.lock_call("acquireLock", retry=True)
        if answer.get("t") != "ok":
            return
        if answer.get("acquired"):
            token = answer["fencingToken"]
        else:
            push = await asyncio.wait_for(self.granted, 60)
            if push.get("t") != "lockGranted":
                self.soak.unexpected[f"locker: {push!r}"[:160]] += 1
                return
            token = push["fencingToken"]
        self.grants.append((time.monotonic(), token))
        if self.due_to_drop():
            await self.drop_and_resume()  # holding the lock: the ttl (10 s) keeps it for the resume
        answer = await self.call("setChannelMetadata", channelType=1, channel=self.channel, lock=self.lock,
                                 items=[{"key": "holder", "value": f"{self.user}:{token}"}])
        self.fenced_writes += answer.get("t") == "ok"
        await asyncio.sleep(self.rng.uniform(0.05, 0.3))
        if self.rng.random() < 0.05:
            self.logouts += 1
            await self.logout()  # the session ends: the lock goes to the next in line at once
            await asyncio.sleep(self.rng.uniform(0.5, 2))
            await self.login()
            return
        await self.lock_call("releaseLock")
        await asyncio.sleep(self.rng.uniform(0.1, 0.8))


class SlowConsumer(Client):
    """Subscribes to a channel of large messages, reads for a while, then stops reading (it still
    sends heartbeats) until the server closes it as a slow consumer; then logs in again."""

    kind = "slow consumer"
    presence_timeout = SHORT_TIMEOUT
    resume_every = None
    channel = "soak-bulk"

    def __init__(self, soak, user):
        super().__init__(soak, user)
        self.stalls = []  # (seconds until the server closed it, or None: it never did)

    async def setup(self):
        await self.call("subscribe", channel=self.channel, features=MESSAGE)

    async def login(self, resume=False, receive_buffer=None):
        await super().login(resume, receive_buffer=16384)

    async def step(self):
        if await pause(self.soak.stop, self.rng.uniform(3, 8)):
            return
        async with self.soak.stall_turn:
            await self.stall()
        if await pause(self.soak.stop, self.rng.uniform(1, 3)):
            return
        await self.login()

    async def stall(self):
        await asyncio.sleep(SAMPLE_EVERY)  # a fresh sample of the counter
        closes = self.soak.metric("switchboard_slow_consumer_closes_total")
        start = time.monotonic()
        peer = self.peer
        peer.heartbeats.cancel()
        peer.reader.cancel()  # stop reading: the socket's buffers fill, then the server's queue
        await asyncio.gather(peer.reader, return_exceptions=True)
        closed = None
        beat = 1_000_000_000
        while time.monotonic() - start < 180 and not self.soak.stop.is_set():
            if self.soak.metric("switchboard_slow_consumer_closes_total") > closes:
                closed = time.monotonic() - start
                break
            try:
                beat += 1
                await peer.ws.send(encode({"t": "heartbeat", "id": beat}))  # alive, only not reading
            except Exception:  # noqa: BLE001 - the server closed it; the counter will say so
                pass
            await asyncio.sleep(2)
        if not self.soak.stop.is_set():
            self.stalls.append(closed)
        self.peer = None
        peer.ws.transport.abort()

    async def run(self):
        await self.login()
        while not self.soak.stop.is_set():
            await self.step()
        if self.peer is not None:
            await self.drop()  # its session times out after SHORT_TIMEOUT


async def sampler(soak, phase):
    """Every SAMPLE_EVERY s: RSS, descriptors, CPU and a few /metrics counters of the server."""
    server = soak.server
    while True:
        moment = time.monotonic()
        try:
            sample = {"t": moment, "phase": phase[0], "rss_kb": server.rss_kb(), "fds": len(server.fds()),
                      "cpu_s": server.cpu_seconds(), "load_cpu_s": sum(os.times()[:2])}
            soak.metrics = await server.metrics()
        except (OSError, asyncio.TimeoutError, StopIteration):
            await asyncio.sleep(SAMPLE_EVERY)
            continue
        for key, name in (("attached", 'switchboard_sessions{state="attached"}'),
                          ("detached", 'switchboard_sessions{state="detached"}'),
                          ("detached_bytes", "switchboard_detached_session_bytes"),
                          ("connections", 'switchboard_connections_open{state="logged_in"}'),
                          ("slow_consumer_closes", "switchboard_slow_consumer_closes_total")):
            sample[key] = soak.metric(name)
        sample["deliveries"] = sum(value for name, value in soak.metrics.items() if name.startswith("switchboard_deliveries_total"))
        soak.samples.append(sample)
        await asyncio.sleep(max(0.0, SAMPLE_EVERY - (time.monotonic() - moment)))


async def until(predicate, timeout, step=0.5):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        await asyncio.sleep(step)
    return predicate()


async def sessions_gone(soak, keep=0, timeout=90):
    """Waits until the server holds `keep` sessions (attached or detached) and as many connections."""
    async def settled():
        soak.metrics = await soak.server.metrics()
        return (soak.metric('switchboard_sessions{state="attached"}') + soak.metric('switchboard_sessions{state="detached"}') == keep
                and soak.metric('switchboard_connections_open{state="logged_in"}') == keep)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if await settled():
            return True
        await asyncio.sleep(1)
    return await settled()


def missed(publishers, receivers, window_of):
    """(due, missed, disorder) over every acknowledged publish of `publishers` and every receiver
    that was subscribed from before it was sent until after its answer; `window_of(receiver,
    publisher)` says whether the receiver was meant to hear the publisher at all."""
    due = lost = 0
    for receiver in receivers:
        for publisher in publishers:
            if publisher.user == receiver.user or not window_of(receiver, publisher):
                continue
            runs = receiver.runs.get(publisher.user, Runs())
            for index, acked in enumerate(publisher.acked):
                if not acked:
                    continue
                sent = publisher.sent[index]
                if any(start < sent and (end is None or acked < end) for start, end in receiver.windows):
                    due += 1
                    lost += (index + 1) not in runs
    disorder = sum(runs.disorder for receiver in receivers for runs in receiver.runs.values())
    return due, lost, disorder


def plot(samples, load_start, warm_end, load_end, median_rss, path, title):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    minutes = [(sample["t"] - load_start) / 60 for sample in samples]
    figure, (rss, fds) = plt.subplots(2, 1, figsize=(9, 6), sharex=True, gridspec_kw={"height_ratios": [2, 1]})
    rss.plot(minutes, [sample["rss_kb"] / 1024 for sample in samples], color="tab:blue", linewidth=1.2, label="server RSS")
    if median_rss:
        rss.axhspan(median_rss * 0.9 / 1024, median_rss * 1.1 / 1024, color="tab:green", alpha=0.12,
                    label="±10 % of the post-warm-up median")
    for axis in (rss, fds):
        axis.axvspan(0, (warm_end - load_start) / 60, color="grey", alpha=0.12)
        axis.axvline((load_end - load_start) / 60, color="grey", linestyle="--", linewidth=0.8)
        axis.grid(alpha=0.3)
    rss.set_ylabel("RSS (MB)")
    rss.set_ylim(bottom=0)
    rss.legend(loc="lower right", fontsize=8)
    rss.set_title(title, fontsize=10)
    fds.plot(minutes, [sample["fds"] for sample in samples], color="tab:orange", linewidth=1.2, label="open descriptors")
    fds.plot(minutes, [sample["attached"] + sample["detached"] for sample in samples], color="tab:purple",
             linewidth=0.8, label="sessions")
    fds.set_ylabel("count")
    fds.set_xlabel("minutes since the load began (grey: warm-up; dashed: load ends, clients leave)")
    fds.legend(loc="upper right", fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=110)


async def prime(soak):
    """A first client touches every module once and leaves: the counter, the lock, a message."""
    client = Client(soak, "soak-setup")
    client.resume_every = None
    await client.login()
    for t, fields in (("subscribe", dict(channel=Locker.channel, features=MESSAGE | LOCK)),
                      ("setLock", dict(channelType=1, channel=Locker.channel, lockName=Locker.lock, ttl=10)),
                      ("setChannelMetadata", dict(channelType=1, channel=CounterWriter.channel, majorRevision=-1,
                                                  items=[{"key": "n", "value": "0"}])),
                      ("publish", dict(channelType=1, channel=Locker.channel, message="hello")),
                      ("join", dict(channel="soak-prime", features=PRESENCE)),
                      ("setUserMetadata", dict(userId="soak-setup", items=[{"key": "n", "value": "0"}]))):
        answer = await client.call(t, **fields)
        if answer.get("t") != "ok":
            raise RuntimeError(f"cannot set up: {t}: {answer!r}")
    await client.logout()
    if not await sessions_gone(soak):
        raise RuntimeError("the setup client's session did not end")


async def main_async(args):
    rng = random.Random(args.seed)
    os.makedirs(args.out, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="switchboard-soak-") as work:
        server = Server(args.switchboard, work)
        soak = Soak(server, rng)
        phase = ["start"]
        sampling = None
        try:
            await server.ready()
            fds_at_start = len(server.fds())
            sampling = asyncio.create_task(sampler(soak, phase))
            await prime(soak)
            await asyncio.sleep(2)
            baseline_fds, baseline_kinds = len(server.fds()), server.fd_kinds()
            print(f"server pid {server.process.pid} on {server.url}; seed {args.seed}; descriptors at start "
                  f"{fds_at_start}, baseline {baseline_fds}", flush=True)

            channels = [f"soak-room-{n}" for n in range(3)]
            publishers = [Publisher(soak, f"pub-{n}-{k}", 1, channel) for n, channel in enumerate(channels) for k in range(2)]
            subscribers = [Subscriber(soak, f"sub-{n}-{k}", channel) for n, channel in enumerate(channels) for k in range(4)]
            receivers = [Receiver(soak, f"dm-to-{n}") for n in range(3)]
            senders = [Publisher(soak, f"dm-from-{n}", 3, f"dm-to-{n}", rate=15.0) for n in range(3)]
            streams = [[StreamMember(soak, f"st-{n}-{k}", f"soak-stream-{n}", [f"st-{n}-{j}" for j in range(3)])
                        for k in range(3)] for n in range(2)]
            members = [member for stream in streams for member in stream]
            presence_channels = ["soak-presence-0", "soak-presence-1"]
            churners = [PresenceChurner(soak, f"pres-{n}", presence_channels) for n in range(6)]
            listener = PresenceListener(soak, "pres-listener", presence_channels)
            writers = [CounterWriter(soak, f"cas-{n}") for n in range(3)]
            meta_listener = MetadataListener(soak, "meta-listener")
            lockers = [Locker(soak, f"lock-{n}") for n in range(3)]
            bulk_publisher = Publisher(soak, "bulk-pub", 1, SlowConsumer.channel, body_bytes=16384, rate=10.0)
            bulk_subscriber = Subscriber(soak, "bulk-sub", SlowConsumer.channel)
            slow = [SlowConsumer(soak, f"slow-{n}") for n in range(2)]

            # Receivers first, so that every publish finds them; then the rest.
            first = subscribers + receivers + members + [listener, meta_listener, bulk_subscriber]
            phase[0] = "load"
            load_start = time.monotonic()
            tasks = {asyncio.create_task(client.run()): client for client in first}
            await asyncio.sleep(3)
            rest = publishers + senders + churners + writers + lockers + [bulk_publisher] + slow
            tasks.update({asyncio.create_task(client.run()): client for client in rest})
            load_end = load_start + args.minutes * 60
            while time.monotonic() < load_end:
                done = [task for task in tasks if task.done()]
                for task in done:
                    if task.exception() is not None:
                        traceback.print_exception(task.exception())
                        raise RuntimeError(f"{tasks[task].user} stopped: {task.exception()!r}")
                await asyncio.sleep(1)
            phase[0] = "leaving"
            soak.publishing.set()
            await asyncio.sleep(5)  # the last messages arrive
            soak.stop.set()
            pending = [task for task, client in tasks.items() if client is not listener]
            done, still = await asyncio.wait(pending, timeout=120)
            for task in done:
                if task.exception() is not None:
                    soak.unexpected[f"{tasks[task].user} failed at the end: {task.exception()!r}"[:160]] += 1
            if still:
                raise RuntimeError(f"clients did not leave: {[tasks[task].user for task in still]}")
            left_alone = await sessions_gone(soak, keep=1, timeout=60)
            presence = await listener.compare()
            listener.finished.set()

            checker = Client(soak, "soak-check")
            checker.resume_every = None
            await checker.login()
            counter = await checker.call("getChannelMetadata", channelType=1, channel=CounterWriter.channel)
            counter_value = int({item["key"]: item["value"] for item in counter.get("items", [])}.get("n", "-1"))
            user_values = {}
            for writer in writers:
                read = await checker.call("getUserMetadata", userId=writer.user)
                user_values[writer.user] = {item["key"]: item["value"] for item in read.get("items", [])}.get("n")
            await checker.call("subscribe", channel=Locker.channel, features=LOCK)  # getLocks is for members
            locks = (await checker.call("getLocks", channelType=1, channel=Locker.channel)).get("locks")
            await checker.logout()
            await asyncio.gather(*tasks, return_exceptions=True)
            everyone_left = await sessions_gone(soak, keep=0, timeout=60)
            waiters = soak.metric("switchboard_lock_waiters")
            phase[0] = "after"
            fds_back = await until(lambda: len(server.fds()) == baseline_fds, 30)
            final_fds, final_kinds = len(server.fds()), server.fd_kinds()
            await asyncio.sleep(2 * SAMPLE_EVERY)  # the plot shows the server at rest
        finally:
            if sampling is not None:
                sampling.cancel()
            server.stop()
        log_lines = [json.loads(line) for line in open(server.log_path) if line.startswith("{")]
        other_log = [line.rstrip() for line in open(server.log_path) if line.strip() and not line.startswith("{")]

    # The checks.
    checks = []

    def check(name, ok, detail):
        checks.append({"check": name, "ok": bool(ok), "detail": detail})
        print(f"{'ok  ' if ok else 'FAIL'} {name}: {detail}", flush=True)

    samples = soak.samples
    warm_end = load_start + max(60.0, 0.2 * (load_end - load_start))
    steady = [sample["rss_kb"] for sample in samples if warm_end <= sample["t"] <= load_end]
    median_rss = statistics.median(steady) if steady else 0
    worst = max((abs(value - median_rss) / median_rss for value in steady), default=1.0) if median_rss else 1.0
    slope = 0.0
    if len(steady) >= 3:
        moments = [sample["t"] for sample in samples if warm_end <= sample["t"] <= load_end]
        mean_t, mean_r = statistics.fmean(moments), statistics.fmean(steady)
        slope = (sum((t - mean_t) * (r - mean_r) for t, r in zip(moments, steady))
                 / sum((t - mean_t) ** 2 for t in moments)) * 3600 / 1024
    check("1. RSS after warm-up within ±10 % of its median", steady and worst <= 0.10,
          f"{len(steady)} samples; median {median_rss / 1024:.1f} MB, min {min(steady, default=0) / 1024:.1f}, "
          f"max {max(steady, default=0) / 1024:.1f}, worst {worst * 100:.1f} % off; trend {slope:+.1f} MB/hour")

    check("2. descriptors back to the baseline once every client left", fds_back and everyone_left,
          f"baseline {baseline_fds}, after {final_fds} (sessions all ended: {everyone_left}); "
          f"peak {max(sample['fds'] for sample in samples)}"
          + ("" if fds_back else f"; baseline kinds {baseline_kinds}, after {final_kinds}"))

    lines = []
    delivery_ok = True
    for label, pubs, subs, pairing in (
            ("message channels", publishers + [bulk_publisher], subscribers + [bulk_subscriber],
             lambda sub, pub: sub.channel == pub.channel),
            ("user channels", senders, receivers, lambda rec, pub: pub.channel == rec.user),
            ("stream topics", members, members, lambda sub, pub: sub.channel == pub.channel)):
        due, lost, disorder = missed(pubs, subs, pairing)
        delivery_ok &= lost == 0 and disorder == 0 and due > 0
        lines.append(f"{label}: {due} due, {lost} missed, {disorder} out of order or twice")
    check("3. every acknowledged publish reached every subscriber", delivery_ok, "; ".join(lines))

    resumers = subscribers + receivers + members + lockers + [meta_listener, bulk_subscriber]
    resumes = sum((client.resumes for client in resumers), collections.Counter())
    check("4. every resume within the presence timeout resumed, nothing lost",
          resumes["resumed"] == resumes["attempted"] and resumes["attempted"] > 0 and resumes["lostMessages"] == 0,
          f"{resumes['attempted']} resumes, {resumes['resumed']} resumed, {resumes['not resumed']} not; "
          f"lostMessages {resumes['lostMessages']}")

    acked = sum(writer.acked for writer in writers)
    unknown = sum(writer.unknown for writer in writers)
    user_ok = all(user_values[writer.user] == writer.user_value for writer in writers)
    check("5. acknowledged metadata writes are all there",
          acked <= counter_value <= acked + unknown and user_ok and meta_listener.backwards == 0 and acked > 0,
          f"counter {counter_value}: {acked} increments acknowledged, {unknown} unknown, "
          f"{soak.errors[('setChannelMetadata', OUTDATED_REVISION)]} revision conflicts; user metadata as last "
          f"acknowledged: {user_ok}; listener heard {meta_listener.revisions} sets, {meta_listener.backwards} went back")

    grants = sorted(grant for locker in lockers for grant in locker.grants)
    tokens = [token for _, token in grants]
    in_order = all(a < b for a, b in zip(tokens, tokens[1:]))
    fenced = sum(locker.fenced_writes for locker in lockers)
    free = bool(locks) and all(not lock.get("owner") for lock in locks)
    check("6. locks handed over in token order, every fenced write accepted, free at the end",
          in_order and fenced == len(grants) and free and waiters == 0 and grants,
          f"{len(grants)} grants, tokens growing: {in_order}; {fenced} fenced writes accepted; "
          f"{sum(locker.logouts for locker in lockers)} logouts holding it; at the end {locks}, {waiters:.0f} waiting")

    views_ok = all(view == listed == [] for view, listed in presence.values())
    check("7. the presence listener's view matches whoNow, and nobody is left", views_ok and left_alone,
          f"{dict(presence)}; events heard {dict(sorted(listener.events.items()))}; churner sessions ended "
          f"{dict(sum((churner.sessions for churner in churners), collections.Counter()))}")

    unprovoked = {f"{operation} {code}": count for (operation, code), count in soak.errors.items() if code not in PROVOKED}
    provoked = {f"{operation} {code}": count for (operation, code), count in soak.errors.items() if code in PROVOKED}
    log_levels = collections.Counter(line.get("level") for line in log_lines)
    log_messages = collections.Counter(re.sub(r"\d+", "N", line.get("message", "")) for line in log_lines)
    check("8. no errors but the provoked ones",
          not unprovoked and not soak.unexpected and not log_lines and not other_log,
          f"provoked {provoked}; other error answers {unprovoked}; unexpected {dict(soak.unexpected)}; "
          f"server log {dict(log_levels)} {dict(log_messages)}{' ' + str(other_log[:5]) if other_log else ''}")

    stalls = [stall for consumer in slow for stall in consumer.stalls]
    closed = [stall for stall in stalls if stall is not None]
    detached_peak = max((sample["detached_bytes"] - sample["detached"] * DETACHED_BOUND for sample in samples), default=0)
    closes = soak.metric("switchboard_slow_consumer_closes_total")
    check("9. slow consumers closed by the server, detached sessions bounded",
          stalls and len(closed) == len(stalls) == closes and detached_peak <= 0,
          f"{len(stalls)} stalls, {len(closed)} closed by the server after "
          f"{min(closed, default=0):.0f}-{max(closed, default=0):.0f} s; "
          f"closes counted {closes:.0f}; peak detached bytes "
          f"{max((sample['detached_bytes'] for sample in samples), default=0):.0f}")

    load_samples = [sample for sample in samples if load_start <= sample["t"] <= load_end]
    span = load_samples[-1]["t"] - load_samples[0]["t"] if len(load_samples) > 1 else 1
    server_cores = (load_samples[-1]["cpu_s"] - load_samples[0]["cpu_s"]) / span if len(load_samples) > 1 else 0
    load_cores = (load_samples[-1]["load_cpu_s"] - load_samples[0]["load_cpu_s"]) / span if len(load_samples) > 1 else 0
    deliveries = (load_samples[-1]["deliveries"] - load_samples[0]["deliveries"]) / span if len(load_samples) > 1 else 0
    summary = {
        "minutes": args.minutes, "seed": args.seed, "commit": args.commit,
        "machine": {"nproc": os.cpu_count(), "cpu": next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                                                          if line.startswith("model name")), ""),
                    "loadavg": open("/proc/loadavg").read().split()[:3]},
        "ok": all(entry["ok"] for entry in checks), "checks": checks,
        "rss_mb": {"median_after_warm_up": round(median_rss / 1024, 1), "min": round(min(steady, default=0) / 1024, 1),
                   "max": round(max(steady, default=0) / 1024, 1), "worst_off_percent": round(worst * 100, 1),
                   "trend_mb_per_hour": round(slope, 2), "warm_up_s": round(warm_end - load_start),
                   "after_clients_left": round(samples[-1]["rss_kb"] / 1024, 1)},
        "descriptors": {"at_start": fds_at_start, "baseline": baseline_fds, "after": final_fds,
                        "peak": max(sample["fds"] for sample in samples)},
        "load": {"server_cpu_cores": round(server_cores, 2), "load_cpu_cores": round(load_cores, 2),
                 "deliveries_per_s": round(deliveries), "clients": len(tasks),
                 "publishes_acknowledged": sum(sum(1 for a in pub.acked if a) for pub in publishers + senders + members + [bulk_publisher]),
                 "resumes": resumes["attempted"], "slow_consumer_stalls": len(stalls),
                 "lock_grants": len(grants), "counter_increments": acked},
        "errors": {"provoked": provoked, "other": unprovoked, "unexpected": dict(soak.unexpected)},
    }
    with open(os.path.join(args.out, "soak.json"), "w") as out:
        json.dump(summary, out, indent=2)
    with open(os.path.join(args.out, "samples.csv"), "w") as out:
        keys = list(samples[0])
        out.write(",".join(keys) + "\n")
        for sample in samples:
            out.write(",".join(str(round(sample[key] - load_start, 1) if key == "t" else sample[key]) for key in keys) + "\n")
    try:
        plot(samples, load_start, warm_end, load_end, median_rss, os.path.join(args.out, "soak.png"),
             f"switchboard soak, {args.minutes:g} min, seed {args.seed}, commit {args.commit}")
    except ImportError as missing:
        print(f"no plot: {missing} (tools/soak.sh installs tools/soak-requirements.txt)", file=sys.stderr)
    print(json.dumps(summary, indent=2), flush=True)
    return 0 if summary["ok"] else 1


def main():
    def more(parser):
        parser.add_argument("--out", default="soak-out", help="where soak.json, samples.csv and soak.png go")
        parser.add_argument("--commit", default="", help="the commit measured, for the summary")
    return run_load("Sustained mixed load on one switchboard server, with drift checks.", main_async, minutes=30.0,
                    more_arguments=more)


if __name__ == "__main__":
    sys.exit(main())
