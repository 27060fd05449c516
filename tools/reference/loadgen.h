/*
 * What the reference load generators share (redis_p2p.c, redis_fanout.c, nats_fanout.c): sockets
 * and their buffers, command-line options, the CPU time of a process, and the measured window
 * with its fastest second. Each generator is one C file that includes this header and is
 * compiled on its own (tools/bench-reference.sh: gcc -O2).
 */
#ifndef SWITCHBOARD_REFERENCE_LOADGEN_H
#define SWITCHBOARD_REFERENCE_LOADGEN_H

#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* How much a read asks for at a time. */
#define READ_CHUNK (256 * 1024)

/* A growing byte buffer: received bytes not parsed yet, or bytes the socket did not take yet. */
struct bytes {
    char *data;
    size_t used, capacity;
};

static inline void fail(const char *what) {
    perror(what);
    exit(2);
}

static inline double now_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* utime + stime of process `pid`, in seconds. */
static inline double process_cpu_seconds(int pid) {
    char path[64], line[4096];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *file = fopen(path, "r");
    if (!file) fail("open /proc/PID/stat");
    size_t length = fread(line, 1, sizeof line - 1, file);
    fclose(file);
    line[length] = 0;
    /* The fields after the command name, which ends at the last ')': state is field 3. */
    char *field = strrchr(line, ')');
    if (!field) return 0;
    field += 2;
    unsigned long long utime = 0, stime = 0;
    for (int index = 3; index <= 15 && field; index++) {
        if (index == 14) utime = strtoull(field, NULL, 10);
        if (index == 15) stime = strtoull(field, NULL, 10);
        field = strchr(field, ' ');
        if (field) field++;
    }
    return (double)(utime + stime) / (double)sysconf(_SC_CLK_TCK);
}

static inline double own_cpu_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* A blocking TCP connection to 127.0.0.1:port, with Nagle's algorithm off. */
static inline int connect_to(int port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) fail("socket");
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&address, sizeof address) < 0) fail("connect");
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

static inline void write_all_blocking(int fd, const char *bytes, size_t length) {
    while (length > 0) {
        ssize_t written = write(fd, bytes, length);
        if (written < 0) fail("write");
        bytes += written;
        length -= (size_t)written;
    }
}

/* Makes `fd` non-blocking and watches it edge-triggered for reading and writing, as `tag`. */
static inline void watch(int poller, int fd, void *tag) {
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) fail("fcntl");
    struct epoll_event event = {.events = EPOLLIN | EPOLLOUT | EPOLLET, .data.ptr = tag};
    if (epoll_ctl(poller, EPOLL_CTL_ADD, fd, &event) < 0) fail("epoll_ctl");
}

static inline void append(struct bytes *buffer, const char *bytes, size_t length) {
    if (buffer->used + length > buffer->capacity) {
        buffer->capacity = (buffer->used + length) * 2;
        buffer->data = realloc(buffer->data, buffer->capacity);
        if (!buffer->data) fail("realloc");
    }
    memcpy(buffer->data + buffer->used, bytes, length);
    buffer->used += length;
}

/* `header`, then `length` bytes of `payload`, then `trailer`, in a new buffer: a command or a push. */
static inline struct bytes framed(const char *header, const char *payload, size_t length, const char *trailer) {
    struct bytes message = {0};
    append(&message, header, strlen(header));
    append(&message, payload, length);
    append(&message, trailer, strlen(trailer));
    return message;
}

/* Drops the first `length` bytes of `buffer`. */
static inline void consume(struct bytes *buffer, size_t length) {
    memmove(buffer->data, buffer->data + length, buffer->used - length);
    buffer->used -= length;
}

/* Writes what `out` holds until the socket takes no more; returns 0, or -1 when it failed. */
static inline int flush_out(int fd, struct bytes *out) {
    size_t offset = 0;
    while (offset < out->used) {
        ssize_t written = write(fd, out->data + offset, out->used - offset);
        if (written < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK) break;
            if (errno == EINTR) continue;
            return -1;
        }
        offset += (size_t)written;
    }
    consume(out, offset);
    return 0;
}

/*
 * Reads what arrived on `fd` into `in` (edge-triggered: until a read comes back short); returns
 * 0, or -1 when the connection closed or failed.
 */
static inline int read_available(int fd, struct bytes *in) {
    for (;;) {
        if (in->capacity - in->used < READ_CHUNK) {
            in->capacity = in->used + READ_CHUNK;
            in->data = realloc(in->data, in->capacity);
            if (!in->data) fail("realloc");
        }
        ssize_t received = read(fd, in->data + in->used, in->capacity - in->used);
        if (received == 0) return -1;
        if (received < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
            if (errno == EINTR) continue;
            return -1;
        }
        in->used += (size_t)received;
        if ((size_t)received < READ_CHUNK) return 0;
    }
}

/* Finds the end of the line starting at `at`; returns the index after "\r\n", or 0 if cut. */
static inline size_t line_end(const char *bytes, size_t at, size_t end) {
    for (size_t index = at; index + 1 < end; index++) {
        if (bytes[index] == '\r' && bytes[index + 1] == '\n') return index + 2;
    }
    return 0;
}

static inline long option(int argc, char **argv, const char *name, long fallback) {
    for (int index = 1; index + 1 < argc; index++) {
        if (strcmp(argv[index], name) == 0) return strtol(argv[index + 1], NULL, 10);
    }
    return fallback;
}

static inline const char *text_option(int argc, char **argv, const char *name, const char *fallback) {
    for (int index = 1; index + 1 < argc; index++) {
        if (strcmp(argv[index], name) == 0) return argv[index + 1];
    }
    return fallback;
}

/*
 * The measured window: it opens `warmup` seconds after `measure_begin` and lasts `duration`
 * seconds; at its ends it reads the server's CPU time and this process's, and in each whole
 * second of it the server's CPU per delivery, keeping the fastest second's.
 */
struct measure {
    int server_pid;
    double duration;
    int measuring;
    double from, to;
    uint64_t answered_at_start, delivered_at_start;
    double server_cpu_at_start, own_cpu_at_start;
    double second_from, second_cpu, fastest_second;
    uint64_t second_delivered;
    /* Filled by measure_tick when the window closes. */
    double elapsed, server_cpu, own_cpu;
    uint64_t answered, delivered;
};

static inline void measure_begin(struct measure *m, int server_pid, double warmup, double duration) {
    memset(m, 0, sizeof *m);
    m->server_pid = server_pid;
    m->duration = duration;
    m->from = now_seconds() + warmup;
    m->to = m->from + duration;
}

/* Called as traffic runs with the counts so far; returns 1 once the window has closed. */
static inline int measure_tick(struct measure *m, uint64_t answered, uint64_t delivered) {
    double now = now_seconds();
    if (!m->measuring && now >= m->from) {
        m->measuring = 1;
        m->answered_at_start = answered;
        m->delivered_at_start = delivered;
        m->server_cpu_at_start = process_cpu_seconds(m->server_pid);
        m->own_cpu_at_start = own_cpu_seconds();
        m->from = now;
        m->to = now + m->duration;
        m->second_from = now, m->second_cpu = m->server_cpu_at_start, m->second_delivered = delivered;
    }
    if (m->measuring && now >= m->second_from + 1 && now <= m->to) {
        double cpu = process_cpu_seconds(m->server_pid);
        if (delivered > m->second_delivered) {
            double ns = (cpu - m->second_cpu) * 1e9 / (double)(delivered - m->second_delivered);
            if (m->fastest_second == 0 || ns < m->fastest_second) m->fastest_second = ns;
        }
        m->second_from = now, m->second_cpu = cpu, m->second_delivered = delivered;
    }
    if (!m->measuring || now < m->to) return 0;
    m->elapsed = now - m->from;
    m->server_cpu = process_cpu_seconds(m->server_pid) - m->server_cpu_at_start;
    m->own_cpu = own_cpu_seconds() - m->own_cpu_at_start;
    m->answered = answered - m->answered_at_start;
    m->delivered = delivered - m->delivered_at_start;
    return 1;
}

#endif
