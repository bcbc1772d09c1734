// fairshare agent, measurement only: one BPF cgroup iterator (Linux >= 6.1, cgroup v1 through a
// directory fd) walks a parent's children and writes each one's cgroup id and one counter, so a
// whole node's counters of one kind come back in one read() instead of one pread() a workload.
// See scripts/cgroup-iter/run.sh and docs/benchmarks.md ("The agent row: what a BPF iterator would
// and would not give").
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

char LICENSE[] SEC("license") = "GPL";

/* Possible CPUs, set by the loader. */
const volatile u32 nr_cpus = 1;

/* The per-CPU offset of each CPU is learnt from a per-CPU kernel variable: typed __ksym needs
 * the variable's address from kallsyms, which a kernel without CONFIG_KALLSYMS_ALL lacks. */
extern const unsigned long this_cpu_off __ksym;

struct row {
	u64 id;
	u64 value;
};

static __always_inline struct cgroup_subsys_state *css_of(struct cgroup *cg, int subsys)
{
	return BPF_CORE_READ(cg, subsys[subsys]);
}

static __always_inline void emit(struct bpf_iter__cgroup *ctx, struct cgroup *cg, u64 value)
{
	struct row r = { .id = BPF_CORE_READ(cg, kn, id), .value = value };
	bpf_seq_write(ctx->meta->seq, &r, sizeof(r));
}

/* memory.usage_in_bytes of a non-root v1 memory cgroup: its page counter, in bytes. */
SEC("iter/cgroup")
int memory_usage(struct bpf_iter__cgroup *ctx)
{
	struct cgroup *cg = ctx->cgroup;
	struct mem_cgroup *memcg;

	if (!cg)
		return 0;
	memcg = (void *)css_of(cg, bpf_core_enum_value(enum cgroup_subsys_id, memory_cgrp_id));
	if (!memcg)
		return 0;
	emit(ctx, cg, BPF_CORE_READ(memcg, memory.usage.counter) * 4096);
	return 0;
}

/* cpuacct.usage: the sum over CPUs of the group's per-CPU nanoseconds. */
SEC("iter/cgroup")
int cpu_usage(struct bpf_iter__cgroup *ctx)
{
	struct cgroup *cg = ctx->cgroup;
	struct cpuacct *ca;
	const char *usage;
	u64 sum = 0;

	if (!cg)
		return 0;
	ca = (void *)css_of(cg, bpf_core_enum_value(enum cgroup_subsys_id, cpuacct_cgrp_id));
	if (!ca)
		return 0;
	usage = (const char *)BPF_CORE_READ(ca, cpuusage);
	for (u32 cpu = 0; cpu < 256 && cpu < nr_cpus; cpu++) {
		const char *here = bpf_per_cpu_ptr(&this_cpu_off, cpu);
		u64 v = 0;

		if (!here)
			break;
		bpf_probe_read_kernel(&v, sizeof(v), usage + (here - (const char *)&this_cpu_off));
		sum += v;
	}
	emit(ctx, cg, sum);
	return 0;
}
