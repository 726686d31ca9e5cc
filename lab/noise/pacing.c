// SPDX-License-Identifier: GPL-2.0
/*
 * Pacing between sections and the module-wide stop signal. Sleeping
 * contexts (the bound kthreads and the kernel_path writer) wait here, so
 * module exit can wake every one of them at once instead of waiting out a
 * period of up to NOISE_MAX_PERIOD_MS.
 */
#include <linux/errno.h>
#include <linux/kthread.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/timekeeping.h>
#include <linux/wait.h>

#include "noise.h"

static DECLARE_WAIT_QUEUE_HEAD(noise_stop_wq);
static bool noise_stopping;

/* The CPU always gets at least this much rest between two sections. */
#define NOISE_MIN_GAP_NS	NSEC_PER_MSEC

void noise_finish(struct noise_injector *inj)
{
	atomic_set(&inj->running, 0);
}

/*
 * Sections start PERIOD apart, but never closer than NOISE_MIN_GAP_NS after
 * the previous one ended: with US >= PERIOD a back-to-back train of
 * irqs-off sections would otherwise starve the watchdogs for up to
 * COUNT * US = 100 s.
 */
u64 noise_next_start(u64 prev_start_ns, u32 period_ms)
{
	u64 next = prev_start_ns + (u64)period_ms * NSEC_PER_MSEC;
	u64 floor = ktime_get_ns() + NOISE_MIN_GAP_NS;

	return next > floor ? next : floor;
}

bool noise_should_stop(void)
{
	if (READ_ONCE(noise_stopping))
		return true;
	if (current->flags & PF_KTHREAD)
		return kthread_should_stop();
	/* kernel_path's writer: Ctrl-C or a kill ends its run early. */
	return signal_pending(current);
}

/* Sleeps until @start_ns; false when the caller must stop instead. */
bool noise_pause_until(u64 start_ns)
{
	s64 left = (s64)(start_ns - ktime_get_ns());

	if (left > 0)
		wait_event_interruptible_hrtimeout(noise_stop_wq,
						   noise_should_stop(),
						   ns_to_ktime(left));
	return !noise_should_stop();
}

void noise_stop_all_waiters(void)
{
	WRITE_ONCE(noise_stopping, true);
	wake_up_all(&noise_stop_wq);
}

/*
 * Runs COUNT sections, each started by @section on the current context and
 * CPU; -EINTR when a stop request cut the run short.
 */
int noise_run_paced(struct noise_injector *inj,
		    void (*section)(struct noise_injector *inj))
{
	u64 start = ktime_get_ns();
	u32 i;

	for (i = 0; i < inj->req.count; i++) {
		if (i) {
			start = noise_next_start(start, inj->req.period_ms);
			if (!noise_pause_until(start))
				return -EINTR;
		}
		section(inj);
	}
	return 0;
}
