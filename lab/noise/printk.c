// SPDX-License-Identifier: GPL-2.0
/*
 * printk: a burst of console lines from a bound kthread. US is the time
 * budget of the burst: lines are emitted until US has passed (or
 * PRINTK_MAX_LINES were sent), so on a kernel that prints synchronously the
 * section lasts about US of console time.
 *
 * Where the time goes differs by kernel (see README): without PREEMPT_RT
 * each printk() writes its record to the serial console from this thread
 * with preemption disabled, and the serial driver holds interrupts off
 * while it emits a record; on PREEMPT_RT printk() only stores the record
 * and a printer thread does the console work later.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/printk.h>

#include "worker.h"

/*
 * Bounds the burst where printk() is only a buffer store and US would
 * otherwise be spent filling the log buffer.
 */
#define PRINTK_MAX_LINES	200

/* Long lines make each serial record, and its irqs-off stretch, longer. */
#define PRINTK_FILLER \
	"................................................................" \
	"................................................................"

static void printk_section(struct noise_injector *inj)
{
	struct noise_section s;
	u32 line = 0;

	noise_section_begin(inj, &s);
	while (line < PRINTK_MAX_LINES && !noise_section_elapsed(&s, inj->req.us))
		/*
		 * Error level so a `quiet` or loglevel=4 boot still sends the
		 * burst to the console, which is the whole point.
		 */
		pr_err("seq %llu line %u %s\n", s.seq, ++line, PRINTK_FILLER);
	noise_section_end(inj, &s);
}

NOISE_WORKER_INJECTOR(noise_printk, "printk", printk_section, NULL);
