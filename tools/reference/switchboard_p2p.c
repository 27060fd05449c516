/*
 * The point-to-point scenario of switchboard-bench, driven against Switchboard by a small C
 * client, as redis_p2p.c drives Redis: the same loop, the same pacing and the same latency
 * stamps, so that a paced run tells the server's latency apart from switchboard-bench's own
 * (a Swift client, whose receiving side adds its part to each delivery's latency).
 *
 * PAIRS pairs of users send each other PAYLOAD-byte messages over user channels, each keeping
 * WINDOW messages unanswered. A user is one WebSocket connection (RFC 6455, masked frames) that
 * logs in (appId "bench", an empty token: a server run without an app certificate) and sends
 * `publish` with channelType 3 (user) to its partner; the `ok` answer is the answer, the
 * partner's `message` push the delivery. Frames are MessagePack maps written by hand in the order
 * every Switchboard client writes them (docs/PROTOCOL.md).
 *
 * Paced (`--rate N`): N messages a second in all, due every 200 µs and sent round-robin by the
 * senders with room in their window; each payload starts with its send time (CLOCK_MONOTONIC
 * nanoseconds, 16 hex digits), and each delivery's latency is its arrival time less that.
 *
 * Prints one JSON line with redis_p2p's keys (server "switchboard").
 *
 *   switchboard_p2p --port 9000 --server-pid PID [--pairs 50] [--payload 100] [--window 64]
 *                   [--rate 0] [--duration 5] [--warmup 1] [--label NAME]
 */
#include "p2p.h"

struct connection {
    int fd;
    struct bytes in, out;
    int in_flight;
    /* The publish request to the partner, unmasked (the stamp is written into it), and where its
     * payload starts. */
    struct bytes publish;
    size_t payload_at;
};

static uint64_t answered, delivered, refused;
static size_t payload_size;
static int paced, recording;
static struct connection *connections;
static int window_size;

/* MessagePack: a string of at most 31 bytes (fixstr). */
static void put_string(struct bytes *b, const char *text) {
    char header = (char)(0xa0 | strlen(text));
    append(b, &header, 1);
    append(b, text, strlen(text));
}

/* Appends `message` to `out` as one masked binary WebSocket frame. */
static void append_frame(struct bytes *out, const char *message, size_t length) {
    static const unsigned char mask[4] = {0x5a, 0x17, 0xc3, 0x9e};
    unsigned char header[8];
    size_t header_length;
    header[0] = 0x82; /* FIN, binary */
    if (length < 126) {
        header[1] = (unsigned char)(0x80 | length);
        header_length = 2;
    } else {
        if (length > 0xffff) fail("frame too large");
        header[1] = 0x80 | 126;
        header[2] = (unsigned char)(length >> 8);
        header[3] = (unsigned char)length;
        header_length = 4;
    }
    append(out, (const char *)header, header_length);
    append(out, (const char *)mask, 4);
    size_t start = out->used;
    append(out, message, length);
    for (size_t index = 0; index < length; index++) out->data[start + index] ^= (char)mask[index % 4];
}

/*
 * The next complete server frame in `in` from `at` (unmasked): its payload's start and length,
 * and the index after it; 0 when the frame is cut.
 */
static size_t next_frame(const struct bytes *in, size_t at, size_t *payload, size_t *length) {
    if (in->used - at < 2) return 0;
    const unsigned char *bytes = (const unsigned char *)in->data + at;
    size_t size = bytes[1] & 0x7f, header = 2;
    if (size == 126) {
        if (in->used - at < 4) return 0;
        size = (size_t)bytes[2] << 8 | bytes[3];
        header = 4;
    } else if (size == 127) {
        if (in->used - at < 10) return 0;
        size = 0;
        for (int index = 2; index < 10; index++) size = size << 8 | bytes[index];
        header = 10;
    }
    if (size > (size_t)1 << 30) fail("a frame over a gigabyte");
    if (in->used - at < header + size) return 0;
    *payload = at + header;
    *length = size;
    return at + header + size;
}

/* Connects, upgrades to WebSocket and logs in as `user`; leaves what followed the answer in `in`. */
static void open_user(struct connection *c, int port, const char *user) {
    c->fd = connect_to(port);
    char request[256];
    int length = snprintf(request, sizeof request,
                          "GET / HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                          "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
                          "Sec-WebSocket-Protocol: switchboard.v1\r\n\r\n",
                          port);
    write_all_blocking(c->fd, request, (size_t)length);
    for (;;) {
        char chunk[4096];
        ssize_t received = read(c->fd, chunk, sizeof chunk);
        if (received <= 0) fail("handshake");
        append(&c->in, chunk, (size_t)received);
        char *end = memmem(c->in.data, c->in.used, "\r\n\r\n", 4);
        if (!end) continue;
        if (c->in.used < 12 || memcmp(c->in.data + 9, "101", 3) != 0) fail("the server refused the upgrade");
        consume(&c->in, (size_t)(end + 4 - c->in.data));
        break;
    }
    struct bytes login = {0};
    append(&login, "\x87", 1);
    put_string(&login, "t"), put_string(&login, "login");
    put_string(&login, "id"), append(&login, "\x01", 1);
    put_string(&login, "appId"), put_string(&login, "bench");
    put_string(&login, "userId"), put_string(&login, user);
    put_string(&login, "token"), put_string(&login, "");
    put_string(&login, "heartbeatInterval"), append(&login, "\xcd\x07\x08", 3); /* 1800 s, as switchboard-bench */
    put_string(&login, "presenceTimeout"), append(&login, "\x00", 1);
    struct bytes frame = {0};
    append_frame(&frame, login.data, login.used);
    write_all_blocking(c->fd, frame.data, frame.used);
    free(login.data), free(frame.data);
    for (;;) {
        size_t payload, size, next = next_frame(&c->in, 0, &payload, &size);
        if (next) {
            if (!memmem(c->in.data + payload, size, "\xa7loginOk", 8)) fail("login refused");
            consume(&c->in, next);
            return;
        }
        char chunk[4096];
        ssize_t received = read(c->fd, chunk, sizeof chunk);
        if (received <= 0) fail("login");
        append(&c->in, chunk, (size_t)received);
    }
}

/* The publish request from a user to `partner`, its payload `payload_size` letters. */
static void make_publish(struct connection *c, const char *partner) {
    struct bytes *p = &c->publish;
    append(p, "\x85", 1);
    put_string(p, "t"), put_string(p, "publish");
    put_string(p, "id"), append(p, "\x07", 1);
    put_string(p, "channelType"), append(p, "\x03", 1);
    put_string(p, "channel"), put_string(p, partner);
    put_string(p, "message");
    if (payload_size > 0xff) fail("payload too large");
    unsigned char header[2] = {0xc4, (unsigned char)payload_size};
    append(p, (const char *)header, 2);
    c->payload_at = p->used;
    for (size_t index = 0; index < payload_size; index++) append(p, &"abcdefghijklmnopqrstuvwxyz"[index % 26], 1);
}

/* Queues one publish, stamped with the time now when paced, and writes. */
static int send_publish(struct connection *c) {
    if (paced) write_stamp(c->publish.data + c->payload_at);
    append_frame(&c->out, c->publish.data, c->publish.used);
    c->in_flight++;
    return flush_out(c->fd, &c->out);
}

/* User `sender`'s connection, for the pacer. */
static int sender_full(int sender) { return connections[sender].in_flight >= window_size; }
static int sender_send(int sender) { return send_publish(&connections[sender]); }

/* Reads and handles what arrived; returns 0, or -1 when the connection closed or failed. */
static int handle_readable(struct connection *c, int window) {
    if (read_available(c->fd, &c->in) < 0) return -1;
    size_t position = 0, payload, size, next;
    int answers = 0;
    while ((next = next_frame(&c->in, position, &payload, &size))) {
        const char *frame = c->in.data + payload;
        if (size > 10 && memcmp(frame + 1, "\xa1t\xa7message", 10) == 0) {
            delivered++;
            if (paced && recording) {
                const char *key = memmem(frame, size, "\xa7message\xc4", 9);
                if (key && (size_t)(key + 10 + 16 - frame) <= size) record_latency(key + 10);
            }
        } else if (size > 5 && memcmp(frame + 1, "\xa1t\xa2ok", 5) == 0) {
            answers++;
        } else if (memmem(frame, size, "\xa1t\xa5" "error", 8)) {
            answers++, refused++;
        }
        position = next;
    }
    consume(&c->in, position);
    if (answers > 0) {
        answered += (uint64_t)answers;
        c->in_flight -= answers;
        if (!paced) {
            while (c->in_flight < window) {
                append_frame(&c->out, c->publish.data, c->publish.used);
                c->in_flight++;
            }
            return flush_out(c->fd, &c->out);
        }
    }
    return 0;
}

/* A connection's events: writes what waits, reads what came; -1 when it failed. */
static int serve(void *connection, uint32_t events) {
    struct connection *c = connection;
    if ((events & EPOLLOUT) && c->out.used > 0 && flush_out(c->fd, &c->out) < 0) return -1;
    return (events & (EPOLLIN | EPOLLHUP | EPOLLERR)) ? handle_readable(c, window_size) : 0;
}

int main(int argc, char **argv) {
    int port = (int)option(argc, argv, "--port", 9000);
    int server_pid = (int)option(argc, argv, "--server-pid", 0);
    int pairs = (int)option(argc, argv, "--pairs", 50);
    int payload = (int)option(argc, argv, "--payload", 100);
    int window = (int)option(argc, argv, "--window", 64);
    long rate = option(argc, argv, "--rate", 0);
    double duration = (double)option(argc, argv, "--duration", 5);
    double warmup = (double)option(argc, argv, "--warmup", 1);
    const char *label = text_option(argc, argv, "--label", "switchboard-c-point-to-point");
    if (server_pid <= 0 || pairs < 1 || payload < 16 || payload > 255 || window < 1 || duration <= 0 || rate < 0) {
        fprintf(stderr, "usage: switchboard_p2p --port N --server-pid PID [--pairs 50] [--payload 100, 16 to 255] "
                        "[--window 64] [--rate 0] [--duration 5] [--warmup 1] [--label NAME]\n");
        return 2;
    }
    paced = rate > 0;
    payload_size = (size_t)payload;

    int users = 2 * pairs;
    window_size = window;
    connections = calloc((size_t)users, sizeof *connections);
    for (int user = 0; user < users; user++) {
        char name[32], partner[32];
        snprintf(name, sizeof name, "user-%d", user);
        snprintf(partner, sizeof partner, "user-%d", user ^ 1);
        open_user(&connections[user], port, name);
        make_publish(&connections[user], partner);
    }

    int poller = epoll_create1(0);
    if (poller < 0) fail("epoll_create1");
    for (int user = 0; user < users; user++) watch(poller, connections[user].fd, &connections[user]);
    static struct connection tick;
    struct pacer pacer;
    if (paced) {
        pacer_start(&pacer, rate, users, poller, &tick);
    } else {
        for (int user = 0; user < users; user++) {
            struct connection *c = &connections[user];
            while (c->in_flight < window) send_publish(c);
        }
    }

    struct measure m;
    measure_begin(&m, server_pid, warmup, duration);
    int outcome = p2p_run("switchboard_p2p", poller, &m, &answered, &delivered, &recording, paced ? &pacer : NULL, &tick,
                          sender_full, sender_send, serve);
    if (outcome) return outcome;
    print_result(label, "switchboard", pairs, payload, window, &m, refused, paced ? &pacer : NULL);
    return refused ? 1 : 0;
}
