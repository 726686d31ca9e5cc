// SPDX-License-Identifier: GPL-2.0
/*
 * irqs_off: interrupts disabled on the CPU for the whole section, so the
 * victim's timer interrupt is held pending and fires late — the "blind zone"
 * cause with no IRQ events inside it.
 */
#include <linux/irqflags.h>

#include "worker.h"

static void irqs_off_section(struct noise_injector *inj)
{
	local_irq_disable();
	noise_spin(inj);
	local_irq_enable();
}

NOISE_WORKER_INJECTOR(noise_irqs_off, "irqs_off", irqs_off_section, NULL);
