/*
 * timerfd_app - a SCHED_FIFO application that waits on a periodic timerfd.
 *
 * Usage:
 *   timerfd_app --cpu N --prio P --period-us T --duration-s D [--mark-us U]
 *
 * The program pins itself to CPU N at SCHED_FIFO P (memory locked), arms a
 * CLOCK_MONOTONIC timerfd at absolute times start + k*T (start: one period
 * after it armed it) and blocks in read() on it. A timerfd's hrtimer is not a
 * hard one: on PREEMPT_RT its callback (timerfd_tmrproc) runs in the timer
 * softirq, in ktimers/N (SCHED_FIFO 1), so a task between 1 and P on CPU N
 * delays the wake-up of this higher-priority application.
 *
 * read() returns the number of expirations since the last read. The read
 * waited for the first of them, due at start + seen*T (seen: expirations
 * counted before this read), so its lateness is the return time minus that
 * due time. A read later than U us (default 1000) writes
 *   "timerfd_app late <us> due <due_ns> seq <n>"
 * to /sys/kernel/tracing/trace_marker (best effort): due_ns is a
 * CLOCK_MONOTONIC time, the trace's own stamp with the mono trace clock, and
 * n counts the reads from 1. At the end it prints to stderr
 *   "timerfd_app: pid X cpu N prio P: R reads, E expirations, max M us, L later than U us"
 *
 * Safety: bounded by --duration-s; the task only blocks between expirations.
 *
 * Build:  gcc -O2 -Wall -static -o timerfd_app timerfd_app.c
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "../common/mono_clock.h"
#include "../common/rt_task.h"
#include "../common/trace_mark.h"

static void usage(const char *argv0)
{
	fprintf(stderr, "usage: %s --cpu N --prio P --period-us T --duration-s D [--mark-us U]\n",
		argv0);
	exit(2);
}

int main(int argc, char **argv)
{
	long cpu = -1, prio = -1, period_us = -1, duration_s = -1, mark_us = 1000;
	static const struct option opts[] = {
		{ "cpu", required_argument, NULL, 'c' },
		{ "prio", required_argument, NULL, 'p' },
		{ "period-us", required_argument, NULL, 't' },
		{ "duration-s", required_argument, NULL, 'd' },
		{ "mark-us", required_argument, NULL, 'm' },
		{ NULL, 0, NULL, 0 },
	};
	int o;
	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case 'c': cpu = atol(optarg); break;
		case 'p': prio = atol(optarg); break;
		case 't': period_us = atol(optarg); break;
		case 'd': duration_s = atol(optarg); break;
		case 'm': mark_us = atol(optarg); break;
		default: usage(argv[0]);
		}
	}
	if (cpu < 0 || prio < 1 || prio > 99 || period_us < 100 || duration_s < 1 ||
	    duration_s > 3600 || mark_us < 0)
		usage(argv[0]);
	if (rt_task_enter(cpu, prio))
		return 1;
	int marker = trace_mark_open();

	int tfd = timerfd_create(CLOCK_MONOTONIC, 0);
	if (tfd < 0) {
		perror("timerfd_create");
		return 1;
	}
	const int64_t period = period_us * 1000LL;
	const int64_t start = now_ns() + period;
	const int64_t end = start + duration_s * NSEC_PER_SEC;
	struct itimerspec spec = { .it_interval = ns_ts(period), .it_value = ns_ts(start) };
	if (timerfd_settime(tfd, TFD_TIMER_ABSTIME, &spec, NULL)) {
		perror("timerfd_settime");
		return 1;
	}

	long reads = 0, late = 0;
	uint64_t seen = 0, n;
	int64_t max = 0;
	while (start + (int64_t)seen * period < end) {
		if (read(tfd, &n, sizeof(n)) != sizeof(n)) {
			perror("read");
			return 1;
		}
		int64_t now = now_ns();
		int64_t due = start + (int64_t)seen * period; /* the first expiration it waited for */
		int64_t latency = now - due;
		seen += n;
		reads++;
		if (latency > max)
			max = latency;
		if (latency > mark_us * 1000LL) {
			late++;
			trace_mark(marker, "timerfd_app late %lld due %lld seq %ld",
				   (long long)(latency / 1000), (long long)due, reads);
		}
	}
	fprintf(stderr,
		"timerfd_app: pid %d cpu %ld prio %ld: %ld reads, %llu expirations, max %lld us, %ld later than %ld us\n",
		(int)getpid(), cpu, prio, reads, (unsigned long long)seen, (long long)(max / 1000), late,
		mark_us);
	return 0;
}
