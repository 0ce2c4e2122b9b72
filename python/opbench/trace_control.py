"""Pausing and resuming `trace`'s recording from inside a Python program, as
torch.cuda.profiler.start()/stop() bound what Nsight Systems records with its cudaProfilerApi
capture range:

    from opbench import trace_control
    trace_control.resume()        # under `trace --start-paused`: record from here
    ...
    torch.cuda.synchronize()      # the GPU work so far must be done
    trace_control.pause()         # CUPTI detached: the program runs as it would untraced

The calls go to `opbench_trace_pause` / `opbench_trace_resume` of the injection library that
`trace` loads into the process (through CUDA_INJECTION64_PATH, which names it). In a process
not started by `trace` there is no library: `available()` is False and `pause`/`resume` do
nothing and return False, so a script runs the same with and without `trace`. Only ctypes is
needed; nothing here imports torch.

`defer_injection()` (before CUDA starts) and `attach_now()` (after) start the same library from
the program instead of from the CUDA driver, the way torch.profiler starts CUPTI: to measure
whether the driver's injection itself costs the program anything. Child processes are then
not traced."""

import ctypes
import os

_LIB = None
_LOOKED = False


def _lib(env=os.environ):
    """The injection library already loaded in this process, or None."""
    global _LIB, _LOOKED
    if not _LOOKED:
        _LOOKED = True
        path = env.get("CUDA_INJECTION64_PATH")
        if path:
            try:
                # RTLD_NOLOAD: only a library the process has already loaded.
                lib = ctypes.CDLL(path, mode=getattr(os, "RTLD_NOLOAD", 4) | os.RTLD_NOW)
                lib.opbench_trace_pause.restype = ctypes.c_int
                lib.opbench_trace_resume.restype = ctypes.c_int
                _LIB = lib
            except (OSError, AttributeError):
                _LIB = None
    return _LIB


_DEFERRED = None


def defer_injection(env=os.environ):
    """Takes CUDA_INJECTION64_PATH and NVTX_INJECTION64_PATH out of this process's environment,
    so the CUDA driver does not load the library when CUDA starts; `attach_now()` loads it
    later. Call before anything starts CUDA. Returns whether there was a library to defer."""
    global _DEFERRED
    _DEFERRED = env.pop("CUDA_INJECTION64_PATH", None)
    env.pop("NVTX_INJECTION64_PATH", None)
    return _DEFERRED is not None


def attach_now():
    """Loads the library `defer_injection()` set aside and starts it (its InitializeInjection,
    which the driver would have called): from here `pause`/`resume` reach it. Call after CUDA
    started. False when nothing was deferred; raises RuntimeError when the library cannot be
    loaded."""
    global _LIB, _LOOKED
    if _DEFERRED is None:
        return False
    try:
        lib = ctypes.CDLL(_DEFERRED, mode=os.RTLD_NOW | os.RTLD_GLOBAL)
        lib.InitializeInjection.restype = ctypes.c_int
        lib.opbench_trace_pause.restype = ctypes.c_int
        lib.opbench_trace_resume.restype = ctypes.c_int
    except (OSError, AttributeError) as e:
        raise RuntimeError(f"trace_control.attach_now: cannot load {_DEFERRED}: {e}") from e
    lib.InitializeInjection()
    _LIB, _LOOKED = lib, True
    return True


def available():
    """Whether this process runs under `trace` with a library that can pause and resume."""
    return _lib() is not None


def _call(what):
    """opbench_trace_<what> of the library: True when done, False without `trace`; raises
    RuntimeError when the library refused (it says why on stderr)."""
    lib = _lib()
    if lib is None:
        return False
    if getattr(lib, f"opbench_trace_{what}")() != 0:
        raise RuntimeError(f"trace_control.{what}: the tracer refused (see its message above)")
    return True


def pause():
    """Stops recording (call after torch.cuda.synchronize()). True when recording stopped;
    False without `trace`. Raises RuntimeError when the library refused (already paused, or the
    program's own profiler took CUPTI over)."""
    return _call("pause")


def resume():
    """Starts recording again. True when recording started; False without `trace`. Raises
    RuntimeError when the library refused (already recording, or the program's own profiler
    took CUPTI over)."""
    return _call("resume")
