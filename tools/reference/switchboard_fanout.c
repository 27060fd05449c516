/*
 * The fan-out scenario of switchboard-bench driven against Switchboard by a small C client, as
 * redis_fanout.c and nats_fanout.c drive Redis and NATS (fanout.h has the traffic and what is
 * checked), so that the three servers are driven by the same program. The publisher (user
 * "publisher") sends `publish` to message channel "fanout", whose `ok` answer is the answer; each
 * subscriber (users "subscriber-N") subscribed to the channel for its messages only (features 4,
 * as switchboard-bench subscribes), and its `message` push is the
 * delivery, compared byte for byte but for its timestamp (its last 8 bytes).
 *
 *   switchboard_fanout --port 9000 --server-pid PID [--subscribers 100] [--payload 100] [--window 64]
 *                      [--max-lag 4096] [--duration 5] [--warmup 1] [--drain 5] [--label NAME]
 */
#include "fanout.h"
#include "switchboard.h"

static int subscriber_number;

static void switchboard_open(int fd, const char *channel) {
    struct bytes in = {0};
    char user[32];
    if (channel) {
        snprintf(user, sizeof user, "subscriber-%d", ++subscriber_number);
    } else {
        snprintf(user, sizeof user, "publisher");
    }
    open_switchboard(fd, &in, user);
    if (channel) {
        struct bytes subscribe = {0};
        append(&subscribe, "\x84", 1);
        put_string(&subscribe, "t"), put_string(&subscribe, "subscribe");
        put_string(&subscribe, "id"), append(&subscribe, "\x02", 1);
        put_string(&subscribe, "channel"), put_string(&subscribe, channel);
        put_string(&subscribe, "features"), append(&subscribe, "\x04", 1); /* messages only, as switchboard-bench */
        call_blocking(fd, &in, &subscribe, "\xa2ok", 3, "subscribe refused");
        free(subscribe.data);
    }
    if (in.used) fail("a frame before the first publish");
    free(in.data);
}

static struct bytes switchboard_publish(const char *channel, const char *payload, size_t length) {
    struct bytes request = {0};
    append(&request, "\x85", 1);
    put_string(&request, "t"), put_string(&request, "publish");
    put_string(&request, "id"), append(&request, "\x07", 1);
    put_string(&request, "channelType"), append(&request, "\x01", 1);
    put_string(&request, "channel"), put_string(&request, channel);
    put_string(&request, "message"), put_binary(&request, payload, length);
    return frame_of(&request, 1);
}

/* The push, keys in the server's order (no topic or custom type: both empty, docs/PROTOCOL.md
 * §4.4), its timestamp (uint 64) zero: compared all but that. */
static struct bytes switchboard_delivery(const char *channel, const char *payload, size_t length) {
    struct bytes push = {0};
    append(&push, "\x86", 1);
    put_string(&push, "t"), put_string(&push, "message");
    put_string(&push, "channelType"), append(&push, "\x01", 1);
    put_string(&push, "channel"), put_string(&push, channel);
    put_string(&push, "message"), put_binary(&push, payload, length);
    put_string(&push, "publisher"), put_string(&push, "publisher");
    put_string(&push, "timestamp"), append(&push, "\xcf\0\0\0\0\0\0\0\0", 9);
    return frame_of(&push, 0);
}

static struct bytes switchboard_answer(int subscribers) {
    (void)subscribers;
    struct bytes answer = {0};
    append(&answer, "\x82", 1);
    put_string(&answer, "t"), put_string(&answer, "ok");
    put_string(&answer, "id"), append(&answer, "\x07", 1);
    return frame_of(&answer, 0);
}

static size_t switchboard_other(const char *bytes, size_t length, struct bytes *reply) {
    (void)reply;
    struct bytes in = {(char *)bytes, length, length};
    size_t payload, size;
    if (!next_frame(&in, 0, &payload, &size)) return 0;
    fprintf(stderr, "switchboard_fanout: unexpected frame (%zu bytes):", size);
    for (size_t index = 0; index < size && index < 96; index++) fprintf(stderr, " %02x", (unsigned char)bytes[payload + index]);
    fprintf(stderr, "\n");
    exit(1);
}

int main(int argc, char **argv) {
    const struct fanout_protocol switchboard = {
        .server = "switchboard",
        .open = switchboard_open,
        .publish = switchboard_publish,
        .delivery = switchboard_delivery,
        .answer = switchboard_answer,
        .other = switchboard_other,
        .varying_tail = 8,
    };
    return run_fanout(argc, argv, &switchboard);
}
