#!/usr/bin/env python3
"""The numbers of docs/metacentrum.md's study from a replay's JSON: each user's share of all
charges under CPU time and under the Processor Equivalent, the memory-heavy users (charged more
than 1.5 times their CPU time), and the mean waits of light users (the half with the least CPU
time), of memory-heavy users and of everyone under each policy.

Usage: scripts/metacentrum_study.py REPLAY.json  (needs fairshare:usage=cpu and
fairshare:usage=pe among the replay's policies)
"""
import json, statistics, sys
doc = json.load(open(sys.argv[1]))
pols = {p['policy']: p for p in doc['policies']}
names = list(pols)
cpu = {u['id']: u for u in pols['fairshare:usage=cpu']['users']}
pe = {u['id']: u for u in pols['fairshare:usage=pe']['users']}
tot_cpu = sum(u['charged'] for u in cpu.values())
tot_pe = sum(u['charged'] for u in pe.values())
rows = []
for uid in cpu:
    c, p = cpu[uid]['charged'], pe[uid]['charged']
    rows.append((uid, c / tot_cpu, p / tot_pe, p / c if c else float('nan'), cpu[uid]['tasks_submitted']))
print("users", len(rows), "total cpu-s", tot_cpu, "total pe-s", tot_pe, "ratio", tot_pe / tot_cpu)
print("top by PE/CPU ratio (memory-heavy):")
for r in sorted(rows, key=lambda r: -r[3] if r[3] == r[3] else 0)[:8]:
    print("  user %s: share cpu %.2f %% -> pe %.2f %%, pe/cpu %.2f, jobs %d" % (r[0], 100*r[1], 100*r[2], r[3], r[4]))
print("top by PE share:")
for r in sorted(rows, key=lambda r: -r[2])[:8]:
    print("  user %s: share cpu %.2f %% -> pe %.2f %%, pe/cpu %.2f, jobs %d" % (r[0], 100*r[1], 100*r[2], r[3], r[4]))
# light users: bottom half by CPU time
order = sorted(rows, key=lambda r: r[1])
light = {r[0] for r in order[: len(order) // 2]}
heavy_mem = {r[0] for r in rows if r[3] == r[3] and r[3] > 1.5}
print("light users:", len(light), "memory-heavy (pe/cpu > 1.5):", len(heavy_mem), sorted(heavy_mem, key=int))
for n in names:
    us = {u['id']: u for u in pols[n]['users']}
    lw = statistics.mean(us[u]['mean_wait_s'] for u in light) / 3600
    hw = statistics.mean(us[u]['mean_wait_s'] for u in heavy_mem) / 3600
    allw = pols[n]['user_mean_wait_s'] / 3600
    print("%-90s light users' mean wait %.2f h, memory-heavy %.2f h, all users %.2f h, jobs %.2f h" % (n, lw, hw, allw, pols[n]['mean_wait_s'] / 3600))
# who moves: biggest change in mean wait cpu -> pe
moves = sorted(rows, key=lambda r: pe[r[0]]['mean_wait_s'] - cpu[r[0]]['mean_wait_s'])
print("waits most reduced by pe vs cpu:")
for r in moves[:5]:
    print("  user %s: %.2f h -> %.2f h (pe/cpu %.2f, cpu share %.2f %%)" % (r[0], cpu[r[0]]['mean_wait_s']/3600, pe[r[0]]['mean_wait_s']/3600, r[3], 100*r[1]))
print("waits most increased:")
for r in moves[-5:]:
    print("  user %s: %.2f h -> %.2f h (pe/cpu %.2f, cpu share %.2f %%)" % (r[0], cpu[r[0]]['mean_wait_s']/3600, pe[r[0]]['mean_wait_s']/3600, r[3], 100*r[1]))
