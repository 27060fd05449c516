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
 * Prints one JSON line with the keys of switchboard-bench's: publishes_per_s, deliveries_per_s,
 * server_cpu_cores, server_cpu_ns_per_delivery (server CPU from /proc/PID/stat over the measured
 * window, after a warm-up) and server_cpu_ns_per_delivery_fastest_second (the same in the
 * window's fastest whole second).
 *
 *   redis_p2p --port 6379 --server-pid PID [--pairs 50] [--payload 100] [--window 64]
 *             [--duration 5] [--warmup 1] [--label NAME]
 */
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
        }
        position = next;
    }
    consume(&c->in, position);
    if (c->is_publisher && answers > 0) {
        answered += (uint64_t)answers;
        c->in_flight -= answers;
        return fill_window(c, window);
    }
    return 0;
}

int main(int argc, char **argv) {
    int port = (int)option(argc, argv, "--port", 6379);
    int server_pid = (int)option(argc, argv, "--server-pid", 0);
    int pairs = (int)option(argc, argv, "--pairs", 50);
    int payload = (int)option(argc, argv, "--payload", 100);
    int window = (int)option(argc, argv, "--window", 64);
    double duration = (double)option(argc, argv, "--duration", 5);
    double warmup = (double)option(argc, argv, "--warmup", 1);
    const char *label = text_option(argc, argv, "--label", "redis-point-to-point");
    if (server_pid <= 0 || pairs < 1 || payload < 1 || window < 1 || duration <= 0) {
        fprintf(stderr, "usage: redis_p2p --port N --server-pid PID [--pairs 50] [--payload 100] [--window 64] "
                        "[--duration 5] [--warmup 1] [--label NAME]\n");
        return 2;
    }

    int users = 2 * pairs;
    struct connection *connections = calloc((size_t)users * 2, sizeof *connections);
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
    for (int user = 0; user < users; user++) {
        if (fill_window(&connections[2 * user + 1], window) < 0) fail("first PUBLISH");
    }

    /* Runs the traffic until the window closes, on edge-triggered events: read everything, write what waits. */
    struct epoll_event events[256];
    struct measure m;
    measure_begin(&m, server_pid, warmup, duration);
    while (!measure_tick(&m, answered, delivered)) {
        int ready = epoll_wait(poller, events, 256, 100);
        if (ready < 0) {
            if (errno == EINTR) continue;
            fail("epoll_wait");
        }
        for (int index = 0; index < ready; index++) {
            struct connection *c = events[index].data.ptr;
            if (((events[index].events & EPOLLOUT) && c->out.used > 0 && flush_out(c->fd, &c->out) < 0)
                || ((events[index].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) && handle_readable(c, window) < 0)) {
                fprintf(stderr, "redis_p2p: a connection closed during the run\n");
                return 2;
            }
        }
    }
    printf("{\"label\":\"%s\",\"server\":\"redis\",\"scenario\":\"point-to-point\",\"pairs\":%d,"
           "\"payload\":%d,\"window\":%d,\"duration_s\":%.2f,\"publishes_per_s\":%.0f,\"deliveries_per_s\":%.0f,"
           "\"refused\":%llu,\"server_cpu_s\":%.2f,\"server_cpu_cores\":%.3f,\"bench_cpu_cores\":%.3f,"
           "\"server_cpu_ns_per_delivery\":%.0f,\"server_cpu_ns_per_delivery_fastest_second\":%.0f}\n",
           label, pairs, payload, window, m.elapsed, (double)m.answered / m.elapsed, (double)m.delivered / m.elapsed,
           (unsigned long long)refused, m.server_cpu, m.server_cpu / m.elapsed, m.own_cpu / m.elapsed,
           m.delivered ? m.server_cpu * 1e9 / (double)m.delivered : 0.0, m.fastest_second);
    return refused ? 1 : 0;
}
