#!/usr/bin/env python3
"""The dashboard check's HTTP side (python3 standard library only).

  dashboard.py traffic BASE SECONDS        bounded traffic to the example app
  dashboard.py flip BASE SWITCH on|off     an emergency switch, through the
                                           admin page's form and CSRF token
  dashboard.py check PROM DASHBOARD        every panel query returns series
  dashboard.py labels METRICS_URL          no label value is a client's key
  dashboard.py render PROM DASHBOARD START END OUT.html
                                           the panels as inline SVG charts

Used by scripts/check-dashboard.sh; exits non-zero on any failure.
"""
import html
import json
import re
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

# Grafana's variables, as the check substitutes them.
VARS = {"$__rate_interval": "15s", "$rule": ".*"}
# What the traffic sends as keys: none may show up as a label value.
CLIENT_KEYS = re.compile(r"user-\d|crawler-\d|^[0-9a-f]{32}$")


def expand(expr):
    for k, v in VARS.items():
        expr = expr.replace(k, v)
    return expr


def get(url, params=None, headers=None):
    if params:
        url += "?" + urllib.parse.urlencode(params)
    req = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def send(base, method, path, headers):
    req = urllib.request.Request(base + path, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code
    except OSError:
        return 0


def traffic(base, seconds):
    end, i, codes = time.time() + float(seconds), 0, {}
    while time.time() < end and i < 20000:
        for method, path, h in (
            ("POST", "/login", {"x-user": f"user-{i % 6}"}),
            ("GET", "/search", {"x-client": f"crawler-{i % 3}"}),
            ("GET", "/export", {}),
        ):
            c = send(base, method, path, h)
            codes[c] = codes.get(c, 0) + 1
        i += 1
        time.sleep(0.02)
    print(f"traffic {seconds}s: {dict(sorted(codes.items()))}")


def flip(base, switch, on):
    """GET the admin page as an operator, then POST its form with the page's
    CSRF token and the cookie that came with it."""
    auth = {"authorization": "Bearer operator-token"}
    req = urllib.request.Request(base + "/admin", headers=auth)
    with urllib.request.urlopen(req, timeout=10) as r:
        cookie = r.headers["set-cookie"].split(";")[0]
        page = r.read().decode()
    token = re.search(r'name="csrf" value="([0-9a-f]{32})"', page).group(1)
    form = urllib.parse.urlencode({"csrf": token, "switch": switch, "on": str(on == "on").lower()})
    req = urllib.request.Request(base + "/admin/switch", data=form.encode(), method="POST",
                                 headers={**auth, "cookie": cookie,
                                          "content-type": "application/x-www-form-urlencoded"})

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *a, **k):
            return None
    try:
        urllib.request.build_opener(NoRedirect).open(req, timeout=10)
        status = 200
    except urllib.error.HTTPError as e:
        status = e.code
    if status != 303:
        raise SystemExit(f"FAIL: flipping {switch}: {status}")
    print(f"switch {switch} {on}")


def panels(dashboard):
    with open(dashboard) as f:
        return json.load(f)["panels"]


def query(prom, expr):
    status, body = get(prom + "/api/v1/query", {"query": expr})
    data = json.loads(body)
    if status != 200 or data.get("status") != "success":
        raise SystemExit(f"FAIL: query {expr!r}: {status} {body[:300]}")
    return data["data"]["result"]


def check(prom, dashboard):
    failures = 0
    for p in panels(dashboard):
        for t in p["targets"]:
            expr = expand(t["expr"])
            n = len(query(prom, expr))
            ok = n > 0
            failures += not ok
            print(f"{'ok ' if ok else 'FAIL'} {p['title']}: {n} series  {expr}")
    # What the traffic and the outage must have shown.
    musts = {
        'sum(ratelimit_limited_total{rule="login"}) > 0': "login limited",
        'sum(ratelimit_would_limit_total{rule="search-shadow"}) > 0': "log rule would limit",
        "sum(ratelimit_fail_open_total) > 0": "fail-open while Valkey was down",
        'sum(ratelimit_fail_closed_total{rule="export"}) > 0': "fail-closed rule refused",
        "max(max_over_time(ratelimit_valkey_breaker_open[10m])) == 1": "a breaker opened",
        "max(ratelimit_valkey_breaker_open) == 0": "and closed again",
        "sum(ratelimit_valkey_call_duration_seconds_count) > 0": "round trips timed",
        'max_over_time(ratelimit_switch_on{switch="disable_config_blocking"}[10m]) == 1':
            "the switch flipped through the admin page",
    }
    for expr, what in musts.items():
        ok = len(query(prom, expr)) > 0
        failures += not ok
        print(f"{'ok ' if ok else 'FAIL'} {what}: {expr}")
    if failures:
        raise SystemExit(f"FAIL: {failures} queries returned nothing")


def labels(metrics_url):
    status, body = get(metrics_url)
    if status != 200:
        raise SystemExit(f"FAIL: {metrics_url}: {status}")
    values = set(re.findall(r'="((?:[^"\\]|\\.)*)"', body))
    bad = sorted(v for v in values if CLIENT_KEYS.search(v))
    if bad:
        raise SystemExit(f"FAIL: client keys as label values: {bad}")
    print(f"ok labels: {len(values)} distinct label values, none a client key")


COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"]


def legend(fmt, metric):
    return re.sub(r"\{\{\s*(\w+)\s*\}\}", lambda m: metric.get(m.group(1), ""), fmt) or str(metric)


def chart(prom, panel, start, end, w=640, h=220):
    series = []
    for t in panel["targets"]:
        status, body = get(prom + "/api/v1/query_range", {
            "query": expand(t["expr"]), "start": start, "end": end, "step": "1"})
        for r in json.loads(body)["data"]["result"]:
            pts = [(float(x), float(y)) for x, y in r["values"] if y not in ("NaN", "+Inf", "-Inf")]
            if pts:
                series.append((legend(t.get("legendFormat", ""), r["metric"]), pts))
    top = max([y for _, pts in series for _, y in pts] + [0]) * 1.1
    top = panel["fieldConfig"]["defaults"].get("max", top) or 1
    x0, x1 = float(start), float(end)
    pl, pr, pt, pb = 56, 10, 10, 24
    sx = lambda x: pl + (x - x0) / (x1 - x0) * (w - pl - pr)
    sy = lambda y: h - pb - y / top * (h - pt - pb)
    out = [f'<svg width="{w}" height="{h}" xmlns="http://www.w3.org/2000/svg" font-size="10">']
    for i in range(5):
        v = top * i / 4
        y = sy(v)
        out.append(f'<line x1="{pl}" x2="{w - pr}" y1="{y:.1f}" y2="{y:.1f}" stroke="#e5e5e5"/>')
        out.append(f'<text x="{pl - 4}" y="{y + 3:.1f}" text-anchor="end" fill="#666">{v:.3g}</text>')
    for s in range(0, int(x1 - x0) + 1, 10):
        out.append(f'<text x="{sx(x0 + s):.1f}" y="{h - 8}" text-anchor="middle" fill="#666">{s}s</text>')
    for i, (_, pts) in enumerate(series):
        d = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in pts)
        out.append(f'<polyline fill="none" stroke="{COLORS[i % len(COLORS)]}" stroke-width="1.5" points="{d}"/>')
    out.append("</svg>")
    keys = "".join(
        f'<span><i style="background:{COLORS[i % len(COLORS)]}"></i>{html.escape(name)}</span>'
        for i, (name, _) in enumerate(series))
    unit = panel["fieldConfig"]["defaults"].get("unit", "")
    return (f'<div class="p"><h3>{html.escape(panel["title"])} <small>({html.escape(unit)})</small></h3>'
            f'{"".join(out)}<div class="k">{keys or "no data"}</div></div>')


def render(prom, dashboard, start, end, out):
    body = "".join(chart(prom, p, start, end) for p in panels(dashboard))
    page = f"""<!doctype html><meta charset="utf-8"><title>Rate limiting</title><style>
body{{font:12px system-ui,sans-serif;margin:12px;background:#fafafa}} h1{{font-size:16px;margin:4px}}
.g{{display:grid;grid-template-columns:repeat(2,660px);gap:8px}}
.p{{background:#fff;border:1px solid #ddd;padding:6px}} h3{{margin:0 0 4px;font-size:13px}}
small{{color:#888;font-weight:normal}} .k span{{margin-right:10px;white-space:nowrap}}
.k i{{display:inline-block;width:10px;height:3px;margin-right:3px;vertical-align:middle}}
</style><h1>Rate limiting: docs/grafana/ratelimit.json's panels, from a real Prometheus scrape of examples/prometheus.rs
(Valkey stopped for 10 s mid-run; see scripts/check-dashboard.sh)</h1><div class="g">{body}</div>"""
    with open(out, "w") as f:
        f.write(page)
    print(f"rendered {out}")


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    {"traffic": traffic, "flip": flip, "check": check, "labels": labels, "render": render}[cmd](*args)
