/*
 * pipe_chain - a two-link wake chain with a known start: a timer-driven
 * producer wakes a consumer through a pipe.
 *
 * Usage:
 *   pipe_chain --producer-cpu N --producer-prio P --consumer-cpu M
 *              --consumer-prio Q --period-us T --duration-s D [--mark-us U]
 *
 * The producer thread (comm "producer") is pinned to CPU N at SCHED_FIFO P.
 * Every T microseconds (absolute clock_nanosleep deadlines on CLOCK_MONOTONIC)
 * it writes that deadline, 8 bytes, to a pipe. The consumer thread (comm
 * "consumer"), pinned to CPU M at SCHED_FIFO Q, blocks in read() on the pipe;
 * each read gives the deadline that started the chain, so the consumer
 * measures its own chain latency: the time it returned from read() minus
 * that deadline. A read later than U us (default 1000) writes
 *   "pipe_chain late <latency_us> due <deadline_ns> seq <n>"
 * to /sys/kernel/tracing/trace_marker (best effort), the chain's start in the
 * trace's own terms when the trace clock is mono. At the end it prints the
 * number of reads, the maximum latency and how many were later than U.
 *
 * Safety: bounded by --duration-s; the producer sleeps between writes and the
 * consumer only blocks, so neither can starve its CPU.
 *
 * Build:  gcc -O2 -Wall -pthread -o pipe_chain pipe_chain.c
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "../common/mono_clock.h"
#include "../common/rt_task.h"
#include "../common/trace_mark.h"

struct opts {
	long producer_cpu, producer_prio, consumer_cpu, consumer_prio;
	long period_us, duration_s, mark_us;
};

static struct opts o = { -1, -1, -1, -1, -1, -1, 1000 };
static int pipe_fd[2];
static int64_t end_ns;

static void *producer(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "producer");
	if (rt_task_enter(o.producer_cpu, o.producer_prio))
		exit(1);
	int64_t deadline = now_ns() + o.period_us * 1000;
	while (deadline < end_ns) {
		sleep_until(deadline);
		if (write(pipe_fd[1], &deadline, sizeof(deadline)) != sizeof(deadline)) {
			perror("write");
			exit(1);
		}
		deadline += o.period_us * 1000;
	}
	close(pipe_fd[1]);
	return NULL;
}

static void *consumer(void *arg)
{
	long *late = arg;
	prctl(PR_SET_NAME, "consumer");
	if (rt_task_enter(o.consumer_cpu, o.consumer_prio))
		exit(1);
	int marker = trace_mark_open();
	long reads = 0;
	int64_t max = 0, deadline;
	while (read(pipe_fd[0], &deadline, sizeof(deadline)) == sizeof(deadline)) {
		int64_t latency = now_ns() - deadline;
		reads++;
		if (latency > max)
			max = latency;
		if (latency > o.mark_us * 1000) {
			(*late)++;
			trace_mark(marker, "pipe_chain late %lld due %lld seq %ld",
				   (long long)(latency / 1000), (long long)deadline, reads);
		}
	}
	printf("pipe_chain: %ld reads, max %lld us, %ld later than %ld us\n", reads,
	       (long long)(max / 1000), *late, o.mark_us);
	return NULL;
}

static void usage(const char *argv0)
{
	fprintf(stderr,
		"usage: %s --producer-cpu N --producer-prio P --consumer-cpu M --consumer-prio Q\n"
		"          --period-us T --duration-s D [--mark-us U]\n",
		argv0);
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "producer-cpu", required_argument, 0, 'a' },
		{ "producer-prio", required_argument, 0, 'b' },
		{ "consumer-cpu", required_argument, 0, 'c' },
		{ "consumer-prio", required_argument, 0, 'd' },
		{ "period-us", required_argument, 0, 'e' },
		{ "duration-s", required_argument, 0, 'f' },
		{ "mark-us", required_argument, 0, 'g' },
		{ 0, 0, 0, 0 },
	};
	long *fields[] = { &o.producer_cpu, &o.producer_prio, &o.consumer_cpu,
			   &o.consumer_prio, &o.period_us, &o.duration_s, &o.mark_us };
	int c;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c < 'a' || c > 'g')
			usage(argv[0]);
		*fields[c - 'a'] = atol(optarg);
	}
	if (o.producer_cpu < 0 || o.consumer_cpu < 0 || o.producer_prio < 1 || o.producer_prio > 99 ||
	    o.consumer_prio < 1 || o.consumer_prio > 99 || o.period_us < 100 ||
	    o.duration_s < 1 || o.duration_s > 3600 || o.mark_us < 0)
		usage(argv[0]);
	if (pipe(pipe_fd)) {
		perror("pipe");
		return 1;
	}
	end_ns = now_ns() + o.duration_s * NSEC_PER_SEC;
	long late = 0;
	pthread_t p, q;
	if (pthread_create(&q, NULL, consumer, &late) || pthread_create(&p, NULL, producer, NULL)) {
		fprintf(stderr, "pthread_create failed\n");
		return 1;
	}
	pthread_join(p, NULL);
	pthread_join(q, NULL);
	return 0;
}
