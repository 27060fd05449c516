/*
 * The fan-out scenario of switchboard-bench driven against a Redis server (tools/bench-reference.sh
 * builds and runs it; fanout.h has the traffic and what is checked): the publisher sends PUBLISH,
 * whose integer reply (the number of subscribers reached, which must be all of them) is the
 * answer; each subscriber's connection is SUBSCRIBEd to the channel and its `message` push is
 * the delivery.
 *
 *   redis_fanout --port 6379 --server-pid PID [--subscribers 100] [--payload 100] [--window 64]
 *                [--max-lag 4096] [--duration 5] [--warmup 1] [--drain 5] [--label NAME]
 */
#include "fanout.h"
#include "resp.h"

static int expected_receivers;

static void redis_open(int fd, const char *channel) {
    if (channel) subscribe(fd, channel);
}

static struct bytes redis_delivery(const char *channel, const char *payload, size_t length) {
    char header[128];
    snprintf(header, sizeof header, "*3\r\n$7\r\nmessage\r\n$%zu\r\n%s\r\n$%zu\r\n", strlen(channel), channel, length);
    return framed(header, payload, length, "\r\n");
}

static struct bytes redis_answer(int subscribers) {
    char reply[32];
    snprintf(reply, sizeof reply, ":%d\r\n", subscribers);
    expected_receivers = subscribers;
    return framed(reply, "", 0, "");
}

static size_t redis_other(const char *bytes, size_t length, struct bytes *reply) {
    (void)reply;
    char kind;
    const char *first = NULL;
    size_t end = parse_value(bytes, 0, length, &kind, &first);
    if (!end) return 0;
    if (kind == ':') {
        fprintf(stderr, "redis_fanout: a PUBLISH reached %ld subscribers, not %d\n", strtol(bytes + 1, NULL, 10),
                expected_receivers);
    } else if (kind == '*' && first && memcmp(first, "message", 7) == 0) {
        fprintf(stderr, "redis_fanout: a subscriber received a message that was not the one published\n");
    } else {
        fprintf(stderr, "redis_fanout: unexpected reply: %.*s\n", (int)(end < 200 ? end : 200), bytes);
    }
    exit(1);
}

int main(int argc, char **argv) {
    const struct fanout_protocol redis = {
        .server = "redis",
        .open = redis_open,
        .publish = publish_command,
        .delivery = redis_delivery,
        .answer = redis_answer,
        .other = redis_other,
    };
    return run_fanout(argc, argv, &redis);
}
