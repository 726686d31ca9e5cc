/*
 * trace_mark.h - best-effort lines in the trace (`trace_marker`), which is how a lab
 * injector tells the trace reader what it did or measured. Without tracefs the injector
 * still runs: it only says so once.
 * Header-only so each injector still builds from one `gcc` line.
 */
#ifndef RTSLEUTH_LAB_TRACE_MARK_H
#define RTSLEUTH_LAB_TRACE_MARK_H

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

/* The trace_marker file, or -1 after saying why not. */
static inline int trace_mark_open(void)
{
	int fd = open("/sys/kernel/tracing/trace_marker", O_WRONLY);
	if (fd < 0)
		perror("open trace_marker (continuing without marks)");
	return fd;
}

/* One formatted line into `fd`, if it is open; a failed write (tracing off) is ignored. */
static inline void trace_mark(int fd, const char *fmt, ...)
{
	if (fd < 0)
		return;
	char line[160];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n > 0 && write(fd, line, n < (int)sizeof(line) ? n : (int)sizeof(line) - 1) < 0) {
		/* best effort */
	}
}

#endif
