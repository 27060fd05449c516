#define _GNU_SOURCE
#include <sys/prctl.h>
#include <sys/socket.h>
#include "CLinux.h"

int switchboard_accept4(int fd, struct sockaddr *address, socklen_t *length, int flags) {
    return accept4(fd, address, length, flags);
}

int switchboard_name_thread(const char *name) {
    return prctl(PR_SET_NAME, (unsigned long)name, 0, 0, 0);
}
