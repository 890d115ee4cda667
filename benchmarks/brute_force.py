"""Benchmark: how long a determined learner needs to brute-force a public check, in each release mode.

    .venv/bin/python benchmarks/brute_force.py [--set 04_model_memory] [--window 300] [--json out.json]

Self-study release (``exercises/checks/``): a numeric answer's check is a salted slow hash of its
rounding to the question's significant figures. A brute force hashes candidate roundings until one
matches. This script times one hash (median of repeats, one core), then really searches a window of
``--window`` candidates around each float answer of the set (the window holds the answer, picked
from the key: a learner does not know where to start, which is why the full counts below matter) and
extrapolates to the candidates a learner would try: one decade at 4 figures (9,000) when the order of
magnitude is known, three decades (27,000) from an order-of-magnitude guess, and the integers below
10,000 for a whole-number answer.

Graded release (``release --graded``): no right answer is hashed. A search over the coarse range check
(microseconds per candidate) finds only the range, which holds at least 100 values at the grader's
precision (this script counts them); a search over a known wrong answer's hash recovers only the
bucket of 100 values at the grader's precision that holds it: that search is timed too.

Prints a table; nothing here asserts a speed (timings vary with the machine and its load).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import time

from teaching.grading import authoring, spec
from tqdm.auto import tqdm

from course.selfcheck import coarse
from course.selfcheck.values import EXACT, canonical, digest


def time_one_hash(repeats: int = 30) -> tuple[float, float]:
    """Median wall and CPU seconds of one salted hash (CPU time does not grow with the load)."""
    wall, cpu = [], []
    for i in range(repeats):
        t, c = time.perf_counter(), time.process_time()
        digest(f"{1.234 + i:.3e}", "bench/q1/x")
        wall.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    return statistics.median(wall), statistics.median(cpu)


def search_window(value: float, sig: int, hashes: list[str], salt: str, window: int) -> tuple:
    """Hash ``window`` candidate roundings around ``value``; (found, seconds, candidates hashed)."""
    exponent = int(canonical(value, sig).split("e")[1])
    unit = 10.0 ** (exponent - sig + 1)
    start = float(value) - unit * (window // 2)
    t = time.process_time()
    found = None
    for k in range(window):
        form = canonical(start + k * unit, sig)
        if digest(form, salt) in hashes:
            found = form
    return found, time.process_time() - t, window


def count_in_range(lo: float, hi: float, sig) -> int:
    if lo <= 0 <= hi:
        return coarse.values_between(1e-300, hi, sig)  # a lower bound: the positive half
    lo, hi = sorted((abs(lo), abs(hi)))
    return coarse.values_between(lo, hi, sig)


def _duration(seconds: float) -> str:
    for unit, size in (("years", 365 * 86400), ("days", 86400), ("h", 3600), ("min", 60)):
        if seconds >= 2 * size:
            return f"{seconds / size:,.1f} {unit}"
    return f"{seconds:.1f} s"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", default="04_model_memory")
    parser.add_argument("--window", type=int, default=300, help="candidates really searched")
    parser.add_argument("--json", help="save the figures here")
    args = parser.parse_args()

    solution = authoring.SOLUTIONS_DIR / f"{args.set}.ipynb"
    assignment = spec.read(solution)
    key = authoring.answer_key(solution)
    precise = json.loads((authoring.EXERCISES_DIR / "checks" / f"{args.set}.json").read_text())
    graded = authoring.public_checks(assignment, key, graded=True)

    one_hash_wall, one_hash = time_one_hash()
    print(f"one salted hash (PBKDF2, {os.cpu_count()} cores here, one used): {one_hash * 1e3:.1f} ms "
          f"of CPU ({one_hash_wall * 1e3:.1f} ms wall); times below are CPU time of one core")  # fmt: skip

    rows = []
    for q in tqdm(assignment.questions, desc="questions"):
        for a, entry in zip(q.answers, precise["questions"][q.name]["answers"], strict=True):
            value = key["answers"][q.name][a.name].get("value")
            if not entry.get("public") or a.is_function or not isinstance(value, int | float):
                continue
            sig = a.sig_for(value)
            salt = f"{args.set}/{q.name}/{a.name}"
            row = {"answer": f"{q.name}.{a.name}", "sig": sig}
            if sig == EXACT:  # every integer up to the next power of ten (at least 10,000)
                n = max(10_000, 10 ** len(str(abs(int(value)))))
                row["self_study_candidates"] = n
                row["self_study_seconds"] = n * one_hash
            else:
                found, secs, n = search_window(value, sig, entry["hash"], salt, args.window)
                row["found_in_window"] = found is not None
                per = secs / n
                row["window_seconds"] = secs
                row["self_study_candidates"] = 9 * 10 ** (sig - 1)
                row["self_study_seconds"] = 9 * 10 ** (sig - 1) * per
                row["self_study_3_decades_seconds"] = 27 * 10 ** (sig - 1) * per
            g = next(e for e in graded["questions"][q.name]["answers"] if e["name"] == a.name)
            lo, hi = g["shape"]["range"]
            t = time.perf_counter()
            coarse.shape_problems(value, g["shape"])
            row["graded_range"] = [lo, hi]
            row["graded_values_in_range"] = count_in_range(lo, hi, sig)
            row["graded_range_check_seconds"] = time.perf_counter() - t
            rows.append(row)

    wrong_rows = []
    for q in assignment.questions:
        for w in graded["questions"][q.name]["wrong"]:
            b = w["bucket"]
            if "keys" in b:
                continue  # a dict: every key's bucket must be found, each as below
            i = next(i for i, x in enumerate(q.wrong) if x.hint == w["hint"])
            value = float(key["extras"][f"{q.name}/wrong/{i}"])
            decade = 10.0 ** math.floor(math.log10(abs(value)))
            first = coarse.bucket_of(math.copysign(decade, value), b)
            last = coarse.bucket_of(math.copysign(decade * 10, value), b)
            lo, hi = sorted((first, last))
            n = hi - lo + 1  # buckets in the wrong value's decade
            salt = f"{args.set}/{q.name}/{w['answer']}/wrong"
            target = coarse.bucket_of(value, b)
            t = time.process_time()
            searched = 0
            for bucket in range(lo, hi + 1) if n <= 2000 else ():  # else: extrapolated
                searched += 1
                if digest(str(bucket), salt) in b["hash"]:
                    assert bucket == target
                    break
            secs = time.process_time() - t
            wrong_rows.append({"wrong": f"{q.name}.{w['answer']}", "buckets_per_decade": n,
                               "searched": searched, "search_seconds": secs,
                               "decade_seconds": n * (secs / searched if searched else one_hash)})  # fmt: skip

    print(f"\nself-study release, set {args.set} (a real search of {args.window} candidates each):")
    for r in rows:
        if r["sig"] == EXACT:
            print(f"  {r['answer']:<28} exact integer: every one below "
                  f"{r['self_study_candidates']:,} in {_duration(r['self_study_seconds'])}")  # fmt: skip
        else:
            print(f"  {r['answer']:<28} {r['sig']} figures: found={r['found_in_window']}, "
                  f"{r['window_seconds']:.1f} s for the window; one decade ({r['self_study_candidates']:,}) "
                  f"{_duration(r['self_study_seconds'])}, three decades "
                  f"{_duration(r['self_study_3_decades_seconds'])}")  # fmt: skip
    print(f"\ngraded release, set {args.set}:")
    for r in rows:
        print(f"  {r['answer']:<28} range {r['graded_range'][0]:g} to {r['graded_range'][1]:g}: "
              f"{r['graded_values_in_range']:,} values at the grader's precision, "
              f"{r['graded_range_check_seconds'] * 1e6:.0f} us per check")  # fmt: skip
    for r in wrong_rows:
        how = (f"found after {r['searched']} hashes in {r['search_seconds']:.1f} s" if r["searched"]
               else "not searched")  # fmt: skip
        print(f"  known wrong {r['wrong']:<22} {r['buckets_per_decade']:,} buckets of "
              f"{coarse.MIN_VALUES} values in its decade: {how}; the whole decade "
              f"{_duration(r['decade_seconds'])}")  # fmt: skip
    figures = {"set": args.set, "one_hash_cpu_seconds": one_hash, "one_hash_wall_seconds": one_hash_wall,
               "rows": rows, "wrong": wrong_rows, "load_average": os.getloadavg()}  # fmt: skip
    print(f"\nload average: {figures['load_average'][0]:.1f} (a busy machine is slower)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(figures, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
