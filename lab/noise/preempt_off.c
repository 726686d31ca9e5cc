// SPDX-License-Identifier: GPL-2.0
/*
 * preempt_off: interrupts keep flowing (the victim is woken on time) but
 * the scheduler cannot switch to it until the section ends: need-resched is
 * set while the preempt depth is non-zero.
 */
#include <linux/preempt.h>

#include "worker.h"

static void preempt_off_section(struct noise_injector *inj)
{
	preempt_disable();
	noise_spin(inj);
	preempt_enable();
}

NOISE_WORKER_INJECTOR(noise_preempt_off, "preempt_off", preempt_off_section, NULL);
