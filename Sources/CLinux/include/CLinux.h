#ifndef SWITCHBOARD_CLINUX_H
#define SWITCHBOARD_CLINUX_H
// Linux APIs that Glibc does not export to Swift: epoll, eventfd, timerfd, TCP options.
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

/// accept4(2), which glibc only declares under _GNU_SOURCE.
int switchboard_accept4(int fd, struct sockaddr *address, socklen_t *length, int flags);
#endif
