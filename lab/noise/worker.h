/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Injectors whose sections run in a kthread bound to the target CPU
 * (irqs_off, preempt_off, softirq, printk) differ only in what one section
 * does; the thread, its pacing and its lifetime are shared.
 */
#ifndef RTSLEUTH_NOISE_WORKER_H
#define RTSLEUTH_NOISE_WORKER_H

#include "noise.h"

struct task_struct;

struct noise_worker {
	/* Runs one section on the bound CPU, from the kthread. */
	void (*section)(struct noise_injector *inj);
	/* Optional: releases what sections left behind, once the thread is gone. */
	void (*teardown)(void);
	struct task_struct *task;	/* referenced until reaped */
};

extern const struct noise_ops noise_worker_ops;

#define NOISE_WORKER_INJECTOR(_var, _name, _section, _teardown)	\
	static struct noise_worker _var##_worker = {			\
		.section = _section,					\
		.teardown = _teardown,					\
	};								\
	struct noise_injector _var = {					\
		.name = _name,						\
		.ops = &noise_worker_ops,				\
		.priv = &_var##_worker,					\
	}

#endif
