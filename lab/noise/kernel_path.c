// SPDX-License-Identifier: GPL-2.0
/*
 * kernel_path: the writer itself burns the time inside write(), in plain
 * kernel code with preemption enabled and no cond_resched(). On
 * PREEMPT_NONE/VOLUNTARY nothing can switch away from it until it returns
 * to user space, so an RT task woken on this CPU waits with no IRQ,
 * softirq or preempt-off section to blame; on PREEMPT/RT it is preempted at
 * once. Unlike the other injectors the write blocks until the run is done.
 */
#include <linux/errno.h>
#include <linux/sched.h>
#include <linux/smp.h>

#include "noise.h"

static void kernel_path_section(struct noise_injector *inj)
{
	noise_spin(inj);
}

/*
 * The writer must be pinned (taskset -c CPU) to the requested CPU: a section
 * that migrated half-way would blame the wrong CPU.
 */
static int kernel_path_check(const struct noise_request *req)
{
	if (current->nr_cpus_allowed != 1 ||
	    raw_smp_processor_id() != req->cpu)
		return -EINVAL;
	return 0;
}

static int kernel_path_start(struct noise_injector *inj)
{
	int err = noise_run_paced(inj, kernel_path_section);

	noise_finish(inj);
	return err;
}

static const struct noise_ops kernel_path_ops = {
	.check = kernel_path_check,
	.start = kernel_path_start,
	/* No stop: module exit wakes and drains writers through procfs. */
};

struct noise_injector noise_kernel_path = {
	.name = "kernel_path",
	.ops = &kernel_path_ops,
};
