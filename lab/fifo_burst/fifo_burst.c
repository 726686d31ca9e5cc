/*
 * fifo_burst - inject a periodic, bounded SCHED_FIFO CPU burst.
 *
 * Usage:
 *   fifo_burst --cpu N --prio P --burst-us B --period-ms T --duration-s D
 *              [--drift-us U] [--policy fifo|rr]
 *
 * The program
 *   1. pins itself to CPU N (sched_setaffinity),
 *   2. locks its memory (mlockall) so page faults do not stretch a burst,
 *   3. switches itself to SCHED_FIFO (default) or SCHED_RR priority P,
 *   4. every T milliseconds (absolute clock_nanosleep deadlines, so the
 *      period does not drift) writes "fifo_burst start <B>" to
 *      /sys/kernel/tracing/trace_marker and then busy-spins for B
 *      microseconds, polling clock_gettime(CLOCK_MONOTONIC),
 *   5. exits after D seconds.
 *
 * --drift-us U (default 0) makes the real period T ms + U us. Without it a
 * 50 ms period is an exact multiple of cyclictest's 1 ms interval, the phase
 * between the two never changes and, depending on when both started, the
 * bursts may never (or always) overlap cyclictest's wake-ups. A small drift
 * sweeps the bursts across cyclictest's phase.
 *
 * --policy rr makes the task SCHED_RR instead. Two of them at the same
 * priority on the same CPU are round-robined by the kernel: each runs one
 * timeslice (/proc/sys/kernel/sched_rr_timeslice_ms, 100 ms by default) and
 * is then switched out still runnable. To see that, a burst must outlast a
 * slice, so with --policy rr a burst may be up to 1 s long; the marker is then
 * "fifo_burst start <B> rr".
 *
 * Safety: the total run time is bounded by --duration-s and every single
 * burst is bounded by --burst-us (capped at 100 ms with SCHED_FIFO, at 1 s
 * with SCHED_RR); the program can never spin forever. A burst is measured on
 * the wall clock, not in CPU time: the time a burst spends switched out (by a
 * higher priority, or by its RR peer) counts towards its end, so a preempted
 * burst ends no later than an undisturbed one. The marker write is best
 * effort: if trace_marker cannot be opened the bursts still happen.
 *
 * Build:  gcc -O2 -Wall -o fifo_burst fifo_burst.c
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "../common/mono_clock.h"
#include "../common/rt_task.h"
#include "../common/trace_mark.h"

#define MAX_BURST_US 100000LL /* hard cap: never spin longer than 100 ms */
/* SCHED_RR bursts must outlast a timeslice (100 ms by default): 1 s cap */
#define MAX_RR_BURST_US 1000000LL

static void usage(const char *argv0)
{
	fprintf(stderr,
		"usage: %s --cpu N --prio P --burst-us B --period-ms T --duration-s D [--drift-us U]\n"
		"          [--policy fifo|rr]\n",
		argv0);
	exit(2);
}

int main(int argc, char **argv)
{
	long cpu = -1, prio = -1, burst_us = -1, period_ms = -1, duration_s = -1;
	long drift_us = 0;
	int policy = SCHED_FIFO;
	static const struct option opts[] = {
		{ "cpu", required_argument, NULL, 'c' },
		{ "prio", required_argument, NULL, 'p' },
		{ "burst-us", required_argument, NULL, 'b' },
		{ "period-ms", required_argument, NULL, 't' },
		{ "duration-s", required_argument, NULL, 'd' },
		{ "drift-us", required_argument, NULL, 'u' },
		{ "policy", required_argument, NULL, 'P' },
		{ NULL, 0, NULL, 0 },
	};
	int o;

	while ((o = getopt_long(argc, argv, "c:p:b:t:d:u:P:", opts, NULL)) != -1) {
		switch (o) {
		case 'c': cpu = strtol(optarg, NULL, 10); break;
		case 'p': prio = strtol(optarg, NULL, 10); break;
		case 'b': burst_us = strtol(optarg, NULL, 10); break;
		case 't': period_ms = strtol(optarg, NULL, 10); break;
		case 'd': duration_s = strtol(optarg, NULL, 10); break;
		case 'u': drift_us = strtol(optarg, NULL, 10); break;
		case 'P':
			if (strcmp(optarg, "fifo") == 0)
				policy = SCHED_FIFO;
			else if (strcmp(optarg, "rr") == 0)
				policy = SCHED_RR;
			else
				usage(argv[0]);
			break;
		default: usage(argv[0]);
		}
	}
	if (cpu < 0 || prio < 1 || prio > 99 || burst_us < 0 ||
	    period_ms < 1 || duration_s < 1 || drift_us < 0 || drift_us >= 1000000)
		usage(argv[0]);
	const long long cap_us = policy == SCHED_RR ? MAX_RR_BURST_US : MAX_BURST_US;
	if (burst_us > cap_us)
		burst_us = cap_us;
	if (burst_us * 1000 >= period_ms * 1000000LL) {
		fprintf(stderr, "burst must be shorter than the period\n");
		return 2;
	}

	/* 1-3. pinned, memory locked, SCHED_FIFO or SCHED_RR */
	if (rt_task_enter_policy(cpu, prio, policy))
		return 1;

	/* the marker tells the trace reader where the injected cause starts */
	int marker = trace_mark_open();
	char msg[64];
	int msglen = snprintf(msg, sizeof(msg), "fifo_burst start %ld%s", burst_us,
			      policy == SCHED_RR ? " rr" : "");

	const int64_t burst_ns = burst_us * 1000LL;
	const int64_t period_ns = period_ms * 1000000LL + drift_us * 1000LL;
	const int64_t end = now_ns() + duration_s * NSEC_PER_SEC;
	int64_t next = now_ns();
	long bursts = 0;

	for (;;) {
		/* 4a. sleep until the next absolute period boundary */
		next += period_ns;
		if (next >= end)
			break; /* 5. bounded total duration */
		sleep_until(next);

		/* 4b. announce the burst in the trace */
		if (marker >= 0 && write(marker, msg, msglen) < 0) {
			/* tracing may be off; ignore */
		}

		/* 4c. busy-spin for burst_us, bounded by the clock */
		int64_t stop = now_ns() + burst_ns;
		while (now_ns() < stop)
			;
		bursts++;
	}

	if (marker >= 0)
		close(marker);
	fprintf(stderr, "fifo_burst: pid %d cpu %ld prio %ld: %ld bursts of %ld us (%s)\n",
		(int)getpid(), cpu, prio, bursts, burst_us,
		policy == SCHED_RR ? "SCHED_RR" : "SCHED_FIFO");
	return 0;
}
