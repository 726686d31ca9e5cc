// SPDX-License-Identifier: GPL-2.0
/*
 * The bound kthread behind the worker injectors. A thread lives for one
 * request: it runs COUNT sections and exits. Its task_struct stays
 * referenced so the next request (or module exit) can reap it with
 * kthread_stop() even after it returned on its own.
 */
#include <linux/err.h>
#include <linux/kthread.h>
#include <linux/sched/task.h>

#include "worker.h"

static int noise_worker_fn(void *data)
{
	struct noise_injector *inj = data;
	struct noise_worker *w = inj->priv;

	/* Stopped early or not, the run is over either way. */
	noise_run_paced(inj, w->section);
	noise_finish(inj);
	return 0;
}

static void noise_worker_reap(struct noise_worker *w)
{
	if (!w->task)
		return;
	kthread_stop_put(w->task);
	w->task = NULL;
}

static int noise_worker_start(struct noise_injector *inj)
{
	struct noise_worker *w = inj->priv;
	struct task_struct *t;

	/* running was idle, so the previous thread is finished or never was. */
	noise_worker_reap(w);
	t = kthread_create(noise_worker_fn, inj, "noise_%s/%u", inj->name,
			   inj->req.cpu);
	if (IS_ERR(t))
		return PTR_ERR(t);
	kthread_bind(t, inj->req.cpu);
	get_task_struct(t);
	w->task = t;
	wake_up_process(t);
	return 0;
}

static void noise_worker_stop(struct noise_injector *inj)
{
	struct noise_worker *w = inj->priv;

	noise_worker_reap(w);
	if (w->teardown)
		w->teardown();
	/* A thread stopped before it ran never reached noise_finish(). */
	noise_finish(inj);
}

const struct noise_ops noise_worker_ops = {
	.start = noise_worker_start,
	.stop = noise_worker_stop,
};
