#ifndef SWITCHBOARD_CLINUX_H
#define SWITCHBOARD_CLINUX_H
// Linux APIs that Glibc does not export to Swift: epoll, eventfd, timerfd, TCP options, the
// affinity mask.
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <sys/types.h>

/// accept4(2), which glibc only declares under _GNU_SOURCE.
int switchboard_accept4(int fd, struct sockaddr *address, socklen_t *length, int flags);

/// Names the calling thread as tools show it (at most 15 bytes are kept); prctl(2) is variadic.
int switchboard_name_thread(const char *name);
/// posix_spawn(3) of `path` with `argv` and this process's environment: standard input from
/// /dev/null, standard output and error to `output_fd`, every other descriptor closed
/// (posix_spawn_file_actions_addclosefrom_np, a _GNU_SOURCE call), the signal mask empty and
/// SIGCHLD, SIGTERM and SIGPIPE at their defaults. Returns 0 or an errno.
int switchboard_spawn_captured(pid_t *pid, const char *path, char *const argv[], int output_fd);

/// How many processors this process may run on: the CPUs in its affinity mask (taskset, a
/// cpuset), as sched_getaffinity(2) reports them (CPU_COUNT is a _GNU_SOURCE macro). Returns -1
/// when the mask cannot be read.
int switchboard_cpus_allowed(void);

/// Lets the process's threads share at most `arenas` glibc malloc arenas (mallopt M_ARENA_MAX;
/// 0 leaves glibc's own limit). Returns 1 when glibc took it, 0 otherwise.
int switchboard_limit_malloc_arenas(int arenas);
#endif
