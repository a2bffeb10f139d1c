"""Serves /metrics for a synthetic job of N ranks as proftop serve writes
them (the series proftop cluster reads), for a Prometheus to scrape:
  fake_metrics.py PORT N SLOW
Rank SLOW spends 30 % of its step in data loading and 1 % of its time in
collectives; the others 2 % and 28 %. Counters grow with the clock. Prints
"ready" once listening."""
import http.server
import sys
import time

port, n, slow = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
t0 = time.monotonic()


def body():
    t = time.monotonic() - t0 + 10
    out = []
    for fam, typ in (("proftop_steps", "gauge"), ("proftop_step_mean_seconds", "gauge"),
                     ("proftop_phase_ratio", "gauge"),
                     ("proftop_rank_collective_seconds_total", "counter")):
        out.append("# TYPE %s %s" % (fam, typ))
        for r in range(n):
            lab = 'host="node%d",rank="%d",pid="%d"' % (r // 8, r, 1000 + r)
            if fam == "proftop_steps":
                out.append("%s{%s} %d" % (fam, lab, int(t * 10)))
            elif fam == "proftop_step_mean_seconds":
                out.append("%s{%s} 0.1" % (fam, lab))
            elif fam == "proftop_phase_ratio":
                out.append('%s{%s,phase="dataloader"} %g' % (fam, lab, 0.3 if r == slow else 0.02))
                out.append('%s{%s,phase="forward"} 0.3' % (fam, lab))
            else:
                out.append("%s{%s} %.6f" % (fam, lab, t * (0.01 if r == slow else 0.28)))
    return ("\n".join(out) + "\n").encode()


class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        b = body()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.send_header("Content-Length", str(len(b)))
        self.end_headers()
        self.wfile.write(b)

    def log_message(self, *a):
        pass


s = http.server.HTTPServer(("127.0.0.1", port), H)
print("ready", flush=True)
s.serve_forever()
