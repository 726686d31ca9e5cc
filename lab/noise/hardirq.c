// SPDX-License-Identifier: GPL-2.0
/*
 * hardirq: an hrtimer callback that busy-waits. HRTIMER_MODE_ABS_PINNED_HARD
 * keeps the callback in hard-IRQ context on PREEMPT_RT too (where plain
 * hrtimers are moved to softirq) and on the CPU that armed it, so the
 * section sits inside hrtimer_expire_entry/exit of the local timer
 * interrupt on the requested CPU.
 */
#include <linux/hrtimer.h>
#include <linux/smp.h>
#include <linux/timekeeping.h>

#include "noise.h"

/* Sections already due when the timer is armed; shared by start and callback. */
static u32 hardirq_left;
static struct hrtimer hardirq_timer;

/* First section shortly after the write, not inside the arming IPI. */
#define HARDIRQ_FIRST_DELAY_NS	NSEC_PER_MSEC

static enum hrtimer_restart hardirq_fire(struct hrtimer *t)
{
	u64 start = ktime_to_ns(hrtimer_get_expires(t));

	noise_spin(&noise_hardirq);
	if (--hardirq_left == 0) {
		noise_finish(&noise_hardirq);
		return HRTIMER_NORESTART;
	}
	hrtimer_set_expires(t, ns_to_ktime(noise_next_start(start,
					noise_hardirq.req.period_ms)));
	return HRTIMER_RESTART;
}

/* Runs on the target CPU (IPI) because a pinned hrtimer stays where armed. */
static void hardirq_arm_here(void *unused)
{
	hrtimer_start(&hardirq_timer,
		      ns_to_ktime(ktime_get_ns() + HARDIRQ_FIRST_DELAY_NS),
		      HRTIMER_MODE_ABS_PINNED_HARD);
}

static int hardirq_start(struct noise_injector *inj)
{
	/*
	 * The previous run's callback may still be returning on another CPU;
	 * arming it then would leave it on that CPU's base.
	 */
	hrtimer_cancel(&hardirq_timer);
	hardirq_left = inj->req.count;
	return smp_call_function_single(inj->req.cpu, hardirq_arm_here, NULL, 1);
}

static void hardirq_stop(struct noise_injector *inj)
{
	hrtimer_cancel(&hardirq_timer);
	noise_finish(inj);
}

static void hardirq_init(struct noise_injector *inj)
{
	hrtimer_init(&hardirq_timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS_PINNED_HARD);
	hardirq_timer.function = hardirq_fire;
}

static const struct noise_ops hardirq_ops = {
	.init = hardirq_init,
	.start = hardirq_start,
	.stop = hardirq_stop,
};

struct noise_injector noise_hardirq = {
	.name = "hardirq",
	.ops = &hardirq_ops,
};
