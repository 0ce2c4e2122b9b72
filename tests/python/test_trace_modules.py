"""python/opbench/trace_modules.py without torch: range names by module path, and pushes and pops that
nest like the forward calls and, in backward, like autograd's hook calls, on a stand-in module
tree with nn.Module's hook interface.
Run: python3 -m unittest tests/python/test_trace_modules.py"""

import sys
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python"))

from opbench import trace_modules  # noqa: E402


class Module:
    """nn.Module's hook interface: named_modules, forward pre-hooks and hooks, __call__."""

    def __init__(self, **children):
        self.children = children
        self.pre, self.post = [], []
        self.bw_pre, self.bw_post = [], []

    def named_modules(self, prefix=""):
        yield prefix, self
        for name, child in self.children.items():
            yield from child.named_modules(f"{prefix}.{name}" if prefix else name)

    def register_forward_pre_hook(self, hook):
        self.pre.append(hook)
        return hook

    def register_forward_hook(self, hook):
        self.post.append(hook)
        return hook

    def register_full_backward_pre_hook(self, hook):
        self.bw_pre.append(hook)
        return hook

    def register_full_backward_hook(self, hook):
        self.bw_post.append(hook)
        return hook

    def backward(self, grad):
        # As autograd: the pre-hooks when the output's gradient is ready (a non-None result
        # replaces it), the children in reverse order, the hooks once the inputs' gradients
        # are computed (a non-None result replaces them).
        for h in self.bw_pre:
            r = h(self, (grad,))
            if r is not None:
                grad = r[0]
        for c in reversed(list(self.children.values())):
            grad = c.backward(grad)
        for h in self.bw_post:
            r = h(self, (grad,), (grad,))
            if r is not None:
                grad = r[0]
        return grad

    def __call__(self, x):
        # As nn.Module: a pre-hook's non-None result replaces the input, a hook's the output.
        for h in self.pre:
            r = h(self, (x,))
            if r is not None:
                x = r[0] if isinstance(r, tuple) else r
        for c in self.children.values():
            x = c(x)
        for h in self.post:
            r = h(self, (x,), x)
            if r is not None:
                x = r
        return x


class TraceModulesTest(unittest.TestCase):
    def test_ranges_are_named_by_module_path_and_nest_like_the_calls(self):
        model = Module(layers=Module(**{"0": Module(self_attn=Module()), "1": Module()}))
        events = []

        # torch.cuda.nvtx.range_push/range_pop return the nesting depth, an int.
        def push(n):
            events.append(("push", n))
            return len(events)

        def pop():
            events.append(("pop",))
            return len(events)

        handles = trace_modules.annotate(
            model, push=push, pop=pop, compiling=lambda: False, backward=False
        )
        self.assertEqual(len(handles), 2 * 5)
        # The hooks leave the inputs and outputs alone.
        self.assertEqual(model("x"), "x")
        self.assertEqual(
            events,
            [
                ("push", "model"),
                ("push", "model.layers"),
                ("push", "model.layers.0"),
                ("push", "model.layers.0.self_attn"),
                ("pop",),
                ("pop",),
                ("push", "model.layers.1"),
                ("pop",),
                ("pop",),
                ("pop",),
            ],
        )

    def test_backward_ranges_nest_like_autograds_hook_calls_and_keep_the_gradients(self):
        model = Module(layers=Module(**{"0": Module(), "1": Module()}))
        events = []

        def push(n):
            events.append(("push", n))
            return len(events)

        def pop():
            events.append(("pop",))
            return len(events)

        handles = trace_modules.annotate(model, push=push, pop=pop, compiling=lambda: False)
        self.assertEqual(len(handles), 4 * 4)
        self.assertEqual(model("x"), "x")
        self.assertEqual(len(events), 8, "forward: a push and a pop per module")
        events.clear()
        self.assertEqual(model.backward("g"), "g", "the gradients are left alone")
        b = trace_modules.BACKWARD_SUFFIX
        self.assertEqual(
            events,
            [
                ("push", "model" + b),
                ("push", "model.layers" + b),
                ("push", "model.layers.1" + b),
                ("pop",),
                ("push", "model.layers.0" + b),
                ("pop",),
                ("pop",),
                ("pop",),
            ],
        )

    def test_the_hooks_do_nothing_while_torch_compile_traces(self):
        model = Module(layers=Module(**{"0": Module()}))
        events = []
        compiling = [True]
        trace_modules.annotate(
            model,
            push=lambda n: events.append(("push", n)),
            pop=lambda: events.append(("pop",)),
            compiling=lambda: compiling[0],
        )
        self.assertEqual(model("x"), "x")
        model.backward("g")
        self.assertEqual(events, [], "no range (and no graph break) in traced code")
        compiling[0] = False
        model("x")
        self.assertEqual(len(events), 6, "eager calls get their ranges")

    def test_the_root_takes_the_given_name(self):
        names = [n for _, n in trace_modules.range_names(Module(a=Module()).named_modules(), "net")]
        self.assertEqual(names, ["net", "net.a"])


if __name__ == "__main__":
    unittest.main()
