/*
 * irq_app - a SCHED_FIFO application woken by a device interrupt's thread.
 *
 * Usage:
 *   irq_app --cpu N --prio P --file PATH --period-us T --duration-s D [--mark-us U]
 *
 * The program pins itself to CPU N at SCHED_FIFO P (memory locked), opens PATH
 * once and, every T microseconds (absolute clock_nanosleep deadlines on
 * CLOCK_MONOTONIC), reads its first 64 bytes with pread(). PATH is meant to be
 * on a 9p mount without a page cache (cache=none, the default): every pread is
 * then one 9p RPC, whose reply arrives by the virtio interrupt and, on
 * PREEMPT_RT, wakes the reader from that interrupt's thread (irq/N-virtio0-).
 * Each read is timed on CLOCK_MONOTONIC; a read longer than U us (default
 * 1000) writes
 *   "irq_app late <us> seq <n>"
 * to /sys/kernel/tracing/trace_marker (best effort), where n counts the reads
 * from 1. The mark is written right after the read returned, so the read
 * began <us> before the mark. At the end it prints to stderr
 *   "irq_app: pid X cpu N prio P: R reads, max M us, L later than U us"
 *
 * Safety: bounded by --duration-s; between reads the task sleeps and during a
 * read it blocks, so it cannot starve its CPU.
 *
 * Build:  gcc -O2 -Wall -static -o irq_app irq_app.c
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../common/mono_clock.h"
#include "../common/rt_task.h"
#include "../common/trace_mark.h"

static void usage(const char *argv0)
{
	fprintf(stderr,
		"usage: %s --cpu N --prio P --file PATH --period-us T --duration-s D [--mark-us U]\n",
		argv0);
	exit(2);
}

int main(int argc, char **argv)
{
	long cpu = -1, prio = -1, period_us = -1, duration_s = -1, mark_us = 1000;
	const char *path = NULL;
	static const struct option opts[] = {
		{ "cpu", required_argument, NULL, 'c' },
		{ "prio", required_argument, NULL, 'p' },
		{ "file", required_argument, NULL, 'f' },
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
		case 'f': path = optarg; break;
		case 't': period_us = atol(optarg); break;
		case 'd': duration_s = atol(optarg); break;
		case 'm': mark_us = atol(optarg); break;
		default: usage(argv[0]);
		}
	}
	if (cpu < 0 || prio < 1 || prio > 99 || !path || period_us < 100 || duration_s < 1 ||
	    duration_s > 3600 || mark_us < 0)
		usage(argv[0]);

	int fd = open(path, O_RDONLY);
	if (fd < 0) {
		perror(path);
		return 1;
	}
	if (rt_task_enter(cpu, prio))
		return 1;
	int marker = trace_mark_open();

	char buf[64];
	long reads = 0, late = 0;
	int64_t max = 0;
	const int64_t period = period_us * 1000LL;
	const int64_t end = now_ns() + duration_s * NSEC_PER_SEC;
	int64_t next = now_ns() + period;
	while (next < end) {
		sleep_until(next);
		int64_t t0 = now_ns();
		if (pread(fd, buf, sizeof(buf), 0) < 0) {
			perror("pread");
			return 1;
		}
		int64_t took = now_ns() - t0;
		reads++;
		if (took > max)
			max = took;
		if (took > mark_us * 1000LL) {
			late++;
			trace_mark(marker, "irq_app late %lld seq %ld", (long long)(took / 1000), reads);
		}
		/* the next deadline after now: a late read skips the ones it overran */
		int64_t t1 = now_ns();
		do
			next += period;
		while (next <= t1);
	}
	fprintf(stderr, "irq_app: pid %d cpu %ld prio %ld: %ld reads, max %lld us, %ld later than %ld us\n",
		(int)getpid(), cpu, prio, reads, (long long)(max / 1000), late, mark_us);
	return 0;
}
