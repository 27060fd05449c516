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

#define READ_CHUNK (256 * 1024)

struct connection {
    int fd;
    int is_publisher;
    /* Bytes received and not yet parsed (a reply or push cut by the read). */
    char *in;
    size_t in_used, in_capacity;
    /* Bytes of PUBLISH commands the socket did not take yet. */
    char *out;
    size_t out_used, out_capacity;
    /* A publisher's unanswered commands, and its one command, encoded once. */
    int in_flight;
    const char *command;
    size_t command_length;
};

static uint64_t answered, delivered, refused;

static void fail(const char *what) {
    perror(what);
    exit(2);
}

static double now_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* utime + stime of process `pid`, in seconds. */
static double process_cpu_seconds(int pid) {
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

static double own_cpu_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int connect_to(int port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) fail("socket");
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&address, sizeof address) < 0) fail("connect");
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

static void write_all_blocking(int fd, const char *bytes, size_t length) {
    while (length > 0) {
        ssize_t written = write(fd, bytes, length);
        if (written < 0) fail("write");
        bytes += written;
        length -= (size_t)written;
    }
}

static void append(char **buffer, size_t *used, size_t *capacity, const char *bytes, size_t length) {
    if (*used + length > *capacity) {
        *capacity = (*used + length) * 2;
        *buffer = realloc(*buffer, *capacity);
        if (!*buffer) fail("realloc");
    }
    memcpy(*buffer + *used, bytes, length);
    *used += length;
}

/* Writes what is pending; returns 0, or -1 when the connection failed. */
static int flush_out(struct connection *c) {
    size_t offset = 0;
    while (offset < c->out_used) {
        ssize_t written = write(c->fd, c->out + offset, c->out_used - offset);
        if (written < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK) break;
            if (errno == EINTR) continue;
            return -1;
        }
        offset += (size_t)written;
    }
    memmove(c->out, c->out + offset, c->out_used - offset);
    c->out_used -= offset;
    return 0;
}

/* Queues PUBLISH commands until the window is full, then writes. */
static int fill_window(struct connection *c, int window) {
    while (c->in_flight < window) {
        append(&c->out, &c->out_used, &c->out_capacity, c->command, c->command_length);
        c->in_flight++;
    }
    return flush_out(c);
}

/* Finds the end of the line starting at `at`; returns the index after "\r\n", or 0 if cut. */
static size_t line_end(const char *bytes, size_t at, size_t end) {
    for (size_t index = at; index + 1 < end; index++) {
        if (bytes[index] == '\r' && bytes[index + 1] == '\n') return index + 2;
    }
    return 0;
}

/*
 * Parses one RESP value at `at`: an integer (":N"), an error ("-..."), a simple string ("+..."),
 * a bulk string ("$N") or an array of them ("*N"). Returns the index after it, or 0 when the
 * value is cut; sets `kind` to its first byte and, for an array, `first_element` to the start of
 * its first bulk string's bytes.
 */
static size_t parse_value(const char *bytes, size_t at, size_t end, char *kind, const char **first_element) {
    if (at >= end) return 0;
    *kind = bytes[at];
    size_t after_line = line_end(bytes, at, end);
    if (!after_line) return 0;
    long count = strtol(bytes + at + 1, NULL, 10);
    switch (*kind) {
    case ':':
    case '+':
    case '-': return after_line;
    case '$':
        if (count < 0) return after_line;
        if (after_line + (size_t)count + 2 > end) return 0;
        return after_line + (size_t)count + 2;
    case '*': {
        size_t position = after_line;
        for (long element = 0; element < count; element++) {
            char element_kind;
            const char *ignored;
            size_t next = parse_value(bytes, position, end, &element_kind, &ignored);
            if (!next) return 0;
            if (element == 0 && first_element) *first_element = bytes + line_end(bytes, position, end);
            position = next;
        }
        return position;
    }
    default:
        fprintf(stderr, "redis_p2p: unexpected reply byte 0x%02x\n", (unsigned char)*kind);
        exit(2);
    }
}

/* Reads and handles what arrived; returns 0, or -1 when the connection closed or failed. */
static int handle_readable(struct connection *c, int window) {
    for (;;) {
        if (c->in_capacity - c->in_used < READ_CHUNK) {
            c->in_capacity = c->in_used + READ_CHUNK;
            c->in = realloc(c->in, c->in_capacity);
            if (!c->in) fail("realloc");
        }
        ssize_t received = read(c->fd, c->in + c->in_used, c->in_capacity - c->in_used);
        if (received == 0) return -1;
        if (received < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK) break;
            if (errno == EINTR) continue;
            return -1;
        }
        c->in_used += (size_t)received;
        if ((size_t)received < READ_CHUNK) break;
    }
    size_t position = 0;
    int answers = 0;
    for (;;) {
        char kind;
        const char *first = NULL;
        size_t next = parse_value(c->in, position, c->in_used, &kind, &first);
        if (!next) break;
        if (c->is_publisher) {
            if (kind == ':') answers++;
            else refused++;
        } else if (kind == '*' && first && memcmp(first, "message", 7) == 0) {
            delivered++;
        }
        position = next;
    }
    memmove(c->in, c->in + position, c->in_used - position);
    c->in_used -= position;
    if (c->is_publisher && answers > 0) {
        answered += (uint64_t)answers;
        c->in_flight -= answers;
        return fill_window(c, window);
    }
    return 0;
}

/* Sends SUBSCRIBE and waits, blocking, for its confirmation. */
static void subscribe(int fd, const char *channel) {
    char command[256];
    int length = snprintf(command, sizeof command, "*2\r\n$9\r\nSUBSCRIBE\r\n$%zu\r\n%s\r\n", strlen(channel), channel);
    write_all_blocking(fd, command, (size_t)length);
    char reply[512];
    size_t used = 0;
    for (;;) {
        ssize_t received = read(fd, reply + used, sizeof reply - used);
        if (received <= 0) fail("read subscribe confirmation");
        used += (size_t)received;
        char kind;
        const char *first = NULL;
        if (parse_value(reply, 0, used, &kind, &first)) {
            if (kind != '*' || !first || memcmp(first, "subscribe", 9) != 0) {
                fprintf(stderr, "redis_p2p: SUBSCRIBE %s was not confirmed\n", channel);
                exit(2);
            }
            return;
        }
    }
}

static long option(int argc, char **argv, const char *name, long fallback) {
    for (int index = 1; index + 1 < argc; index++) {
        if (strcmp(argv[index], name) == 0) return strtol(argv[index + 1], NULL, 10);
    }
    return fallback;
}

static const char *text_option(int argc, char **argv, const char *name, const char *fallback) {
    for (int index = 1; index + 1 < argc; index++) {
        if (strcmp(argv[index], name) == 0) return argv[index + 1];
    }
    return fallback;
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
        char header[128];
        int header_length = snprintf(header, sizeof header, "*3\r\n$7\r\nPUBLISH\r\n$%zu\r\n%s\r\n$%d\r\n",
                                     strlen(partner), partner, payload);
        char *command = malloc((size_t)header_length + (size_t)payload + 2);
        memcpy(command, header, (size_t)header_length);
        memcpy(command + header_length, message, (size_t)payload);
        memcpy(command + header_length + payload, "\r\n", 2);
        struct connection *publisher = &connections[2 * user + 1];
        publisher->fd = connect_to(port);
        publisher->is_publisher = 1;
        publisher->command = command;
        publisher->command_length = (size_t)header_length + (size_t)payload + 2;
    }

    int poller = epoll_create1(0);
    if (poller < 0) fail("epoll_create1");
    for (int index = 0; index < users * 2; index++) {
        struct connection *c = &connections[index];
        int flags = fcntl(c->fd, F_GETFL);
        if (flags < 0 || fcntl(c->fd, F_SETFL, flags | O_NONBLOCK) < 0) fail("fcntl");
        struct epoll_event event = {.events = EPOLLIN | EPOLLOUT | EPOLLET, .data.ptr = c};
        if (epoll_ctl(poller, EPOLL_CTL_ADD, c->fd, &event) < 0) fail("epoll_ctl");
    }
    for (int user = 0; user < users; user++) {
        if (fill_window(&connections[2 * user + 1], window) < 0) fail("first PUBLISH");
    }

    /* Runs the traffic until `until`, on edge-triggered events: read everything, write what waits. */
    struct epoll_event events[256];
    double started = now_seconds();
    double measure_from = started + warmup, measure_to = measure_from + duration;
    int measuring = 0;
    uint64_t answered_at_start = 0, delivered_at_start = 0;
    double server_cpu_at_start = 0, own_cpu_at_start = 0;
    /* The server's CPU per delivery in each whole second of the window; the fastest is kept. */
    double second_from = 0, second_cpu = 0, fastest_second = 0;
    uint64_t second_delivered = 0;
    for (;;) {
        double now = now_seconds();
        if (!measuring && now >= measure_from) {
            measuring = 1;
            answered_at_start = answered;
            delivered_at_start = delivered;
            server_cpu_at_start = process_cpu_seconds(server_pid);
            own_cpu_at_start = own_cpu_seconds();
            measure_from = now;
            measure_to = now + duration;
            second_from = now, second_cpu = server_cpu_at_start, second_delivered = delivered;
        }
        if (measuring && now >= second_from + 1 && now <= measure_to) {
            double cpu = process_cpu_seconds(server_pid);
            if (delivered > second_delivered) {
                double ns = (cpu - second_cpu) * 1e9 / (double)(delivered - second_delivered);
                if (fastest_second == 0 || ns < fastest_second) fastest_second = ns;
            }
            second_from = now, second_cpu = cpu, second_delivered = delivered;
        }
        if (measuring && now >= measure_to) break;
        int ready = epoll_wait(poller, events, 256, 100);
        if (ready < 0) {
            if (errno == EINTR) continue;
            fail("epoll_wait");
        }
        for (int index = 0; index < ready; index++) {
            struct connection *c = events[index].data.ptr;
            if (((events[index].events & EPOLLOUT) && c->out_used > 0 && flush_out(c) < 0)
                || ((events[index].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) && handle_readable(c, window) < 0)) {
                fprintf(stderr, "redis_p2p: a connection closed during the run\n");
                return 2;
            }
        }
    }
    double elapsed = now_seconds() - measure_from;
    double server_cpu = process_cpu_seconds(server_pid) - server_cpu_at_start;
    double own_cpu = own_cpu_seconds() - own_cpu_at_start;
    uint64_t publishes = answered - answered_at_start, deliveries = delivered - delivered_at_start;
    printf("{\"label\":\"%s\",\"server\":\"redis\",\"scenario\":\"point-to-point\",\"pairs\":%d,"
           "\"payload\":%d,\"window\":%d,\"duration_s\":%.2f,\"publishes_per_s\":%.0f,\"deliveries_per_s\":%.0f,"
           "\"refused\":%llu,\"server_cpu_s\":%.2f,\"server_cpu_cores\":%.3f,\"bench_cpu_cores\":%.3f,"
           "\"server_cpu_ns_per_delivery\":%.0f,\"server_cpu_ns_per_delivery_fastest_second\":%.0f}\n",
           label, pairs, payload, window, elapsed, (double)publishes / elapsed, (double)deliveries / elapsed,
           (unsigned long long)refused, server_cpu, server_cpu / elapsed, own_cpu / elapsed,
           deliveries ? server_cpu * 1e9 / (double)deliveries : 0.0, fastest_second);
    return refused ? 1 : 0;
}
