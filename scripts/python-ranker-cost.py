"""What a ranker written in Python costs per decision: a trace replayed under the registry's
DRF and under the same DRF written in Python (fairshare.Ranker), each alone, best of
`rounds`; the difference over the number of calls is the cost of one call of `priority`.
Both tie as the registry does (by the user's place in the trace), so the results are the
same to the byte.

Usage: python3 scripts/python-ranker-cost.py [TRACE] [ROUNDS]   (default: wagap-2013, 3)"""

import pathlib
import sys
import time

import fairshare

TRACE = pathlib.Path(__file__).resolve().parents[2] / "shared" / "traces" / "swf" / "wagap-2013.swf"


class PythonDrf(fairshare.Ranker):
    name = "python-drf"
    calls = 0

    def priority(self, user, holdings, waiting_since, size):
        PythonDrf.calls += 1
        return max(holdings)


def best(policy, trace, rounds):
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        result = fairshare.replay(trace, [policy], gantt=False, jobs=False, progress=False)
        times.append(time.perf_counter() - start)
    return min(times), result


def main():
    trace = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else TRACE
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    if not trace.exists():
        sys.exit(f"SKIPPED: {trace} is not there (../shared/traces)")
    rust, r = best("drf", trace, rounds)
    PythonDrf.calls = 0
    python, p = best(PythonDrf(), trace, rounds)
    calls = PythonDrf.calls // rounds
    same = [{k: v for k, v in x.doc["policies"][0].items() if k != "policy"} for x in (r, p)]
    print(f"trace: {trace.name}")
    print(f"drf (Rust):   {rust:.2f} s")
    print(f"drf (Python): {python:.2f} s, {calls} calls of priority")
    print(f"per call: {(python - rust) / calls * 1e6:.2f} µs; same results: {same[0] == same[1]}")


main()
