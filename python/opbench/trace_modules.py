"""NVTX ranges named by module path, for `trace`: `annotate(model)` wraps every nn.Module's
forward in a range ("model.layers.3.self_attn"), so `trace` puts each kernel under the modules
that launched it (trace_range rows, NVTX_EVENTS in trace.sqlite).

    from opbench import trace_modules
    handles = trace_modules.annotate(model)        # before the traced steps
    ...
    for h in handles: h.remove()                   # to stop

Hooks run on the launching thread around the module's forward, as NVTX push/pop. Inside code
that torch.compile traces, the hooks do nothing: dynamo would otherwise break the graph at every
module boundary and compile the model as many small graphs, a different program (on an H200, a
4-layer transformer under mode="reduce-overhead" ran 56 kernels a step instead of 34), and a
range pushed on the host cannot enclose the kernels of a CUDA graph replay anyway. A compiled
model's kernels land in the ranges around the compiled call. Only the pure naming and nesting
logic needs no torch; `annotate` imports torch when called."""


def range_names(named_modules, root="model"):
    """(module, range name) for each (name, module) of `named_modules()`: the root module is
    `root`, the others `root.<their path>`."""
    return [(m, f"{root}.{name}" if name else root) for name, m in named_modules]


def annotate(model, root="model", push=None, pop=None, compiling=None):
    """Registers a forward pre-hook (push) and a forward hook (pop) on every module of
    `model`; returns the hook handles. `push`/`pop` default to torch.cuda.nvtx's, `compiling`
    (true while torch.compile traces; the hooks then do nothing) to
    torch.compiler.is_compiling."""
    if push is None or pop is None or compiling is None:
        import torch

        push = push or torch.cuda.nvtx.range_push
        pop = pop or torch.cuda.nvtx.range_pop
        compiling = compiling or torch.compiler.is_compiling
    # A hook that returns something replaces the module's input (pre-hook) or output (hook),
    # and torch's range_push/range_pop return the nesting depth: the hooks return None.
    def opener(name):
        def hook(_module, _args):
            if not compiling():
                push(name)

        return hook

    def closer(_module, _args, _output):
        if not compiling():
            pop()

    handles = []
    for module, name in range_names(model.named_modules(), root):
        handles.append(module.register_forward_pre_hook(opener(name)))
        handles.append(module.register_forward_hook(closer))
    return handles
