# Writes a kiln.graph/1 chain of N alternating add/mul nodes over one f32[64] input.
import json
import sys

n, path = int(sys.argv[1]), sys.argv[2]
nodes, prev = [], "%x"
for i in range(n):
    op = "aten.add.Tensor" if i % 2 == 0 else "aten.mul.Tensor"
    nodes.append({"name": f"n{i}", "op": op, "args": [prev, "%x"]})
    prev = f"%n{i}"
graph = {"format": "kiln.graph/1", "name": f"chain{n}",
         "inputs": [{"name": "x", "dtype": "f32", "shape": [64]}],
         "nodes": nodes, "outputs": [prev]}
with open(path, "w") as f:
    json.dump(graph, f)
