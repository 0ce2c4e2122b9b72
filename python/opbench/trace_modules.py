"""NVTX ranges named by module path, for `trace`: `annotate(model)` wraps every nn.Module's
forward in a range ("model.layers.3.self_attn") and, with `backward=True` (the default), its
backward in a second one ("model.layers.3.self_attn [backward]"), so `trace` puts each kernel of
a training step under the module that launched it (trace_range rows, NVTX_EVENTS in
trace.sqlite).

    from opbench import trace_modules
    handles = trace_modules.annotate(model)        # before the traced steps
    ...
    for h in handles: h.remove()                   # to stop

Forward hooks run on the launching thread around the module's forward, as NVTX push/pop.
Backward ranges are opened by a full backward pre-hook (the gradient of the module's output is
ready) and closed by a full backward hook (the gradients of its inputs are computed); both run
on PyTorch's autograd thread, which launches the backward kernels, so the ranges nest there as
the modules do. A module none of whose inputs requires a gradient (the root of a language
model, whose input is token ids; an embedding) gets both backward hooks at once from PyTorch,
so its backward range is empty and its kernels land in the enclosing ranges. Full backward
hooks wrap a module's inputs and outputs in an autograd function: a module that then modifies
its input in place (nn.ReLU(inplace=True) after a hooked module) makes PyTorch raise; give
`backward=False` there, and for inference, where the hooks only cost time.

Inside code that torch.compile traces, the hooks do nothing: dynamo would otherwise break the
graph at every module boundary and compile the model as many small graphs, a different program
(on an H200, a 4-layer transformer under mode="reduce-overhead" ran 56 kernels a step instead of
34), and a range pushed on the host cannot enclose the kernels of a CUDA graph replay anyway. A
compiled model's kernels land in the ranges around the compiled call. Only the pure naming and
nesting logic needs no torch; `annotate` imports torch when called."""


def range_names(named_modules, root="model"):
    """(module, range name) for each (name, module) of `named_modules()`: the root module is
    `root`, the others `root.<their path>`."""
    return [(m, f"{root}.{name}" if name else root) for name, m in named_modules]


BACKWARD_SUFFIX = " [backward]"


def annotate(model, root="model", push=None, pop=None, compiling=None, backward=True):
    """Registers a forward pre-hook (push) and a forward hook (pop) on every module of
    `model`, and with `backward` a full backward pre-hook (push of "<name> [backward]") and a
    full backward hook (pop); returns the hook handles. `push`/`pop` default to
    torch.cuda.nvtx's, `compiling` (true while torch.compile traces; the hooks then do
    nothing) to torch.compiler.is_compiling."""
    if push is None or pop is None or compiling is None:
        import torch

        push = push or torch.cuda.nvtx.range_push
        pop = pop or torch.cuda.nvtx.range_pop
        compiling = compiling or torch.compiler.is_compiling
    # A hook that returns something replaces the module's input (pre-hook) or output (hook),
    # or the gradients (backward hooks), and torch's range_push/range_pop return the nesting
    # depth: the hooks return None.
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
        if backward:
            handles.append(module.register_full_backward_pre_hook(opener(name + BACKWARD_SUFFIX)))
            handles.append(module.register_full_backward_hook(closer))
    return handles
