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
#include "switchboard.h"

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

/* Connects and logs in as `user` (switchboard.h); leaves what followed the answer in `in`. */
static void open_user(struct connection *c, int port, const char *user) {
    c->fd = connect_to(port);
    open_switchboard(c->fd, &c->in, user);
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
    char letters[256];
    if (payload_size > sizeof letters - 1) fail("payload too large");
    for (size_t index = 0; index < payload_size; index++) letters[index] = "abcdefghijklmnopqrstuvwxyz"[index % 26];
    put_binary(p, letters, payload_size);
    c->payload_at = p->used - payload_size;
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
