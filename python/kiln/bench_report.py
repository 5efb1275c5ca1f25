"""The HTML report of a `kiln bench` run: results.json (format kiln.bench/1) in, one
self-contained report.html out. Plots are drawn with matplotlib and embedded as inline SVG
(text as paths), so the page opens with no network and no fonts of its own.

    python3 -m kiln.bench_report results.json [-o report.html]

`kiln bench` runs this after writing its results, where Python has matplotlib."""
import argparse
import html
import io
import json
import math
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the backend)

matplotlib.rcParams.update({"svg.fonttype": "path", "svg.hashsalt": "kiln-bench",
                            "font.size": 9})


def _svg(fig):
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(fig)
    text = buffer.getvalue()
    return text[text.index("<svg"):]  # drop the XML prologue: the SVG sits inside HTML


def _failed_check(row):
    return row["check"] != "ok" and not row["check"].startswith("skipped")


def _measured(rows):
    return [r for r in rows if not r["error"] and r["median_ms"] > 0]


def ratio_bars(rows):
    """Per target, each graph's achieved fraction of its device's memory bandwidth."""
    rows = [r for r in _measured(rows) if r["device_gbps"] > 0]
    if not rows:
        return "<p>No cell reports its device's bandwidth: no ratio bars.</p>"
    # A graph at two sizes is two bars: keyed by name and shape.
    graphs = list(dict.fromkeys((r["graph"], r["shape"]) for r in rows))
    names = [name if sum(1 for g, _ in graphs if g == name) == 1 else f"{name} {shape}"
             for name, shape in graphs]
    targets = list(dict.fromkeys(r["target"] for r in rows))
    width = 0.8 / len(targets)
    fig, ax = plt.subplots(figsize=(max(6.0, 0.6 * len(graphs) * len(targets) + 2), 3.6))
    for t, target in enumerate(targets):
        by_graph = {(r["graph"], r["shape"]): r["bandwidth_fraction"] for r in rows
                    if r["target"] == target}
        xs = [g + (t - (len(targets) - 1) / 2) * width for g in range(len(graphs))]
        ax.bar(xs, [by_graph.get(key, 0.0) for key in graphs], width, label=target)
    ax.axhline(1.0, color="black", linewidth=0.8, linestyle="--")
    ax.set_xticks(range(len(graphs)), names, rotation=30, ha="right")
    ax.set_ylabel("fraction of the device's bandwidth")
    ax.set_title("Achieved bandwidth per graph, by target (1.0 = the device's roofline)")
    ax.legend()
    return _svg(fig)


def _geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else 0.0


def speedups(rows):
    """Per kiln target, each graph's speed against each PyTorch reference row of the same
    graph (its median over kiln's: above 1, kiln is faster), with the geometric mean."""
    measured = _measured(rows)
    references = list(dict.fromkeys(r["target"] for r in measured if r.get("reference")))
    targets = list(dict.fromkeys(r["target"] for r in measured if not r.get("reference")))
    if not references or not targets:
        return ""
    by = {(r["target"], r["graph"], r["shape"]): r["median_ms"] for r in measured}
    graphs = list(dict.fromkeys((r["graph"], r["shape"]) for r in measured
                                if not r.get("reference")))
    pairs = [(t, ref) for t in targets for ref in references]
    fig, ax = plt.subplots(figsize=(max(6.0, 0.5 * len(graphs) * len(pairs) + 2), 3.6))
    width = 0.8 / len(pairs)
    lines = []
    for p, (target, ref) in enumerate(pairs):
        ratios = [by[(ref, *g)] / by[(target, *g)] if (ref, *g) in by and (target, *g) in by
                  else 0.0 for g in graphs]
        mean = _geomean([x for x in ratios if x > 0])
        xs = [g + (p - (len(pairs) - 1) / 2) * width for g in range(len(graphs))]
        ax.bar(xs, ratios, width, label=f"{target} vs {ref} (geomean {mean:.2f}x)")
        lines.append(f"<li>{html.escape(target)} against {html.escape(ref)}: geometric mean "
                     f"{mean:.2f}x over {sum(1 for x in ratios if x > 0)} graphs</li>")
    ax.axhline(1.0, color="black", linewidth=0.8, linestyle="--")
    ax.set_xticks(range(len(graphs)), [g for g, _ in graphs], rotation=30, ha="right")
    ax.set_ylabel("reference time / kiln time")
    ax.set_title("Speed against PyTorch (above 1: kiln is faster)")
    ax.legend(fontsize=7)
    return (f"<h2>Against PyTorch</h2><ul>{''.join(lines)}</ul>"
            f"<div class=\"plots\">{_svg(fig)}</div>")


def roofline_scatter(rows):
    """Achieved GB/s against bytes moved, each target's device bandwidth as a line."""
    rows = _measured(rows)
    if not rows:
        return "<p>No cell was measured: no roofline plot.</p>"
    fig, ax = plt.subplots(figsize=(6.5, 4.0))
    for target in dict.fromkeys(r["target"] for r in rows):
        mine = [r for r in rows if r["target"] == target]
        points = ax.scatter([r["bytes"] for r in mine], [r["gbps"] for r in mine], label=target)
        roof = max(r["device_gbps"] for r in mine)
        if roof > 0:
            ax.axhline(roof, color=points.get_facecolor()[0], linewidth=0.8, linestyle="--")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("bytes moved (inputs read and outputs written once)")
    ax.set_ylabel("achieved GB/s")
    ax.set_title("Roofline: achieved bandwidth (dashed: each device's)")
    ax.legend()
    return _svg(fig)


COLUMNS = [("graph", "graph", "{}"), ("shape", "shape", "{}"), ("target", "target", "{}"),
           ("device", "device", "{}"), ("kernels", "kernels", "{}"),
           ("median_ms", "median ms", "{:.4g}"), ("ci_low_ms", "95% CI low", "{:.4g}"),
           ("ci_high_ms", "95% CI high", "{:.4g}"), ("gbps", "GB/s", "{:.3g}"),
           ("bandwidth_fraction", "of device", "{:.0%}"),
           ("compile_cold_ms", "compile cold ms", "{:.0f}"),
           ("compile_warm_ms", "compile warm ms", "{:.0f}"), ("check", "check", "{}"),
           ("error", "error", "{}"), ("skipped", "skipped", "{}")]


def table(rows):
    head = "".join(f"<th>{html.escape(title)}</th>" for _, title, _ in COLUMNS)
    body = []
    for r in rows:
        bad = r["error"] or _failed_check(r)
        # A PyTorch row has no roofline or kernel count of kiln's: blank, not 0.
        blank = {"kernels", "bandwidth_fraction"} if r.get("reference") else set()
        text = ["" if key in blank else fmt.format(r.get(key, "")) for key, _, fmt in COLUMNS]
        cells = "".join(f"<td>{html.escape(t)}</td>" for t in text)
        body.append(f"<tr class=\"{'bad' if bad else ''}\">{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


STYLE = """body{font-family:sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;font-size:0.85em}td,th{border:1px solid #ccc;padding:2px 6px;
white-space:nowrap;
text-align:right}th{background:#eee}tr.bad td{background:#fdd}
td:nth-child(-n+4),th:nth-child(-n+4){text-align:left}
.plots{display:flex;flex-wrap:wrap;gap:2em;margin:1em 0}"""


def render(results):
    rows = results["rows"]
    bad = sum(1 for r in rows if r["error"] or _failed_check(r))
    shard = f", shard {results['shard']}" if results["shard"] else ""
    title = f"kiln bench: {results['suite']}"
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>{STYLE}</style></head><body>
<h1>{html.escape(title)}</h1>
<p>{len(rows)} of {results['cells']} cells{html.escape(shard)}; {bad} failed or mismatched.
Machine: {html.escape(results['machine'])}. Run: {html.escape(results['date'])}.
Times are medians of the suite's samples, with a 95% interval of the median; bytes are each
graph's inputs read and outputs written once; compile times are whole compile calls with an
empty kernel cache (cold) and with it filled (warm); a PyTorch reference row's are its first
call under torch.compile with empty Inductor caches (cold) and again after Dynamo forgets the
graph (warm).</p>
<div class="plots">{ratio_bars(rows)}{roofline_scatter(rows)}</div>
{speedups(rows)}
{table(rows)}
</body></html>
"""


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", help="results.json of `kiln bench` or `kiln bench merge`")
    parser.add_argument("-o", "--output", default="report.html")
    args = parser.parse_args(argv)
    with open(args.results, encoding="utf-8") as f:
        results = json.load(f)
    if results.get("format") != "kiln.bench/1":
        print(f"{args.results}: not a kiln bench result (format kiln.bench/1)", file=sys.stderr)
        return 1
    with open(args.output, "w", encoding="utf-8") as f:
        f.write(render(results))
    print(f"kiln bench: wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
