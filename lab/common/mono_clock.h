/*
 * mono_clock.h - CLOCK_MONOTONIC in nanoseconds, the clock every lab injector keeps its
 * deadlines on (and the trace's `mono` clock, so a deadline it marks is a trace time).
 * Header-only so each injector still builds from one `gcc` line.
 */
#ifndef RTSLEUTH_LAB_MONO_CLOCK_H
#define RTSLEUTH_LAB_MONO_CLOCK_H

#include <errno.h>
#include <stdint.h>
#include <time.h>

#define NSEC_PER_SEC 1000000000LL

static inline int64_t ts_ns(const struct timespec *t)
{
	return (int64_t)t->tv_sec * NSEC_PER_SEC + t->tv_nsec;
}

static inline struct timespec ns_ts(int64_t ns)
{
	struct timespec t = { .tv_sec = ns / NSEC_PER_SEC, .tv_nsec = ns % NSEC_PER_SEC };
	return t;
}

static inline int64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return ts_ns(&t);
}

/* Sleeps until the absolute time `ns`, through signals. */
static inline void sleep_until(int64_t ns)
{
	struct timespec t = ns_ts(ns);
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) == EINTR)
		;
}

#endif
