/*
 * random_sleeper - a SCHED_FIFO task with a strict 2 ms rhythm broken by
 * random long sleeps.
 *
 * Usage:
 *   random_sleeper --cpu N --prio P --duration-s D [--seed S]
 *                  [--wakes W] [--period-us T] [--min-sleep-ms A] [--max-sleep-ms B]
 *
 * The program
 *   1. pins itself to CPU N (sched_setaffinity),
 *   2. locks its memory (mlockall),
 *   3. switches itself to SCHED_FIFO priority P,
 *   4. repeats a "burst": W wake-ups (default 20) every T us (default 2000),
 *      on absolute CLOCK_MONOTONIC clock_nanosleep deadlines, then one sleep
 *      of a random length drawn uniformly from [A, B] ms (default 1-400 ms,
 *      microsecond resolution), also to an absolute deadline; the next
 *      burst's deadlines continue from the end of that sleep,
 *   5. stops at the first deadline that is past D seconds after its start.
 *
 * A tool that infers "when was this task due" from the 2 ms rhythm must not
 * call the wake-up after a long random sleep late: the task asked for it.
 *
 * Each wake-up does nothing but read the clock (to measure its own lateness
 * = wake time - deadline); there is no busy work and no trace marker, so a
 * trace shows only the scheduler's view (sched_waking, sched_switch ...).
 *
 * Safety: the total run time is bounded by --duration-s (max 3600) and the
 * program never spins. On exit it prints to stderr:
 *   random_sleeper: pid X cpu N prio P seed S: K bursts, M wake-ups,
 *                   max lateness L us
 *
 * Build:  gcc -O2 -Wall -o random_sleeper random_sleeper.c
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "../common/mono_clock.h"
#include "../common/rt_task.h"

/* sleep until absolute CLOCK_MONOTONIC time `at_ns`; returns lateness in ns */
static int64_t sleep_lateness(int64_t at_ns)
{
	sleep_until(at_ns);
	return now_ns() - at_ns;
}

/* xorshift64*: small, seedable, no libc state */
static uint64_t rng_state;
static uint64_t rng_next(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1DULL;
}

static void usage(const char *argv0)
{
	fprintf(stderr,
		"usage: %s --cpu N --prio P --duration-s D [--seed S] [--wakes W] [--period-us T]\n"
		"          [--min-sleep-ms A] [--max-sleep-ms B]\n",
		argv0);
	exit(2);
}

int main(int argc, char **argv)
{
	long cpu = -1, prio = -1, duration_s = -1, wakes = 20, period_us = 2000;
	long min_sleep_ms = 1, max_sleep_ms = 400;
	unsigned long long seed = 0;
	static const struct option opts[] = {
		{ "cpu", required_argument, NULL, 'c' },
		{ "prio", required_argument, NULL, 'p' },
		{ "duration-s", required_argument, NULL, 'd' },
		{ "seed", required_argument, NULL, 's' },
		{ "wakes", required_argument, NULL, 'w' },
		{ "period-us", required_argument, NULL, 't' },
		{ "min-sleep-ms", required_argument, NULL, 'a' },
		{ "max-sleep-ms", required_argument, NULL, 'b' },
		{ NULL, 0, NULL, 0 },
	};
	int o;

	while ((o = getopt_long(argc, argv, "c:p:d:s:w:t:a:b:", opts, NULL)) != -1) {
		switch (o) {
		case 'c': cpu = strtol(optarg, NULL, 10); break;
		case 'p': prio = strtol(optarg, NULL, 10); break;
		case 'd': duration_s = strtol(optarg, NULL, 10); break;
		case 's': seed = strtoull(optarg, NULL, 10); break;
		case 'w': wakes = strtol(optarg, NULL, 10); break;
		case 't': period_us = strtol(optarg, NULL, 10); break;
		case 'a': min_sleep_ms = strtol(optarg, NULL, 10); break;
		case 'b': max_sleep_ms = strtol(optarg, NULL, 10); break;
		default: usage(argv[0]);
		}
	}
	if (cpu < 0 || prio < 1 || prio > 99 || duration_s < 1 || duration_s > 3600 ||
	    wakes < 1 || wakes > 100000 || period_us < 100 || period_us > 10000000 ||
	    min_sleep_ms < 1 || max_sleep_ms < min_sleep_ms || max_sleep_ms > 60000)
		usage(argv[0]);
	if (seed == 0)
		seed = (unsigned long long)now_ns() ^ ((unsigned long long)getpid() << 32);
	rng_state = seed ? seed : 1;

	/* 1-3. pinned, memory locked, SCHED_FIFO */
	if (rt_task_enter(cpu, prio))
		return 1;

	const int64_t period_ns = period_us * 1000LL;
	const int64_t min_sleep_ns = min_sleep_ms * 1000000LL;
	const int64_t span_us = (max_sleep_ms - min_sleep_ms) * 1000LL + 1;
	const int64_t start = now_ns();
	const int64_t end = start + duration_s * NSEC_PER_SEC;
	int64_t next = start, late, max_late = 0;
	long bursts = 0, woken = 0;

	for (;;) {
		/* 4a. W wake-ups on the strict rhythm */
		long i;
		for (i = 0; i < wakes; i++) {
			next += period_ns;
			if (next >= end)
				goto done; /* 5. bounded total duration */
			late = sleep_lateness(next);
			if (late > max_late)
				max_late = late;
			woken++;
		}
		bursts++;
		/* 4b. one random long sleep (deadline-based too) */
		next += min_sleep_ns + (int64_t)(rng_next() % (uint64_t)span_us) * 1000LL;
		if (next >= end)
			break;
		late = sleep_lateness(next);
		if (late > max_late)
			max_late = late;
		woken++;
	}
done:
	fprintf(stderr,
		"random_sleeper: pid %d cpu %ld prio %ld seed %llu: %ld bursts, %ld wake-ups, "
		"max lateness %lld us\n",
		(int)getpid(), cpu, prio, seed, bursts, woken, (long long)(max_late / 1000));
	return 0;
}
