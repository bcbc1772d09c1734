#!/usr/bin/env python3
"""Writes a site bundle of about a million jobs for measuring `fairshare slurm what-if` at a
large site's size (docs/benchmarks.md): ten copies of MetaCentrum-2009-2 (103,656 jobs, 147
users, 172 days) run side by side on ten times its machine, each copy's users and groups
renamed apart, as `sacct` would list them (times as recorded: submit, submit + wait, + run).

    scripts/million-bundle.py OUT_DIR [COPIES] [--window DAYS]   (default 10: 1,036,560 jobs)

With --window DAYS, the bundle is a window cut from a production site's life, as `fairshare
slurm collect --since` makes one: its window opens DAYS days into the log, the jobs that ended
before go to history.txt (those running or waiting then are in both dumps, as sacct lists
them), every job names the nodes it ran on (NodeList: the recorded schedule placed on the
nodes processor by processor, each job on the next nodes with room), the manifest says when
the window opened, and the site has limits: each copy's first group GrpTRES=cpu=400 and its
heaviest user MaxJobs=50, raised to 100 a week into the window (limits.txt, qos-limits.txt,
tres.txt, transactions.txt, AccountingStorageEnforce=limits).

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
FIELDS = "JobID|User|Account|Submit|Eligible|Start|End|Elapsed|Timelimit|AllocTRES|ReqTRES|Partition|State|QOS|Flags|ReqNodes|Constraints|NodeList|Reason"


def moment(seconds):
    return (START + datetime.timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%S")


def span(seconds):
    days, rest = divmod(int(seconds), 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    clock = f"{hours:02}:{minutes:02}:{secs:02}"
    return f"{days}-{clock}" if days else clock


def hostlist(nodes):
    """Slurm's host list of node indices: n[0001-0003,0007]."""
    nodes = sorted(nodes)
    ranges, start = [], None
    for i, n in enumerate(nodes):
        if start is None:
            start = n
        if i + 1 == len(nodes) or nodes[i + 1] != n + 1:
            ranges.append(f"{start + 1:04}" if start == n else f"{start + 1:04}-{n + 1:04}")
            start = None
    return "n[" + ",".join(ranges) + "]" if len(nodes) > 1 else f"n{nodes[0] + 1:04}"


def placed(rows):
    """Each job's nodes under the recorded schedule: at its start, its processors on the next
    nodes with room (next fit), freed at its end; every copy side by side on the one machine."""
    events = []
    for i, (submit, wait, run, cpus, _, _, _) in enumerate(rows):
        events.append((submit + wait + run, 0, i))
        events.append((submit + wait, 1, i))
    events.sort()
    free, held, at, where = [CPUS] * NODES, {}, 0, {}
    for _, starts, i in events:
        cpus = rows[i][3]
        if not starts:
            for node, n in held.pop(i, []):
                free[node] += n
            continue
        mine, left, looked = [], cpus, 0
        while left > 0 and looked < NODES:
            take = min(free[at], left)
            if take:
                free[at] -= take
                mine.append((at, take))
                left -= take
            if left:
                at, looked = (at + 1) % NODES, looked + 1
        held[i] = mine
        where[i] = [node for node, _ in mine]
    return where


def main():
    args = [a for a in sys.argv[1:]]
    window = None
    if "--window" in args:
        k = args.index("--window")
        window = float(args[k + 1]) * 86400
        del args[k : k + 2]
    out = args[0]
    copies = int(args[1]) if len(args) > 1 else 10
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
    rows = [(s, w, r, c, u, g, copy) for s, w, r, c, u, g in sorted(jobs) for copy in range(copies)]
    held = placed(rows) if window is not None else {}
    accounts = set()
    counts = {}
    dump = open(os.path.join(out, "sacct.txt"), "w")
    history = open(os.path.join(out, "history.txt"), "w") if window is not None else None
    for f in (dump, history):
        if f:
            f.write(FIELDS + "\n")
    for i, (submit, wait, run, cpus, user, group, copy) in enumerate(rows):
        account = f"g{group}c{copy}"
        accounts.add((account, f"u{user}c{copy}"))
        counts[(copy, f"u{user}c{copy}")] = counts.get((copy, f"u{user}c{copy}"), 0) + 1
        nodes = -(-cpus // CPUS)
        limit = max(600, -(-2 * run // 60) * 60)
        tres = f"billing={cpus},cpu={cpus},node={nodes}"
        start, end = submit + wait, submit + wait + run
        where = hostlist(held[i]) if held.get(i) else ""
        line = (
            f"{i + 1}|u{user}c{copy}|{account}|{moment(submit)}|{moment(submit)}|{moment(start)}|"
            f"{moment(end)}|{span(run)}|{span(limit)}|{tres}|{tres}|batch|COMPLETED|normal||{nodes}||{where}|None\n"
        )
        if window is None or end >= window:
            dump.write(line)
        if history and submit <= window:
            history.write(line)
    dump.close()
    if history:
        history.close()
    with open(os.path.join(out, "assoc.txt"), "w") as assoc:
        assoc.write("big|root|||1||0\n")
        for account in sorted({a for a, _ in accounts}):
            assoc.write(f"big|{account}|||1|root|0\n")
        for account, user in sorted(accounts):
            assoc.write(f"big|{account}|{user}||1|{account}|0\n")
    with open(os.path.join(out, "qos.txt"), "w") as qos:
        qos.write("normal|1.000000|0\n")
    enforce = "AccountingStorageEnforce=associations,limits\n" if window is not None else ""
    with open(os.path.join(out, "config.txt"), "w") as config:
        config.write(
            "ClusterName=big\nSchedulerType=sched/backfill\nPriorityType=priority/multifactor\n"
            "PriorityWeightFairshare=100000\nPriorityWeightAge=1000\nPriorityDecayHalfLife=7-00:00:00\n"
            f"PriorityCalcPeriod=00:05:00\nSelectTypeParameters=CR_CPU\n{enforce}"
            f"NodeName=n[0001-{NODES:04}] CPUs={CPUS} RealMemory=32000\n"
            f"PartitionName=batch Nodes=n[0001-{NODES:04}] Default=YES TRESBillingWeights=CPU=1.0\n"
        )
    if window is not None:
        limits(out, accounts, counts, copies, window)
    print(f"{len(rows)} jobs in {out}")


def limits(out, accounts, counts, copies, window):
    """The site's limits, their changes and the manifest of a window cut at `window`."""
    header = ("Cluster|Account|User|Partition|Par Name|GrpTRES|GrpJobs|GrpSubmit|GrpTRESMins|"
              "GrpTRESRunMins|GrpWall|MaxJobs|MaxSubmit|MaxTRES|MaxTRESPerNode|MaxTRESMins|MaxWall|QOS")
    first = {copy: min(a for a, _ in accounts if a.endswith(f"c{copy}")) for copy in range(copies)}
    heavy = {copy: max((n, u) for (c, u), n in counts.items() if c == copy)[1] for copy in range(copies)}
    columns = header.split("|")

    def row(**values):
        return "|".join(values.get(c.replace(" ", ""), "") for c in columns) + "\n"

    with open(os.path.join(out, "limits.txt"), "w") as f:
        f.write(header + "\n" + row(Cluster="big", Account="root", QOS="normal"))
        for account in sorted({a for a, _ in accounts}):
            capped = "cpu=400" if account in first.values() else ""
            f.write(row(Cluster="big", Account=account, ParName="root", GrpTRES=capped, QOS="normal"))
        for account, user in sorted(accounts):
            most = "100" if user in heavy.values() else ""
            f.write(row(Cluster="big", Account=account, User=user, MaxJobs=most, QOS="normal"))
    with open(os.path.join(out, "qos-limits.txt"), "w") as f:
        f.write("Name|MaxTRESPU|MaxJobsPU|MaxSubmitPU|MaxTRESPA|MaxJobsPA|GrpTRES|GrpJobs|MaxTRES|MaxWall|Flags\nnormal||||||||||\n")
    with open(os.path.join(out, "tres.txt"), "w") as f:
        f.write("Type|Name|ID\ncpu||1\nmem||2\nnode||4\nbilling||5\n")
    with open(os.path.join(out, "transactions.txt"), "w") as f:
        f.write("Time|Action|Actor|Where|Info|User|Account|Cluster\n")
        for copy in range(copies):
            user = heavy[copy]
            account = next(a for a, u in accounts if u == user)
            f.write(f"{moment(0)}|Modify Associations|root|(id_assoc=1)|max_jobs=50|{user}|{account}|big\n")
            f.write(f"{moment(window + 7 * 86400)}|Modify Associations|root|(id_assoc=1)|max_jobs=100|{user}|{account}|big\n")
            f.write(f"{moment(0)}|Modify Associations|root|(id_assoc=2)|grp_tres = if (id_assoc=2, '1=400', grp_tres)||{first[copy]}|big\n")
    with open(os.path.join(out, "manifest.toml"), "w") as f:
        f.write(f'cluster = "big"\nsince = "{moment(window)}"\nuntil = "{moment(200 * 86400)}"\n'
                f'history_since = "{moment(0)}"\nslurm_version = "slurm 22.05.8"\nlast_decay = false\n')


main()
