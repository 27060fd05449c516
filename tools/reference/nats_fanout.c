/*
 * The fan-out scenario of switchboard-bench driven against a NATS server (tools/bench-reference.sh
 * builds and runs it; fanout.h has the traffic and what is checked), in NATS's text protocol:
 * every connection reads the server's INFO and sends CONNECT {"verbose":false,"pedantic":false};
 * each subscriber sends SUB on the subject and receives each message as MSG; the publisher sends
 * each message as PUB followed by PING, and the server's PONG, which comes once the server has
 * handled the PUB before it, is the answer (NATS has no answer to PUB itself), so WINDOW bounds
 * the unanswered publishes as with Redis and Switchboard.
 *
 *   nats_fanout --port 4222 --server-pid PID [--subscribers 100] [--payload 100] [--window 64]
 *               [--max-lag 4096] [--duration 5] [--warmup 1] [--drain 5] [--label NAME]
 */
#include "fanout.h"

/* The subscription id of every subscriber (each on its own connection). */
#define SID "1"

/* Reads one line (blocking) into `line`; exits when the connection closes. */
static void read_line(int fd, char *line, size_t capacity) {
    size_t used = 0;
    while (used + 1 < capacity) {
        ssize_t received = read(fd, line + used, 1);
        if (received <= 0) fail("read from nats-server");
        used++;
        if (used >= 2 && line[used - 2] == '\r' && line[used - 1] == '\n') break;
    }
    line[used] = 0;
}

static void nats_open(int fd, const char *subject) {
    char line[8192];
    read_line(fd, line, sizeof line);
    if (strncmp(line, "INFO ", 5) != 0) {
        fprintf(stderr, "nats_fanout: the server said %s instead of INFO\n", line);
        exit(2);
    }
    char command[512];
    int length = snprintf(command, sizeof command, "CONNECT {\"verbose\":false,\"pedantic\":false}\r\n");
    if (subject) length += snprintf(command + length, sizeof command - (size_t)length, "SUB %s " SID "\r\n", subject);
    length += snprintf(command + length, sizeof command - (size_t)length, "PING\r\n");
    write_all_blocking(fd, command, (size_t)length);
    /* The PONG says CONNECT and SUB were handled; an error comes before it. */
    read_line(fd, line, sizeof line);
    if (strcmp(line, "PONG\r\n") != 0) {
        fprintf(stderr, "nats_fanout: the server answered %s", line);
        exit(2);
    }
}

static struct bytes nats_publish(const char *subject, const char *payload, size_t length) {
    char header[128];
    snprintf(header, sizeof header, "PUB %s %zu\r\n", subject, length);
    return framed(header, payload, length, "\r\nPING\r\n");
}

static struct bytes nats_delivery(const char *subject, const char *payload, size_t length) {
    char header[128];
    snprintf(header, sizeof header, "MSG %s " SID " %zu\r\n", subject, length);
    return framed(header, payload, length, "\r\n");
}

static struct bytes nats_answer(int subscribers) {
    (void)subscribers;
    return framed("PONG\r\n", "", 0, "");
}

static size_t nats_other(const char *bytes, size_t length, struct bytes *reply) {
    size_t end = line_end(bytes, 0, length);
    if (!end) return 0;
    if (end == 6 && memcmp(bytes, "PING\r\n", 6) == 0) {
        append(reply, "PONG\r\n", 6);
        return end;
    }
    if ((end == 5 && memcmp(bytes, "+OK\r\n", 5) == 0) || (end > 5 && memcmp(bytes, "INFO ", 5) == 0)) return end;
    if (end > 4 && memcmp(bytes, "MSG ", 4) == 0) {
        fprintf(stderr, "nats_fanout: a subscriber received a message that was not the one published: %.*s",
                (int)end, bytes);
    } else {
        fprintf(stderr, "nats_fanout: unexpected from the server: %.*s", (int)(end < 200 ? end : 200), bytes);
    }
    exit(1);
}

int main(int argc, char **argv) {
    const struct fanout_protocol nats = {
        .server = "nats",
        .open = nats_open,
        .publish = nats_publish,
        .delivery = nats_delivery,
        .answer = nats_answer,
        .other = nats_other,
    };
    return run_fanout(argc, argv, &nats);
}
