/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared model of an injector: one /proc control file, one request at a
 * time, and the bookkeeping every injector needs (running flag, counters).
 */
#ifndef RTSLEUTH_NOISE_H
#define RTSLEUTH_NOISE_H

#include <linux/atomic.h>
#include <linux/types.h>
#include <linux/wait.h>

/* Caps keep every busy section and every run bounded, whatever is written. */
#define NOISE_MAX_US		100000U
#define NOISE_MAX_COUNT		1000U
#define NOISE_MAX_PERIOD_MS	10000U
#define NOISE_DEFAULT_PERIOD_MS	100U

struct noise_request {
	unsigned int cpu;
	u32 us;
	u32 period_ms;
	u32 count;
};

struct noise_injector;

struct noise_ops {
	/* Optional: sets up the mechanism once, at module load. */
	void (*init)(struct noise_injector *inj);
	/* Optional: rejects a request the writer's context cannot serve. */
	int (*check)(const struct noise_request *req);
	/*
	 * Starts @inj->req. Called with @inj->running already claimed; an
	 * asynchronous injector calls noise_finish() when its last section is
	 * done, a synchronous one before returning.
	 */
	int (*start)(struct noise_injector *inj);
	/*
	 * Optional: stops any activity and waits for it; called once, at
	 * module exit, after the control files are gone.
	 */
	void (*stop)(struct noise_injector *inj);
};

struct noise_injector {
	const char *name;
	const struct noise_ops *ops;
	struct noise_request req;
	atomic_t running;
	atomic_t done;		/* sections completed since load */
	atomic64_t last_ns;	/* measured length of the latest section */
	void *priv;		/* the injector's own mechanism (timer, kthread) */
};

/* One busy section as recorded in the trace (noise_begin .. noise_end). */
struct noise_section {
	u64 seq;
	u64 start_ns;
	int cpu;
};

void noise_section_begin(struct noise_injector *inj, struct noise_section *s);
bool noise_section_elapsed(const struct noise_section *s, u32 us);
u64 noise_section_end(struct noise_injector *inj, const struct noise_section *s);
u64 noise_spin(struct noise_injector *inj);

void noise_finish(struct noise_injector *inj);

/* Pacing between sections, shared by the kthreads and kernel_path. */
u64 noise_next_start(u64 prev_start_ns, u32 period_ms);
bool noise_should_stop(void);
bool noise_pause_until(u64 start_ns);
void noise_stop_all_waiters(void);
int noise_run_paced(struct noise_injector *inj,
		    void (*section)(struct noise_injector *inj));

extern struct noise_injector noise_hardirq;
extern struct noise_injector noise_irqs_off;
extern struct noise_injector noise_preempt_off;
extern struct noise_injector noise_softirq;
extern struct noise_injector noise_printk;
extern struct noise_injector noise_kernel_path;

#endif
