// SPDX-License-Identifier: GPL-2.0
/*
 * rtsleuth_noise: known latency causes on demand, each bracketed in the
 * trace by noise_begin/noise_end, so rtsleuth's verdicts can be checked
 * against ground truth. This file is the /proc/rtsleuth_noise/ plumbing:
 * parsing "CPU US [PERIOD_MS [COUNT]]", one run per injector at a time,
 * state on read, and an exit that stops everything.
 */
#include <linux/cpumask.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "noise.h"

static struct noise_injector *const noise_injectors[] = {
	&noise_hardirq,
	&noise_irqs_off,
	&noise_preempt_off,
	&noise_softirq,
	&noise_printk,
	&noise_kernel_path,
};

static struct proc_dir_entry *noise_dir;

/* "CPU US [PERIOD_MS [COUNT]]": every field a plain decimal, nothing else. */
static int noise_parse(char *text, struct noise_request *req)
{
	u32 field[4] = { 0, 0, NOISE_DEFAULT_PERIOD_MS, 1 };
	char *cur = strim(text);
	char *tok;
	int n = 0;

	while ((tok = strsep(&cur, " \t")) != NULL) {
		if (!*tok)
			continue;	/* runs of blanks */
		if (n == ARRAY_SIZE(field) || kstrtou32(tok, 10, &field[n]))
			return -EINVAL;
		n++;
	}
	if (n < 2)
		return -EINVAL;

	req->cpu = field[0];
	req->us = field[1];
	req->period_ms = field[2];
	req->count = field[3];
	if (req->cpu >= nr_cpu_ids || !cpu_online(req->cpu) ||
	    !req->us || req->us > NOISE_MAX_US ||
	    !req->period_ms || req->period_ms > NOISE_MAX_PERIOD_MS ||
	    !req->count || req->count > NOISE_MAX_COUNT)
		return -EINVAL;
	return 0;
}

static ssize_t noise_write(struct file *file, const char __user *ubuf,
			   size_t len, loff_t *pos)
{
	struct noise_injector *inj = pde_data(file_inode(file));
	struct noise_request req;
	char buf[64];
	int err;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	err = noise_parse(buf, &req);
	if (!err && inj->ops->check)
		err = inj->ops->check(&req);
	if (err)
		return err;

	if (atomic_cmpxchg(&inj->running, 0, 1))
		return -EBUSY;
	inj->req = req;
	err = inj->ops->start(inj);
	if (err) {
		noise_finish(inj);
		return err;
	}
	return len;
}

static int noise_show(struct seq_file *m, void *unused)
{
	struct noise_injector *inj = m->private;

	seq_printf(m, "state: %s\n",
		   atomic_read(&inj->running) ? "running" : "idle");
	seq_printf(m, "done: %d\n", atomic_read(&inj->done));
	seq_printf(m, "last_actual_ns: %lld\n",
		   (long long)atomic64_read(&inj->last_ns));
	seq_printf(m, "request: cpu=%u us=%u period_ms=%u count=%u\n",
		   inj->req.cpu, inj->req.us, inj->req.period_ms,
		   inj->req.count);
	return 0;
}

static int noise_open(struct inode *inode, struct file *file)
{
	return single_open(file, noise_show, pde_data(inode));
}

static const struct proc_ops noise_proc_ops = {
	.proc_open = noise_open,
	.proc_read = seq_read,
	.proc_lseek = seq_lseek,
	.proc_release = single_release,
	.proc_write = noise_write,
};

static int __init noise_init(void)
{
	size_t i;

	noise_dir = proc_mkdir("rtsleuth_noise", NULL);
	if (!noise_dir)
		return -ENOMEM;
	for (i = 0; i < ARRAY_SIZE(noise_injectors); i++) {
		struct noise_injector *inj = noise_injectors[i];

		if (inj->ops->init)
			inj->ops->init(inj);
		if (!proc_create_data(inj->name, 0600, noise_dir,
				      &noise_proc_ops, inj)) {
			proc_remove(noise_dir);
			return -ENOMEM;
		}
	}
	return 0;
}

static void __exit noise_exit(void)
{
	size_t i;

	/* Wake sleeping writers first: proc_remove() waits for them to leave. */
	noise_stop_all_waiters();
	proc_remove(noise_dir);
	for (i = 0; i < ARRAY_SIZE(noise_injectors); i++)
		if (noise_injectors[i]->ops->stop)
			noise_injectors[i]->ops->stop(noise_injectors[i]);
}

module_init(noise_init);
module_exit(noise_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("rtsleuth lab: on-demand latency noise with trace ground truth");
