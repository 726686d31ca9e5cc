/*
 * The decode floor of trace-cmd's own library: every record of a trace.dat, all CPUs merged
 * in time order by libtracecmd's iterator, touching only each record's timestamp and event
 * type, with no formatting. bench/tracedat.sh times rtsleuth next to it, a fairer peer than
 * `trace-cmd report`, which prints every event as text.
 *
 * Build: gcc -O2 bench/tracecmd_floor.c $(pkg-config --cflags --libs libtracecmd)
 *        (Debian: libtracecmd-dev libtracefs-dev libtraceevent-dev)
 * Usage: tracecmd_floor FILE.dat   prints "<records> records, checksum <x>"
 */
#include <stdio.h>
#include <trace-cmd.h>

struct tally {
	struct tep_handle *tep;
	unsigned long long records;
	unsigned long long checksum;
};

/* Touches what any analysis needs first: when, and which event; the sum keeps the compiler
 * from dropping the reads. */
static int touch(struct tracecmd_input *handle, struct tep_record *record, int cpu, void *data)
{
	struct tally *t = data;

	(void)handle;
	(void)cpu;
	t->records++;
	t->checksum += record->ts ^ (unsigned long long)tep_data_type(t->tep, record);
	return 0;
}

int main(int argc, char **argv)
{
	struct tracecmd_input *handle;
	struct tally t = { 0 };

	if (argc != 2) {
		fprintf(stderr, "usage: %s FILE.dat\n", argv[0]);
		return 2;
	}
	handle = tracecmd_open(argv[1], 0);
	if (!handle) {
		fprintf(stderr, "%s: libtracecmd cannot open it\n", argv[1]);
		return 1;
	}
	t.tep = tracecmd_get_tep(handle);
	if (tracecmd_iterate_events(handle, NULL, 0, touch, &t) < 0) {
		fprintf(stderr, "%s: iterating the records failed\n", argv[1]);
		tracecmd_close(handle);
		return 1;
	}
	printf("%llu records, checksum %llx\n", t.records, t.checksum);
	tracecmd_close(handle);
	return 0;
}
