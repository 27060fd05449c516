/*
 * The point-to-point scenario of switchboard-bench, driven against a Redis server, so that a run
 * on a noisy machine measures Switchboard next to a reference broker on the same machine at the
 * same hour (tools/bench-reference.sh builds and runs it).
 *
 * The same traffic as `switchboard-bench --scenario point-to-point`: PAIRS pairs of users send
 * each other PAYLOAD-byte messages, each sender keeping WINDOW messages unanswered. A user is two
 * connections, as Redis pub/sub needs: one SUBSCRIBEd to the user's own channel, one sending
 * PUBLISH to the partner's channel; the integer reply to PUBLISH is the answer, the `message`
 * push on the partner's subscription the delivery.
 *
 * Paced (`--rate N`, as `switchboard-bench --rate N`): N messages a second in all, due every
 * 200 µs and sent round-robin by the senders with room in their window (a due message whose
 * sender's window is full counts as behind schedule); each payload starts with its send time
 * (CLOCK_MONOTONIC nanoseconds, 16 hex digits), and each delivery's latency is its arrival time
 * less that, as switchboard-bench measures its deliveries.
 *
 * Prints one JSON line with the keys of switchboard-bench's: publishes_per_s, deliveries_per_s,
 * server_cpu_cores, server_cpu_ns_per_delivery (server CPU from /proc/PID/stat over the measured
 * window, after a warm-up) and server_cpu_ns_per_delivery_fastest_second (the same in the
 * window's fastest whole second); paced, also rate_target, behind_schedule and the deliveries'
 * latency_p50_ms, latency_p99_ms and latency_p999_ms over the window.
 *
 *   redis_p2p --port 6379 --server-pid PID [--pairs 50] [--payload 100] [--window 64]
 *             [--rate 0] [--duration 5] [--warmup 1] [--label NAME]
 */
#include "p2p.h"
#include "resp.h"

struct connection {
    int fd;
    int is_publisher;
    /* Bytes received and not yet parsed (a reply or push cut by the read). */
    struct bytes in;
    /* Bytes of PUBLISH commands the socket did not take yet. */
    struct bytes out;
    /* A publisher's unanswered commands, and its one command, encoded once. */
    int in_flight;
    struct bytes command;
};

static uint64_t answered, delivered, refused;

/* Paced runs: the payload's size (its first 16 bytes are the send time) and whether the measured
 * window is open. */
static size_t payload_size;
static int paced, recording;
static struct connection *connections;
static int window_size;

/* Queues one PUBLISH stamped with the time now and writes it. */
static int send_stamped(struct connection *c) {
    write_stamp(c->command.data + c->command.used - 2 - payload_size);
    append(&c->out, c->command.data, c->command.used);
    c->in_flight++;
    return flush_out(c->fd, &c->out);
}

/* User `sender`'s publishing connection, for the pacer. */
static int sender_full(int sender) { return connections[2 * sender + 1].in_flight >= window_size; }
static int sender_send(int sender) { return send_stamped(&connections[2 * sender + 1]); }

/* Queues PUBLISH commands until the window is full, then writes. */
static int fill_window(struct connection *c, int window) {
    while (c->in_flight < window) {
        append(&c->out, c->command.data, c->command.used);
        c->in_flight++;
    }
    return flush_out(c->fd, &c->out);
}

/* Reads and handles what arrived; returns 0, or -1 when the connection closed or failed. */
static int handle_readable(struct connection *c, int window) {
    if (read_available(c->fd, &c->in) < 0) return -1;
    size_t position = 0;
    int answers = 0;
    for (;;) {
        char kind;
        const char *first = NULL;
        size_t next = parse_value(c->in.data, position, c->in.used, &kind, &first);
        if (!next) break;
        if (c->is_publisher) {
            if (kind == ':') answers++;
            else refused++;
        } else if (kind == '*' && first && memcmp(first, "message", 7) == 0) {
            delivered++;
            if (paced && recording) record_latency(c->in.data + next - 2 - payload_size);
        }
        position = next;
    }
    consume(&c->in, position);
    if (c->is_publisher && answers > 0) {
        answered += (uint64_t)answers;
        c->in_flight -= answers;
        if (!paced) return fill_window(c, window);
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
    int port = (int)option(argc, argv, "--port", 6379);
    int server_pid = (int)option(argc, argv, "--server-pid", 0);
    int pairs = (int)option(argc, argv, "--pairs", 50);
    int payload = (int)option(argc, argv, "--payload", 100);
    int window = (int)option(argc, argv, "--window", 64);
    long rate = option(argc, argv, "--rate", 0);
    double duration = (double)option(argc, argv, "--duration", 5);
    double warmup = (double)option(argc, argv, "--warmup", 1);
    const char *label = text_option(argc, argv, "--label", "redis-point-to-point");
    if (server_pid <= 0 || pairs < 1 || payload < 1 || window < 1 || duration <= 0 || rate < 0 || (rate > 0 && payload < 16)) {
        fprintf(stderr, "usage: redis_p2p --port N --server-pid PID [--pairs 50] [--payload 100, at least 16 paced] "
                        "[--window 64] [--rate 0] [--duration 5] [--warmup 1] [--label NAME]\n");
        return 2;
    }
    paced = rate > 0;
    payload_size = (size_t)payload;

    int users = 2 * pairs;
    window_size = window;
    connections = calloc((size_t)users * 2, sizeof *connections);
    char *message = malloc((size_t)payload);
    for (int index = 0; index < payload; index++) message[index] = (char)('a' + index % 26);
    for (int user = 0; user < users; user++) {
        char channel[32];
        snprintf(channel, sizeof channel, "user-%d", user);
        struct connection *subscriber = &connections[2 * user];
        subscriber->fd = connect_to(port);
        subscribe(subscriber->fd, channel);

        /* The partner of user 2k is 2k+1 and the other way round. */
        char partner[32];
        snprintf(partner, sizeof partner, "user-%d", user ^ 1);
        struct connection *publisher = &connections[2 * user + 1];
        publisher->fd = connect_to(port);
        publisher->is_publisher = 1;
        publisher->command = publish_command(partner, message, (size_t)payload);
    }

    int poller = epoll_create1(0);
    if (poller < 0) fail("epoll_create1");
    for (int index = 0; index < users * 2; index++) watch(poller, connections[index].fd, &connections[index]);
    /* Paced, a timer wakes the loop every 200 µs to send what is due; otherwise every window is filled now. */
    static struct connection tick;
    struct pacer pacer;
    if (paced) {
        pacer_start(&pacer, rate, users, poller, &tick);
    } else {
        for (int user = 0; user < users; user++) {
            if (fill_window(&connections[2 * user + 1], window) < 0) fail("first PUBLISH");
        }
    }

    /* Runs the traffic until the window closes, on edge-triggered events: read everything, write what waits. */
    struct measure m;
    measure_begin(&m, server_pid, warmup, duration);
    int outcome = p2p_run("redis_p2p", poller, &m, &answered, &delivered, &recording, paced ? &pacer : NULL, &tick,
                          sender_full, sender_send, serve);
    if (outcome) return outcome;
    print_result(label, "redis", pairs, payload, window, &m, refused, paced ? &pacer : NULL);
    return refused ? 1 : 0;
}
