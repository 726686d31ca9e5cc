// SPDX-License-Identifier: GPL-2.0
/*
 * softirq: a tasklet whose handler busy-waits, so the section shows up
 * between softirq_entry and softirq_exit (vec=6 TASKLET).
 *
 * The bound kthread schedules it under local_bh_disable(): a tasklet runs on
 * the CPU that scheduled it, and the closing local_bh_enable() then runs the
 * pending softirq right there instead of leaving it to ksoftirqd. What that
 * means on PREEMPT_RT is described in the README.
 */
#include <linux/completion.h>
#include <linux/interrupt.h>
#include <linux/jiffies.h>

#include "worker.h"

static void softirq_handler(struct tasklet_struct *t);

/* The static form of tasklet_setup(): ready before any write can arrive. */
static DECLARE_TASKLET(softirq_tasklet, softirq_handler);
static DECLARE_COMPLETION(softirq_ran);

static void softirq_section(struct noise_injector *inj)
{
	reinit_completion(&softirq_ran);
	local_bh_disable();
	tasklet_schedule(&softirq_tasklet);
	local_bh_enable();
	/*
	 * Wait for the handler so sections never overlap even where it was
	 * deferred; bounded so a lost run cannot wedge the thread.
	 */
	wait_for_completion_timeout(&softirq_ran, HZ);
}

static void softirq_teardown(void)
{
	tasklet_kill(&softirq_tasklet);
}

NOISE_WORKER_INJECTOR(noise_softirq, "softirq", softirq_section,
		      softirq_teardown);

static void softirq_handler(struct tasklet_struct *t)
{
	noise_spin(&noise_softirq);
	complete(&softirq_ran);
}
