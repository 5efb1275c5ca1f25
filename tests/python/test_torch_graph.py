"""kiln.torch_graph: a kiln.graph/1 document rebuilt as PyTorch calls (the reference rows of
`kiln bench`). Each graph's outputs against the same computation written in PyTorch, eager and
under torch.compile with no graph break; the function is straight-line source with its
literals written out (no closure for Dynamo to guard); bad documents name what is wrong."""
import math
import unittest

import torch

from kiln import torch_graph

DOC = {
    "format": "kiln.graph/1", "name": "mixed",
    "inputs": [{"name": "x", "dtype": "f32", "shape": [3, 5]},
               {"name": "t", "dtype": "f32", "shape": [5, 3], "strides": [1, 5]}],
    "params": [{"name": "w", "dtype": "f32", "shape": [5]}],
    "nodes": [
        {"name": "a", "op": "aten.mul.Tensor", "args": ["%x", 2.5]},
        {"name": "b", "op": "aten.add.Tensor", "args": ["%a", "%w"]},
        {"name": "m", "op": "aten.max.dim", "args": ["%b", 1, True]},
        {"name": "c", "op": "aten.clamp_min.default", "args": ["%b", "-inf"]},
        {"name": "f", "op": "aten.full.default", "args": [[3, 1], 0.5],
         "kwargs": {"dtype": "f32"}},
        {"name": "s", "op": "aten.sub.Tensor", "args": ["%m.0", "%f"]},
        {"name": "tt", "op": "aten.permute.default", "args": ["%t", [1, 0]]},
        # A view of a permuted value: kiln's values are logically contiguous.
        {"name": "v", "op": "aten.view.default", "args": ["%tt", [15]]},
        {"name": "i", "op": "aten._to_copy.default", "args": ["%m.1"], "kwargs": {"dtype": "i32"}},
    ],
    "outputs": ["%c", "%s", "%v", "%i"],
}


def expected(x, t, w):
    b = x * 2.5 + w
    values, indices = b.max(dim=1, keepdim=True)
    return (b, values - 0.5, t.t().reshape(15), indices.to(torch.int32))


class TorchGraphTest(unittest.TestCase):
    def setUp(self):
        torch.manual_seed(0)
        self.x, self.w = torch.randn(3, 5), torch.randn(5)
        self.t_values = torch.randn(5, 3)
        self.graph = torch_graph.build(DOC, {"w": self.w}, "cpu")
        self.inputs = torch_graph.make_inputs(DOC, {"x": self.x, "t": self.t_values}, "cpu")

    def check(self, got):
        want = expected(self.x, self.t_values, self.w)
        self.assertEqual(len(got), len(want))
        for g, e in zip(got, want):
            self.assertEqual(g.dtype, e.dtype)
            torch.testing.assert_close(g, e)

    def test_eager_matches_pytorch(self):
        self.assertEqual(self.inputs[1].stride(), (1, 5))  # laid out as the document says
        self.check(self.graph(*self.inputs))

    def test_compiled_in_one_graph(self):
        compiled = torch.compile(self.graph.fn, fullgraph=True)
        self.check(compiled(*self.graph.params, *self.inputs))

    def test_straight_line_source(self):
        self.assertIsNone(self.graph.fn.__closure__)
        lines = self.graph.source.splitlines()
        self.assertEqual(len(lines), len(DOC["nodes"]) + 2)  # def, one line a node, return
        self.assertIn("= op0(v1, 2.5)", lines[1])
        self.assertIn("-inf", lines[4])
        self.assertIn("dtype=torch.float32", lines[5])
        self.assertTrue(math.isinf(self.graph.fn.__globals__["inf"]))

    def test_bad_documents_say_why(self):
        bad_op = dict(DOC, nodes=[{"name": "a", "op": "aten.no_such_op.default", "args": []}])
        with self.assertRaisesRegex(torch_graph.GraphError, "no op 'aten.no_such_op.default'"):
            torch_graph.build(bad_op, {"w": self.w}, "cpu")
        bad_ref = dict(DOC, nodes=[{"name": "a", "op": "aten.neg.default", "args": ["%a"]}])
        with self.assertRaisesRegex(torch_graph.GraphError, "'%a' names no value defined before"):
            torch_graph.build(bad_ref, {"w": self.w}, "cpu")
        with self.assertRaisesRegex(torch_graph.GraphError, "no weights for params w"):
            torch_graph.build(DOC, {}, "cpu")


if __name__ == "__main__":
    unittest.main()
