"""tests/e2e/sane_report.py REPORT.json... - every number of `proftop report
--json` that cannot be: NaN or infinite; a negative time, count or size; a
percentage outside 0-100 (a peak_pct past 100 only with "over_peak"); a
minimum above its average or an average above its maximum; a phase of the
Model Summary longer than the step, or phases that add up to more than the
step, or more device time than the steps last on the devices there are.
Prints one line per problem, "FILE: where: what", and exits 1 if any."""
import json
import math
import sys

EPS = 1e-6


def problems(rep):
    out = []

    def walk(o, where):
        if isinstance(o, dict):
            for k, v in o.items():
                w = "%s.%s" % (where, k)
                if isinstance(v, (int, float)) and not isinstance(v, bool):
                    if not math.isfinite(v):
                        out.append("%s: %r" % (w, v))
                        continue
                    if k.endswith("_pct") or k == "pct":
                        if v < -EPS or v > 100 + 1e-3:
                            out.append("%s: %g%% is outside 0-100" % (w, v))
                    elif (k.endswith(("_ms", "_ns", "_s", "_bytes")) or k in (
                            "calls", "events", "steps", "flops", "bytes", "samples")) and v < -EPS:
                        out.append("%s: %g is negative" % (w, v))
                walk(v, w)
            trio = [o.get(x) for x in ("min", "avg", "max")]
            if all(isinstance(x, (int, float)) for x in trio):
                if not trio[0] <= trio[1] + EPS * max(1, abs(trio[1])) <= trio[2] * (1 + EPS) + EPS:
                    out.append("%s: min %g, avg %g, max %g out of order" % (where, *trio))
            for pre in ("cpu", "gpu"):
                trio = [o.get("%s_%s_ms" % (pre, x)) for x in ("min", "avg", "max")]
                if all(isinstance(x, (int, float)) for x in trio) and trio[1] > 0:
                    if not trio[0] <= trio[1] * (1 + 1e-5) + EPS and trio[1] <= trio[2] * (1 + 1e-5) + EPS:
                        out.append("%s: %s min %g, avg %g, max %g out of order" % (where, pre, *trio))
        elif isinstance(o, list):
            for i, v in enumerate(o):
                walk(v, "%s[%d]" % (where, i))

    walk(rep, "")
    rows = {r["name"]: r for r in rep.get("model_summary") or []}
    step = rows.get("ProfileStep")
    if step:
        for key in ("cpu_total_ms", "gpu_total_ms"):
            whole = step.get(key) or 0
            parts = 0.0
            for name, r in rows.items():
                if name == "ProfileStep" or r.get(key) is None:
                    continue
                parts += r[key]
                if r[key] > whole * (1 + 1e-6) + 1e-3:
                    out.append("model_summary %s: %s %g ms > the step's %g ms" % (name, key, r[key], whole))
            if parts > whole * 1.005 + 1e-3:
                out.append("model_summary: phases' %s add up to %g ms > the step's %g ms" % (key, parts, whole))
        # device time is each device's busy time within the steps: at most
        # the steps' length on every device
        ndev = max(1, len(rep.get("device") or []))
        if (step.get("gpu_total_ms") or 0) > ndev * (step.get("cpu_total_ms") or 0) * 1.005 + 1e-3:
            out.append("model_summary: %g ms of device time in %g ms of steps on %d device(s)"
                       % (step["gpu_total_ms"], step["cpu_total_ms"], ndev))
    return out


def main():
    bad = 0
    for path in sys.argv[1:]:
        def nonfinite(s):
            raise ValueError("non-finite number %s" % s)
        try:
            with open(path) as f:
                rep = json.load(f, parse_constant=nonfinite)
        except ValueError as e:
            print("%s: %s" % (path, e))
            bad += 1
            continue
        for p in problems(rep):
            print("%s: %s" % (rep.get("source", path), p))
            bad += 1
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
