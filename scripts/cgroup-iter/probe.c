// fairshare agent, measurement only: loads one program of counters.bpf.c, checks that the
// iterator's values are the files' values, then times, after the same pause each round, one
// iterator read of every child's counter against one pread() of each child's (kept open) file.
// Usage: probe memory|cpu PARENT_DIR PAUSE_MS ROUNDS
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct row { unsigned long long id, value; };
struct child { unsigned long long id; int fd; };

static double micros(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int die(const char *what)
{
	perror(what);
	exit(1);
}

/* One pass of the iterator into buf; the number of rows. */
static int iterate(struct bpf_link *link, char *buf, size_t cap)
{
	int fd = bpf_iter_create(bpf_link__fd(link));
	size_t n = 0;
	ssize_t r;

	if (fd < 0)
		die("bpf_iter_create");
	while ((r = read(fd, buf + n, cap - n)) > 0)
		n += r;
	if (r < 0)
		die("read of the iterator (over about 2,000 children its one 32 KiB buffer overflows)");
	close(fd);
	return n / sizeof(struct row);
}

static unsigned long long pread_value(int fd)
{
	char text[64] = { 0 };

	if (pread(fd, text, sizeof(text) - 1, 0) < 0)
		die("pread");
	return strtoull(text, NULL, 10);
}

/* The parent's children: cgroup id (the directory's inode) and the counter file, kept open. */
static int children(const char *parent, const char *file, struct child *out, int cap)
{
	DIR *d = opendir(parent);
	struct dirent *e;
	int n = 0;

	if (!d)
		die(parent);
	while ((e = readdir(d)) && n < cap) {
		char path[4096];
		struct stat st;

		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", parent, e->d_name);
		if (stat(path, &st))
			die(path);
		snprintf(path, sizeof(path), "%s/%s/%s", parent, e->d_name, file);
		out[n].id = st.st_ino;
		out[n].fd = open(path, O_RDONLY);
		if (out[n].fd < 0)
			die(path);
		n++;
	}
	closedir(d);
	return n;
}

static struct bpf_link *attach(const char *kind, const char *parent)
{
	const char *prog = strcmp(kind, "cpu") ? "memory_usage" : "cpu_usage";
	struct bpf_object *obj = bpf_object__open_file("counters.bpf.o", NULL);
	struct bpf_program *p;
	unsigned int cpus = libbpf_num_possible_cpus();
	union bpf_iter_link_info info = { 0 };
	struct bpf_link *link;
	size_t size;

	if (!obj)
		die("counters.bpf.o");
	bpf_object__for_each_program(p, obj)
		bpf_program__set_autoload(p, !strcmp(bpf_program__name(p), prog));
	memcpy((void *)bpf_map__initial_value(bpf_object__find_map_by_name(obj, ".rodata"), &size), &cpus,
	       sizeof(cpus));
	if (bpf_object__load(obj)) {
		fprintf(stderr, "%s: the kernel refused the program (its log is above)\n", prog);
		exit(2);
	}
	info.cgroup.cgroup_fd = open(parent, O_RDONLY | O_DIRECTORY);
	info.cgroup.order = BPF_CGROUP_ITER_DESCENDANTS_PRE;
	DECLARE_LIBBPF_OPTS(bpf_iter_attach_opts, opts, .link_info = &info,
			    .link_info_len = sizeof(info));
	link = bpf_program__attach_iter(bpf_object__find_program_by_name(obj, prog), &opts);
	if (!link)
		die("attach_iter");
	return link;
}

int main(int argc, char **argv)
{
	static char buf[1 << 20];
	static struct child kids[100000];
	const char *kind, *parent, *file;
	int pause_ms, rounds, n, rows, equal = 0, nonzero = 0;
	double iter_sum = 0, pread_sum = 0;
	struct bpf_link *link;
	struct row *r = (struct row *)buf;

	if (argc != 5) {
		fprintf(stderr, "usage: probe memory|cpu PARENT_DIR PAUSE_MS ROUNDS\n");
		return 2;
	}
	kind = argv[1], parent = argv[2], pause_ms = atoi(argv[3]), rounds = atoi(argv[4]);
	file = strcmp(kind, "cpu") ? "memory.usage_in_bytes" : "cpuacct.usage";
	n = children(parent, file, kids, 100000);
	link = attach(kind, parent);
	rows = iterate(link, buf, sizeof(buf));
	for (int i = 0; i < n; i++)
		for (int j = 0; j < rows; j++)
			if (r[j].id == kids[i].id && r[j].value == pread_value(kids[i].fd)) {
				equal++;
				nonzero += r[j].value != 0;
			}
	printf("%s: %d children, %d rows (the parent's included), %d children's values equal to %s "
	       "(%d of them not zero)\n", kind, n, rows, equal, file, nonzero);
	for (int k = 0; k < rounds; k++) {
		double t0, t1, t2;

		usleep(pause_ms * 1000);
		t0 = micros();
		iterate(link, buf, sizeof(buf));
		t1 = micros();
		usleep(pause_ms * 1000);
		t2 = micros();
		for (int i = 0; i < n; i++)
			pread_value(kids[i].fd);
		pread_sum += micros() - t2;
		iter_sum += t1 - t0;
	}
	printf("after a %d ms pause, mean of %d rounds: one iterator read %.0f us (%.2f us a child); "
	       "%d preads %.0f us (%.2f us a child)\n",
	       pause_ms, rounds, iter_sum / rounds, iter_sum / rounds / n, n, pread_sum / rounds,
	       pread_sum / rounds / n);
	return 0;
}
