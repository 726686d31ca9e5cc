/*
 * rt_task.h - the setup every lab load injector does before its timed loop.
 *
 * Pins the calling thread to one CPU, locks its memory so page faults do not
 * stretch what it measures or injects (best effort), and makes it SCHED_FIFO
 * (rt_task_enter) or the given real-time policy, SCHED_FIFO or SCHED_RR
 * (rt_task_enter_policy), at the given priority. Returns 0, or 1 after
 * printing why it failed.
 * Header-only so each injector still builds from one `gcc` line.
 */
#ifndef RTSLEUTH_LAB_RT_TASK_H
#define RTSLEUTH_LAB_RT_TASK_H

#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <sys/mman.h>

static int rt_task_enter_policy(long cpu, long prio, int policy)
{
	if (policy != SCHED_FIFO && policy != SCHED_RR) {
		fprintf(stderr, "rt_task_enter_policy: only SCHED_FIFO or SCHED_RR\n");
		return 1;
	}
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		perror("sched_setaffinity");
		return 1;
	}
	if (mlockall(MCL_CURRENT | MCL_FUTURE))
		perror("mlockall (continuing)");
	struct sched_param sp = { .sched_priority = (int)prio };
	if (sched_setscheduler(0, policy, &sp)) {
		perror("sched_setscheduler");
		return 1;
	}
	return 0;
}

static inline int rt_task_enter(long cpu, long prio)
{
	return rt_task_enter_policy(cpu, prio, SCHED_FIFO);
}

#endif
