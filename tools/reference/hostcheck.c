/*
 * How fast this machine is at the moment, in four figures that a shared machine's slow hours
 * change differently, printed as one JSON line (tools/bench-reference.sh prints it before its
 * rounds, so that runs on different days can be compared):
 *
 *   multiply_add_ns     one step of a dependent multiply-add chain (the core's clock)
 *   syscall_ns          one getppid system call
 *   indirect_call_ns    one call through a function pointer whose target alternates between two
 *                       functions (a branch predictor that learns the pattern makes it as cheap
 *                       as a direct call)
 *   memory_ns           one dependent load from a random place in 256 MB
 *
 * Each figure is the fastest of three tries.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

__attribute__((noinline)) static uint64_t times_three(uint64_t x) { return x * 3 + 1; }
__attribute__((noinline)) static uint64_t times_five(uint64_t x) { return x * 5 + 1; }
static uint64_t (*volatile targets[2])(uint64_t) = {times_three, times_five};

static volatile uint64_t sink;

static double multiply_add(void) {
    const long steps = 100000000;
    uint64_t x = 1;
    double start = now_seconds();
    for (long step = 0; step < steps; step++) {
        x = x * 6364136223846793005ULL + 1;
        __asm__ volatile("" : "+r"(x));
    }
    sink = x;
    return (now_seconds() - start) / (double)steps * 1e9;
}

static double system_call(void) {
    const long calls = 1000000;
    double start = now_seconds();
    for (long call = 0; call < calls; call++) syscall(SYS_getppid);
    return (now_seconds() - start) / (double)calls * 1e9;
}

static double indirect_call(void) {
    const long calls = 50000000;
    uint64_t x = 1;
    double start = now_seconds();
    for (long call = 0; call < calls; call++) x = targets[call & 1](x);
    sink = x;
    return (now_seconds() - start) / (double)calls * 1e9;
}

static double memory(const uint32_t *next) {
    const long loads = 3000000;
    uint32_t at = 0;
    double start = now_seconds();
    for (long load = 0; load < loads; load++) at = next[at];
    sink = at;
    return (now_seconds() - start) / (double)loads * 1e9;
}

static double fastest(double a, double b, double c) {
    double best = a < b ? a : b;
    return best < c ? best : c;
}

int main(void) {
    /* A single random cycle through 64 Mi entries (Sattolo's shuffle), so every load misses. */
    const uint32_t count = 64u << 20;
    uint32_t *next = malloc((size_t)count * sizeof *next);
    if (!next) return 2;
    for (uint32_t index = 0; index < count; index++) next[index] = index;
    uint64_t state = 0x9E3779B97F4A7C15ULL;
    for (uint32_t index = count - 1; index > 0; index--) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        uint32_t other = (uint32_t)((state >> 33) % index);
        uint32_t swapped = next[index];
        next[index] = next[other];
        next[other] = swapped;
    }
    printf("{\"multiply_add_ns\":%.2f,\"syscall_ns\":%.0f,\"indirect_call_ns\":%.2f,\"memory_ns\":%.0f}\n",
           fastest(multiply_add(), multiply_add(), multiply_add()),
           fastest(system_call(), system_call(), system_call()),
           fastest(indirect_call(), indirect_call(), indirect_call()),
           fastest(memory(next), memory(next), memory(next)));
    free(next);
    return 0;
}
