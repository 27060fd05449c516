/*
 * What the Switchboard load generators share (switchboard_p2p.c, switchboard_fanout.c): frames
 * written and read by hand as docs/PROTOCOL.md describes them, in the key order every Switchboard
 * client writes (RFC 6455 client frames, masked; MessagePack maps), and a connection's opening:
 * the WebSocket upgrade with subprotocol switchboard.v1 and a login to app "bench" with an empty
 * token (a server run without an app certificate).
 */
#ifndef SWITCHBOARD_REFERENCE_SWITCHBOARD_H
#define SWITCHBOARD_REFERENCE_SWITCHBOARD_H

#include "loadgen.h"

/* MessagePack: a string of at most 31 bytes (fixstr). */
static inline void put_string(struct bytes *b, const char *text) {
    size_t length = strlen(text);
    if (length > 31) fail("a string over 31 bytes");
    char header = (char)(0xa0 | length);
    append(b, &header, 1);
    append(b, text, length);
}

/* MessagePack: bytes of at most 255 (bin 8). */
static inline void put_binary(struct bytes *b, const char *bytes, size_t length) {
    if (length > 0xff) fail("bytes over 255");
    unsigned char header[2] = {0xc4, (unsigned char)length};
    append(b, (const char *)header, 2);
    append(b, bytes, length);
}

/* Appends the header of a binary WebSocket frame of `length` bytes (`masked`: with the mask bit). */
static inline void append_frame_header(struct bytes *out, size_t length, int masked) {
    unsigned char header[4];
    size_t header_length;
    header[0] = 0x82; /* FIN, binary */
    unsigned char mask_bit = masked ? 0x80 : 0;
    if (length < 126) {
        header[1] = (unsigned char)(mask_bit | length);
        header_length = 2;
    } else {
        if (length > 0xffff) fail("frame too large");
        header[1] = mask_bit | 126;
        header[2] = (unsigned char)(length >> 8);
        header[3] = (unsigned char)length;
        header_length = 4;
    }
    append(out, (const char *)header, header_length);
}

/* Appends `message` to `out` as one masked binary WebSocket frame, as a client sends it. */
static inline void append_frame(struct bytes *out, const char *message, size_t length) {
    static const unsigned char mask[4] = {0x5a, 0x17, 0xc3, 0x9e};
    append_frame_header(out, length, 1);
    append(out, (const char *)mask, 4);
    size_t start = out->used;
    append(out, message, length);
    for (size_t index = 0; index < length; index++) out->data[start + index] ^= (char)mask[index % 4];
}

/* `message` as one binary WebSocket frame, masked as a client sends it or unmasked as the server
 * does; frees `message`. */
static inline struct bytes frame_of(struct bytes *message, int masked) {
    struct bytes frame = {0};
    if (masked) {
        append_frame(&frame, message->data, message->used);
    } else {
        append_frame_header(&frame, message->used, 0);
        append(&frame, message->data, message->used);
    }
    free(message->data);
    *message = (struct bytes){0};
    return frame;
}

/*
 * The next complete server frame in `in` from `at` (unmasked): its payload's start and length,
 * and the index after it; 0 when the frame is cut.
 */
static inline size_t next_frame(const struct bytes *in, size_t at, size_t *payload, size_t *length) {
    if (in->used - at < 2) return 0;
    const unsigned char *bytes = (const unsigned char *)in->data + at;
    size_t size = bytes[1] & 0x7f, header = 2;
    if (size == 126) {
        if (in->used - at < 4) return 0;
        size = (size_t)bytes[2] << 8 | bytes[3];
        header = 4;
    } else if (size == 127) {
        if (in->used - at < 10) return 0;
        size = 0;
        for (int index = 2; index < 10; index++) size = size << 8 | bytes[index];
        header = 10;
    }
    if (size > (size_t)1 << 30) fail("a frame over a gigabyte");
    if (in->used - at < header + size) return 0;
    *payload = at + header;
    *length = size;
    return at + header + size;
}

/* Sends `request` (a MessagePack map) on `fd` and waits for the answer, which must contain
 * `expect`; leaves what followed it in `in`. */
static inline void call_blocking(int fd, struct bytes *in, const struct bytes *request, const char *expect, size_t expect_length,
                                 const char *what) {
    struct bytes frame = {0};
    append_frame(&frame, request->data, request->used);
    write_all_blocking(fd, frame.data, frame.used);
    free(frame.data);
    for (;;) {
        size_t payload, size, next = next_frame(in, 0, &payload, &size);
        if (next) {
            if (!memmem(in->data + payload, size, expect, expect_length)) fail(what);
            consume(in, next);
            return;
        }
        char chunk[4096];
        ssize_t received = read(fd, chunk, sizeof chunk);
        if (received <= 0) fail(what);
        append(in, chunk, (size_t)received);
    }
}

/* Upgrades connection `fd` to WebSocket and logs in as `user`; leaves what followed the answer in `in`. */
static inline void open_switchboard(int fd, struct bytes *in, const char *user) {
    static const char request[] = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                                  "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
                                  "Sec-WebSocket-Protocol: switchboard.v1\r\n\r\n";
    write_all_blocking(fd, request, sizeof request - 1);
    for (;;) {
        char chunk[4096];
        ssize_t received = read(fd, chunk, sizeof chunk);
        if (received <= 0) fail("handshake");
        append(in, chunk, (size_t)received);
        char *end = memmem(in->data, in->used, "\r\n\r\n", 4);
        if (!end) continue;
        if (in->used < 12 || memcmp(in->data + 9, "101", 3) != 0) fail("the server refused the upgrade");
        consume(in, (size_t)(end + 4 - in->data));
        break;
    }
    struct bytes login = {0};
    append(&login, "\x87", 1);
    put_string(&login, "t"), put_string(&login, "login");
    put_string(&login, "id"), append(&login, "\x01", 1);
    put_string(&login, "appId"), put_string(&login, "bench");
    put_string(&login, "userId"), put_string(&login, user);
    put_string(&login, "token"), put_string(&login, "");
    put_string(&login, "heartbeatInterval"), append(&login, "\xcd\x07\x08", 3); /* 1800 s, as switchboard-bench */
    put_string(&login, "presenceTimeout"), append(&login, "\x00", 1);
    call_blocking(fd, in, &login, "\xa7loginOk", 8, "login refused");
    free(login.data);
}

#endif
