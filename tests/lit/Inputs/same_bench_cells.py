"""Exits 0 when two kiln bench result files hold the same matrix: the same cells, each with
the same graph, shape, target, device, kernel count, bytes and check result (times differ
between runs). Otherwise prints the first difference and exits 1."""
import json
import sys

KEYS = ["cell", "graph", "shape", "target", "device", "kernels", "bytes", "check", "error"]


def cells(path):
    with open(path, encoding="utf-8") as f:
        results = json.load(f)
    return results["suite"], results["cells"], [{k: row[k] for k in KEYS} for row in results["rows"]]


a, b = cells(sys.argv[1]), cells(sys.argv[2])
if a[:2] != b[:2]:
    sys.exit(f"different suites or matrices: {a[:2]} and {b[:2]}")
if len(a[2]) != len(b[2]):
    sys.exit(f"{len(a[2])} rows and {len(b[2])} rows")
for x, y in zip(a[2], b[2]):
    if x != y:
        sys.exit(f"cell {x['cell']} differs:\n  {x}\n  {y}")
print(f"same {len(a[2])} cells")
