"""PyTorch's fused attention ops (flash, memory-efficient, cuDNN: what
scaled_dot_product_attention becomes in a graph traced for a GPU) reach kiln as its
scaled_dot_product_attention when only the attention output is read: converted, compiled and
run here on the CPU against F.scaled_dot_product_attention. A graph that reads the log-sum-exp
(a backward's) or drops out keeps the op as it is."""
import operator
import unittest

import torch
import torch.nn.functional as F

from kiln import dynamo, fx_graph

aten = torch.ops.aten


def attention_graph(op, args, kwargs=None, read=(0,)):
    """q, k, v (and a mask) placeholders, `op` on them, the outputs `read` returned."""
    g = torch.fx.Graph()
    names = ["q", "k", "v", "mask"]
    holders = {n: g.placeholder(n) for n in names[:len([a for a in args if isinstance(a, str)])]}
    call_args = tuple(holders[a] if isinstance(a, str) else a for a in args)
    node = g.call_function(op, call_args, kwargs or {})
    g.output(tuple(g.call_function(operator.getitem, (node, k)) for k in read))
    return torch.fx.GraphModule({}, g)


class FusedAttentionTest(unittest.TestCase):
    def setUp(self):
        torch.manual_seed(0)
        self.q = torch.randn(2, 3, 9, 16)
        self.k = torch.randn(2, 3, 11, 16)
        self.v = torch.randn(2, 3, 11, 16)
        self.mask = torch.randn(9, 11)

    def run_kiln(self, gm, inputs):
        return dynamo._compile_graph(gm, inputs, None)(*inputs)[0]

    def test_flash_causal_with_scale(self):
        gm = attention_graph(aten._scaled_dot_product_flash_attention.default,
                             ("q", "k", "v", 0.0, True), {"scale": 0.3})
        graph, _, _ = fx_graph.convert(gm, [self.q, self.k, self.v])
        (node,) = graph["nodes"]
        self.assertEqual(node["op"], "aten.scaled_dot_product_attention.default")
        self.assertEqual(node["args"], ["%q", "%k", "%v", None, 0.0, True])
        self.assertEqual(node["kwargs"], {"scale": 0.3})
        self.assertEqual(graph["outputs"], ["%" + node["name"]])
        got = self.run_kiln(gm, [self.q, self.k, self.v])
        want = F.scaled_dot_product_attention(self.q, self.k, self.v, is_causal=True, scale=0.3)
        torch.testing.assert_close(got, want)

    def test_efficient_with_a_mask(self):
        gm = attention_graph(aten._scaled_dot_product_efficient_attention.default,
                             ("q", "k", "v", "mask", False))
        inputs = [self.q, self.k, self.v, self.mask]
        graph, _, _ = fx_graph.convert(gm, inputs)
        self.assertEqual(graph["nodes"][0]["args"], ["%q", "%k", "%v", "%mask", 0.0, False])
        want = F.scaled_dot_product_attention(self.q, self.k, self.v, attn_mask=self.mask)
        torch.testing.assert_close(self.run_kiln(gm, inputs), want)

    def test_cudnn_form(self):
        gm = attention_graph(aten._scaled_dot_product_cudnn_attention.default,
                             ("q", "k", "v", None, False, 0.0, True))
        graph, _, _ = fx_graph.convert(gm, [self.q, self.k, self.v])
        self.assertEqual(graph["nodes"][0]["args"], ["%q", "%k", "%v", None, 0.0, True])

    def test_log_sum_exp_or_dropout_keep_the_op(self):
        read_lse = attention_graph(aten._scaled_dot_product_flash_attention.default,
                                   ("q", "k", "v"), read=(0, 1))
        graph, _, _ = fx_graph.convert(read_lse, [self.q, self.k, self.v])
        self.assertEqual(graph["nodes"][0]["op"],
                         "aten._scaled_dot_product_flash_attention.default")
        dropout = attention_graph(aten._scaled_dot_product_flash_attention.default,
                                  ("q", "k", "v", 0.1))
        graph, _, _ = fx_graph.convert(dropout, [self.q, self.k, self.v])
        self.assertEqual(graph["nodes"][0]["op"],
                         "aten._scaled_dot_product_flash_attention.default")


if __name__ == "__main__":
    unittest.main()
