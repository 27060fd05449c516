/*
 * The fan-out scenario of switchboard-bench (`--scenario fanout --publishers 1`), driven against
 * a broker whose protocol a `struct fanout_protocol` describes (redis_fanout.c, nats_fanout.c,
 * switchboard_fanout.c): one publisher connection sends PAYLOAD-byte messages to one channel, keeping
 * WINDOW of them unanswered, and SUBSCRIBERS connections subscribed to that channel receive each.
 *
 * After the measured window the publisher stops, waits for its answers and for every
 * subscriber to receive every answered message (at most --drain seconds), and checks that each
 * subscriber received exactly the messages published, each as sent: the run exits 1 when one
 * was lost, repeated or changed, and 2 when a connection failed.
 *
 * The publisher also waits while the subscribers are more than --max-lag messages behind it, so
 * that a load generator slower than the server never piles up enough in the server to be
 * disconnected as a slow consumer (Redis: 32 MB, NATS: 64 MB per connection); `lag_waits` counts
 * the times it waited. A run with lag_waits > 0 measured the generator as much as the server.
 *
 * Prints one JSON line with the keys of switchboard-bench's: publishes_per_s, deliveries_per_s,
 * published, expected, received, lost, server_cpu_cores, server_cpu_ns_per_delivery (server CPU
 * from /proc/PID/stat over the measured window, after a warm-up) and
 * server_cpu_ns_per_delivery_fastest_second (the same in the window's fastest whole second).
 */
#ifndef SWITCHBOARD_REFERENCE_FANOUT_H
#define SWITCHBOARD_REFERENCE_FANOUT_H

#include "loadgen.h"

/* What a broker's protocol says, as the fan-out needs it. */
struct fanout_protocol {
    /* The server's name in the output line. */
    const char *server;
    /* Readies connection `fd`, blocking until the server confirmed: as a subscriber of
     * `channel`, or as the publisher when `channel` is NULL. */
    void (*open)(int fd, const char *channel);
    /* One publish of `length` bytes of `payload` to `channel`, with what asks for its answer. */
    struct bytes (*publish)(const char *channel, const char *payload, size_t length);
    /* What a subscriber receives for that publish. */
    struct bytes (*delivery)(const char *channel, const char *payload, size_t length);
    /* What the publisher receives as the answer, when `subscribers` received the message. */
    struct bytes (*answer)(int subscribers);
    /* Anything else that came at `bytes`: returns its length, or 0 while it is cut; appends to
     * `reply` what it asks for (a PING's PONG); prints what is wrong and exits 1 for an answer or
     * delivery that is not the one expected, an error above all. */
    size_t (*other)(const char *bytes, size_t length, struct bytes *reply);
    /* How many bytes at the end of each delivery differ from one to the next and are not
     * compared (Switchboard's timestamp); 0 for none. */
    size_t varying_tail;
};

struct fanout_peer {
    int fd;
    int is_publisher;
    struct bytes in, out;
    /* Subscriber: deliveries received; publisher: answers received. */
    uint64_t count;
};

/* Counts the expected records (`expected`, all but its last `tail` bytes compared) at the start
 * of `p->in`, hands anything else to the protocol, and drops what it read. */
static inline void fanout_parse(struct fanout_peer *p, const struct bytes *expected, size_t tail,
                                const struct fanout_protocol *protocol) {
    size_t position = 0, compared = expected->used - tail;
    for (;;) {
        size_t remaining = p->in.used - position;
        const char *at = p->in.data + position;
        if (remaining >= expected->used) {
            if (memcmp(at, expected->data, compared) == 0) {
                position += expected->used;
                p->count++;
                continue;
            }
        } else if (memcmp(at, expected->data, remaining < compared ? remaining : compared) == 0) {
            break; /* cut by the read (or nothing left) */
        }
        size_t length = protocol->other(at, remaining, &p->out);
        if (!length) break;
        position += length;
    }
    consume(&p->in, position);
}

static inline double load_average(void) {
    double load = 0;
    FILE *file = fopen("/proc/loadavg", "r");
    if (file) {
        if (fscanf(file, "%lf", &load) != 1) load = 0;
        fclose(file);
    }
    return load;
}

static inline int run_fanout(int argc, char **argv, const struct fanout_protocol *protocol) {
    const char *name = program_invocation_short_name;
    int port = (int)option(argc, argv, "--port", 0);
    int server_pid = (int)option(argc, argv, "--server-pid", 0);
    int subscribers = (int)option(argc, argv, "--subscribers", 100);
    int payload = (int)option(argc, argv, "--payload", 100);
    int window = (int)option(argc, argv, "--window", 64);
    uint64_t max_lag = (uint64_t)option(argc, argv, "--max-lag", 4096);
    double duration = (double)option(argc, argv, "--duration", 5);
    double warmup = (double)option(argc, argv, "--warmup", 1);
    double drain = (double)option(argc, argv, "--drain", 5);
    const char *label = text_option(argc, argv, "--label", protocol->server);
    const char *channel = "fanout";
    if (port <= 0 || server_pid <= 0 || subscribers < 1 || payload < 1 || window < 1 || max_lag < (uint64_t)window
        || duration <= 0) {
        fprintf(stderr,
                "usage: %s --port N --server-pid PID [--subscribers 100] [--payload 100] [--window 64] "
                "[--max-lag 4096] [--duration 5] [--warmup 1] [--drain 5] [--label NAME]\n",
                name);
        return 2;
    }

    char *message = malloc((size_t)payload);
    for (int index = 0; index < payload; index++) message[index] = (char)('a' + index % 26);
    struct bytes command = protocol->publish(channel, message, (size_t)payload);
    struct bytes delivery = protocol->delivery(channel, message, (size_t)payload);
    struct bytes answer = protocol->answer(subscribers);

    /* Peer 0 is the publisher, 1 … subscribers the subscribers, each confirmed before publishing. */
    struct fanout_peer *peers = calloc((size_t)subscribers + 1, sizeof *peers);
    for (int index = 1; index <= subscribers; index++) {
        peers[index].fd = connect_to(port);
        protocol->open(peers[index].fd, channel);
    }
    struct fanout_peer *publisher = &peers[0];
    publisher->is_publisher = 1;
    publisher->fd = connect_to(port);
    protocol->open(publisher->fd, NULL);

    int poller = epoll_create1(0);
    if (poller < 0) fail("epoll_create1");
    for (int index = 0; index <= subscribers; index++) watch(poller, peers[index].fd, &peers[index]);

    /* Sent publishes; deliveries over all subscribers; times the lag bound held the publisher. */
    uint64_t sent = 0, delivered = 0, lag_waits = 0;
    int publishing = 1;
    struct measure m;
    measure_begin(&m, server_pid, warmup, duration);
    double drain_until = 0;
    struct epoll_event events[256];
    for (;;) {
        if (publishing) {
            /* Fills the window, as far as the subscribers' lag allows. */
            int held = 0;
            while (sent - publisher->count < (uint64_t)window) {
                if (sent * (uint64_t)subscribers - delivered >= max_lag * (uint64_t)subscribers) {
                    held = 1;
                    break;
                }
                append(&publisher->out, command.data, command.used);
                sent++;
            }
            lag_waits += (uint64_t)held;
            if (publisher->out.used > 0 && flush_out(publisher->fd, &publisher->out) < 0) {
                fprintf(stderr, "%s: the publisher's connection failed\n", name);
                return 2;
            }
            if (measure_tick(&m, publisher->count, delivered)) {
                publishing = 0;
                drain_until = now_seconds() + drain;
            }
        } else if ((publisher->count == sent && delivered == sent * (uint64_t)subscribers) || now_seconds() > drain_until) {
            break;
        }
        int ready = epoll_wait(poller, events, 256, 100);
        if (ready < 0) {
            if (errno == EINTR) continue;
            fail("epoll_wait");
        }
        for (int index = 0; index < ready; index++) {
            struct fanout_peer *p = events[index].data.ptr;
            if ((events[index].events & (EPOLLIN | EPOLLHUP | EPOLLERR))) {
                if (read_available(p->fd, &p->in) < 0) {
                    fprintf(stderr, "%s: a connection closed during the run (sent %llu, delivered %llu)\n", name,
                            (unsigned long long)sent, (unsigned long long)delivered);
                    return 2;
                }
                uint64_t before = p->count;
                fanout_parse(p, p->is_publisher ? &answer : &delivery, p->is_publisher ? 0 : protocol->varying_tail, protocol);
                if (!p->is_publisher) delivered += p->count - before;
            }
            if (p->out.used > 0 && flush_out(p->fd, &p->out) < 0) {
                fprintf(stderr, "%s: a connection failed during the run\n", name);
                return 2;
            }
        }
    }

    /* Every subscriber received every answered publish once; nothing else was sent. */
    uint64_t expected = publisher->count * (uint64_t)subscribers;
    int subscribers_short = 0;
    for (int index = 1; index <= subscribers; index++) subscribers_short += peers[index].count != publisher->count;
    uint64_t lost = expected > delivered ? expected - delivered : delivered - expected;
    int failed = lost > 0 || subscribers_short > 0 || publisher->count != sent;
    printf("{\"label\":\"%s\",\"server\":\"%s\",\"scenario\":\"fanout\",\"publishers\":1,\"subscribers\":%d,"
           "\"payload\":%d,\"window\":%d,\"duration_s\":%.2f,\"publishes_per_s\":%.0f,\"deliveries_per_s\":%.0f,"
           "\"published\":%llu,\"unanswered\":%llu,\"expected\":%llu,\"received\":%llu,\"lost\":%llu,"
           "\"subscribers_short\":%d,\"lag_waits\":%llu,\"server_cpu_s\":%.2f,\"server_cpu_cores\":%.3f,"
           "\"bench_cpu_cores\":%.3f,\"server_cpu_ns_per_delivery\":%.0f,"
           "\"server_cpu_ns_per_delivery_fastest_second\":%.0f,\"loadavg_1m\":%.2f}\n",
           label, protocol->server, subscribers, payload, window, m.elapsed, (double)m.answered / m.elapsed,
           (double)m.delivered / m.elapsed, (unsigned long long)publisher->count,
           (unsigned long long)(sent - publisher->count), (unsigned long long)expected, (unsigned long long)delivered,
           (unsigned long long)lost, subscribers_short, (unsigned long long)lag_waits, m.server_cpu,
           m.server_cpu / m.elapsed, m.own_cpu / m.elapsed, m.delivered ? m.server_cpu * 1e9 / (double)m.delivered : 0.0,
           m.fastest_second, load_average());
    if (failed) {
        fprintf(stderr, "%s: %llu publishes answered of %llu sent, %llu deliveries of %llu expected, %d subscribers short\n",
                name, (unsigned long long)publisher->count, (unsigned long long)sent, (unsigned long long)delivered,
                (unsigned long long)expected, subscribers_short);
    }
    return failed ? 1 : 0;
}

#endif
