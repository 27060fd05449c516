/*
 * Redis's protocol (RESP 2) as the Redis load generators need it (redis_p2p.c, redis_fanout.c):
 * parsing a reply or push, and subscribing a connection to a channel.
 */
#ifndef SWITCHBOARD_REFERENCE_RESP_H
#define SWITCHBOARD_REFERENCE_RESP_H

#include "loadgen.h"

/*
 * Parses one RESP value at `at`: an integer (":N"), an error ("-..."), a simple string ("+..."),
 * a bulk string ("$N") or an array of them ("*N"). Returns the index after it, or 0 when the
 * value is cut; sets `kind` to its first byte and, for an array, `first_element` to the start of
 * its first bulk string's bytes.
 */
static inline size_t parse_value(const char *bytes, size_t at, size_t end, char *kind, const char **first_element) {
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
        fprintf(stderr, "%s: unexpected reply byte 0x%02x\n", program_invocation_short_name, (unsigned char)*kind);
        exit(2);
    }
}

/* Sends SUBSCRIBE and waits, blocking, for its confirmation. */
static inline void subscribe(int fd, const char *channel) {
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
                fprintf(stderr, "%s: SUBSCRIBE %s was not confirmed\n", program_invocation_short_name, channel);
                exit(2);
            }
            return;
        }
    }
}

/* The PUBLISH command of `length` bytes of `payload` to `channel`, in a new buffer. */
static inline struct bytes publish_command(const char *channel, const char *payload, size_t length) {
    char header[128];
    snprintf(header, sizeof header, "*3\r\n$7\r\nPUBLISH\r\n$%zu\r\n%s\r\n$%zu\r\n", strlen(channel), channel, length);
    return framed(header, payload, length, "\r\n");
}

#endif
