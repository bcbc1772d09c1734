#!/usr/bin/env python3
"""Writes a site bundle of about a million jobs for measuring `fairshare slurm what-if` at a
large site's size (docs/benchmarks.md): ten copies of MetaCentrum-2009-2 (103,656 jobs, 147
users, 172 days) run side by side on ten times its machine, each copy's users and groups
renamed apart, as `sacct` would list them (times as recorded: submit, submit + wait, + run).

    scripts/million-bundle.py OUT_DIR [COPIES]     (default 10: 1,036,560 jobs)

The machine: 1,008 nodes of 8 CPUs (8,064 CPUs: ten times the log's 806), one partition with
billing by CPU; each copy's groups are accounts of equal shares under the root, its users
under their groups. A job's node count is its CPUs over 8, rounded up; its time limit twice
its run time, rounded up to the minute, at least ten minutes (the log records none).
"""

import datetime
import gzip
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LOG = os.path.join(ROOT, "..", "shared", "traces", "swf", "METACENTRUM-2009-2.swf.gz")
START = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
NODES, CPUS = 1008, 8
FIELDS = "JobID|User|Account|Submit|Eligible|Start|End|Elapsed|Timelimit|AllocTRES|ReqTRES|Partition|State|QOS|Flags|ReqNodes|Constraints"


def moment(seconds):
    return (START + datetime.timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%S")


def span(seconds):
    days, rest = divmod(int(seconds), 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    clock = f"{hours:02}:{minutes:02}:{secs:02}"
    return f"{days}-{clock}" if days else clock


def main():
    out = sys.argv[1]
    copies = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    os.makedirs(out, exist_ok=True)
    jobs = []
    with gzip.open(LOG, "rt") as log:
        for line in log:
            f = line.split()
            if not f or f[0].startswith(";"):
                continue
            submit, wait, run, cpus = int(f[1]), int(f[2]), int(f[3]), int(f[4])
            if run < 0 or cpus <= 0 or wait < 0:
                continue
            jobs.append((submit, wait, run, cpus, f[11], f[12]))
    accounts = set()
    next_id = 1
    with open(os.path.join(out, "sacct.txt"), "w") as dump:
        dump.write(FIELDS + "\n")
        for submit, wait, run, cpus, user, group in sorted(jobs):
            for copy in range(copies):
                account = f"g{group}c{copy}"
                accounts.add((account, f"u{user}c{copy}"))
                nodes = -(-cpus // CPUS)
                limit = max(600, -(-2 * run // 60) * 60)
                tres = f"billing={cpus},cpu={cpus},node={nodes}"
                start, end = submit + wait, submit + wait + run
                dump.write(
                    f"{next_id}|u{user}c{copy}|{account}|{moment(submit)}|{moment(submit)}|{moment(start)}|"
                    f"{moment(end)}|{span(run)}|{span(limit)}|{tres}|{tres}|batch|COMPLETED|normal||{nodes}|\n"
                )
                next_id += 1
    with open(os.path.join(out, "assoc.txt"), "w") as assoc:
        assoc.write("big|root|||1||0\n")
        for account in sorted({a for a, _ in accounts}):
            assoc.write(f"big|{account}|||1|root|0\n")
        for account, user in sorted(accounts):
            assoc.write(f"big|{account}|{user}||1|{account}|0\n")
    with open(os.path.join(out, "qos.txt"), "w") as qos:
        qos.write("normal|1.000000|0\n")
    with open(os.path.join(out, "config.txt"), "w") as config:
        config.write(
            "ClusterName=big\nSchedulerType=sched/backfill\nPriorityType=priority/multifactor\n"
            "PriorityWeightFairshare=100000\nPriorityWeightAge=1000\nPriorityDecayHalfLife=7-00:00:00\n"
            "PriorityCalcPeriod=00:05:00\nSelectTypeParameters=CR_CPU\n"
            f"NodeName=n[0001-{NODES:04}] CPUs={CPUS} RealMemory=32000\n"
            f"PartitionName=batch Nodes=n[0001-{NODES:04}] Default=YES TRESBillingWeights=CPU=1.0\n"
        )
    print(f"{next_id - 1} jobs in {out}")


main()
