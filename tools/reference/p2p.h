/*
 * What the point-to-point load generators share (redis_p2p.c, switchboard_p2p.c): the send
 * stamp and the deliveries' latencies, the pacer that sends what is due, the run's loop and the
 * JSON line.
 */
#ifndef SWITCHBOARD_REFERENCE_P2P_H
#define SWITCHBOARD_REFERENCE_P2P_H

#include "loadgen.h"

#include <sys/timerfd.h>

static inline uint64_t monotonic_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Writes the time now (CLOCK_MONOTONIC nanoseconds, 16 hex digits) at `at`. */
static inline void write_stamp(char *at) {
    char stamp[17];
    snprintf(stamp, sizeof stamp, "%016llx", (unsigned long long)monotonic_ns());
    memcpy(at, stamp, 16);
}

/* The deliveries' latencies in the measured window (ns). */
static uint64_t *latencies;
static size_t latency_count, latency_capacity;

/* Records the latency of a delivery whose payload starts with the stamp at `stamped`. */
static inline void record_latency(const char *stamped) {
    char stamp[17];
    memcpy(stamp, stamped, 16);
    stamp[16] = 0;
    uint64_t sent = strtoull(stamp, NULL, 16), now = monotonic_ns();
    if (latency_count == latency_capacity) {
        latency_capacity = latency_capacity ? 2 * latency_capacity : 1 << 20;
        latencies = realloc(latencies, latency_capacity * sizeof *latencies);
        if (!latencies) fail("realloc");
    }
    latencies[latency_count++] = now > sent ? now - sent : 0;
}

static inline int by_value(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The latency at quantile `q` of the recorded ones (sorted), in milliseconds. */
static inline double latency_ms(double q) {
    if (!latency_count) return 0;
    return (double)latencies[(size_t)(q * (double)(latency_count - 1))] / 1e6;
}

/* Paced runs: RATE messages a second in all, due every 200 µs, sent round-robin by the senders. */
struct pacer {
    long rate;
    int senders, next;
    uint64_t issued, behind_schedule;
    double started;
    int timer;
};

/* A timer watched as `tag` that wakes the loop every 200 µs. */
static inline void pacer_start(struct pacer *p, long rate, int senders, int poller, void *tag) {
    *p = (struct pacer){.rate = rate, .senders = senders, .started = now_seconds()};
    p->timer = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
    struct itimerspec every = {.it_interval = {0, 200000}, .it_value = {0, 200000}};
    if (p->timer < 0 || timerfd_settime(p->timer, 0, &every, NULL) < 0) fail("timerfd");
    watch(poller, p->timer, tag);
}

/* Reads the timer's expirations (its event woke the loop). */
static inline void pacer_tick(struct pacer *p) {
    uint64_t expirations;
    if (read(p->timer, &expirations, sizeof expirations) < 0 && errno != EAGAIN) fail("read timerfd");
}

/*
 * Sends what is due by now: `full(sender)` says whether a sender's window is full (a due message
 * is then counted behind schedule while `recording`), `send(sender)` sends one, returning -1 when
 * its connection failed. Returns -1 then, else 0.
 */
static inline int pacer_send_due(struct pacer *p, int recording, int (*full)(int), int (*send)(int)) {
    uint64_t due = (uint64_t)((now_seconds() - p->started) * (double)p->rate);
    for (; p->issued < due; p->issued++) {
        int sender = p->next;
        p->next = (p->next + 1) % p->senders;
        if (full(sender)) {
            if (recording) p->behind_schedule++;
        } else if (send(sender) < 0) {
            return -1;
        }
    }
    return 0;
}

/* Prints the run's JSON line (switchboard-bench's keys), with the latencies when paced. */
static inline void print_result(const char *label, const char *server, int pairs, int payload, int window,
                                const struct measure *m, uint64_t refused, const struct pacer *paced) {
    printf("{\"label\":\"%s\",\"server\":\"%s\",\"scenario\":\"point-to-point\",\"pairs\":%d,"
           "\"payload\":%d,\"window\":%d,\"duration_s\":%.2f,\"publishes_per_s\":%.0f,\"deliveries_per_s\":%.0f,"
           "\"refused\":%llu,\"server_cpu_s\":%.2f,\"server_cpu_cores\":%.3f,\"bench_cpu_cores\":%.3f,"
           "\"server_cpu_ns_per_delivery\":%.0f,\"server_cpu_ns_per_delivery_fastest_second\":%.0f",
           label, server, pairs, payload, window, m->elapsed, (double)m->answered / m->elapsed,
           (double)m->delivered / m->elapsed, (unsigned long long)refused, m->server_cpu, m->server_cpu / m->elapsed,
           m->own_cpu / m->elapsed, m->delivered ? m->server_cpu * 1e9 / (double)m->delivered : 0.0, m->fastest_second);
    if (paced) {
        qsort(latencies, latency_count, sizeof *latencies, by_value);
        printf(",\"rate_target\":%ld,\"behind_schedule\":%llu,\"latency_samples\":%zu,\"latency_p50_ms\":%.3f,"
               "\"latency_p99_ms\":%.3f,\"latency_p999_ms\":%.3f",
               paced->rate, (unsigned long long)paced->behind_schedule, latency_count, latency_ms(0.5), latency_ms(0.99),
               latency_ms(0.999));
    }
    printf("}\n");
}

/*
 * Runs the measured traffic on `poller` until `m`'s window closes: lets `pacer` send what is due
 * (paced runs; NULL: none), reads the timer watched as `tick`, and hands each connection's events
 * to `serve(connection, events)`, which returns -1 when the connection failed. `recording` follows
 * whether the window is open. Returns 0, or 2 (said on stderr as `name`) when a connection closed.
 */
static inline int p2p_run(const char *name, int poller, struct measure *m, const uint64_t *answered,
                          const uint64_t *delivered, int *recording, struct pacer *pacer, const void *tick,
                          int (*full)(int), int (*send)(int), int (*serve)(void *connection, uint32_t events)) {
    struct epoll_event events[256];
    while (!measure_tick(m, *answered, *delivered)) {
        *recording = m->measuring;
        int ready = epoll_wait(poller, events, 256, 100);
        if (ready < 0) {
            if (errno == EINTR) continue;
            fail("epoll_wait");
        }
        int failed = pacer && pacer_send_due(pacer, *recording, full, send) < 0;
        for (int index = 0; index < ready && !failed; index++) {
            if (events[index].data.ptr == tick) {
                pacer_tick(pacer);
            } else {
                failed = serve(events[index].data.ptr, events[index].events) < 0;
            }
        }
        if (failed) {
            fprintf(stderr, "%s: a connection closed during the run\n", name);
            return 2;
        }
    }
    return 0;
}

#endif
