"""python/opbench/trace_control.py against a stand-in injection library (compiled with cc) that refuses
a pause or resume out of turn as the real one does, and that the program can start itself
(defer_injection/attach_now); and --mode alternate of
bench/trace_workloads/tinyllama_generate.py without torch or `trace` (the control: both halves
untraced, in the UT/TU order). Run: python3 -m unittest tests/python/test_trace_control.py"""

import ctypes
import os
import subprocess
import sys
import tempfile
import types
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python"))
sys.path.insert(0, str(REPO / "bench" / "trace_workloads"))

import tinyllama_generate  # noqa: E402
from opbench import trace_control  # noqa: E402

STUB = r"""
static int on;
int opbench_trace_pause(void) { if (!on) return 1; on = 0; return 0; }
int opbench_trace_resume(void) { if (on) return 1; on = 1; return 0; }
int stub_on(void) { return on; }
static int inits;
int InitializeInjection(void) { inits++; return 1; }
int stub_inits(void) { return inits; }
"""


def fresh(env):
    """trace_control looking the library up anew in `env`."""
    trace_control._LIB, trace_control._LOOKED = None, False
    trace_control._lib(env)


def alternate_under_profiler(args, profile, generate, synchronize, clock):
    """tinyllama_generate.alternate with `profile` standing in for torch.profiler's, `synchronize`
    for torch.cuda.synchronize and clock[0] (seconds) for time.perf_counter."""
    torch = types.SimpleNamespace(cuda=types.SimpleNamespace(synchronize=synchronize))
    profiler = types.SimpleNamespace(ProfilerActivity=types.SimpleNamespace(CUDA=1), profile=profile)
    real = tinyllama_generate.time.perf_counter
    tinyllama_generate.time.perf_counter = lambda: clock[0]
    saved = sys.modules.get("torch.profiler")
    sys.modules["torch.profiler"] = profiler
    try:
        return tinyllama_generate.alternate(args, torch, generate, 1.0)
    finally:
        tinyllama_generate.time.perf_counter = real
        if saved is None:
            del sys.modules["torch.profiler"]
        else:
            sys.modules["torch.profiler"] = saved


class TraceControl(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        src = Path(cls.tmp.name) / "stub.c"
        src.write_text(STUB)
        cls.lib = str(Path(cls.tmp.name) / "libstub_inject.so")
        subprocess.run(["cc", "-shared", "-fPIC", "-o", cls.lib, str(src)], check=True)
        cls.unloaded = str(Path(cls.tmp.name) / "libnot_loaded.so")
        subprocess.run(["cc", "-shared", "-fPIC", "-o", cls.unloaded, str(src)], check=True)
        cls.deferred = str(Path(cls.tmp.name) / "libdeferred.so")
        subprocess.run(["cc", "-shared", "-fPIC", "-o", cls.deferred, str(src)], check=True)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()
        fresh({})

    def test_without_trace_nothing_happens_and_nothing_fails(self):
        for env in ({}, {"CUDA_INJECTION64_PATH": self.unloaded}):
            fresh(env)
            self.assertFalse(trace_control.available(), env)
            self.assertFalse(trace_control.pause())
            self.assertFalse(trace_control.resume())

    def test_the_loaded_library_is_called_and_a_refusal_raises(self):
        loaded = ctypes.CDLL(self.lib)  # as the CUDA driver loads the injection library
        fresh({"CUDA_INJECTION64_PATH": self.lib})
        self.assertTrue(trace_control.available())
        with self.assertRaises(RuntimeError):
            trace_control.pause()  # started paused: nothing to pause
        self.assertTrue(trace_control.resume())
        self.assertEqual(loaded.stub_on(), 1)
        with self.assertRaises(RuntimeError):
            trace_control.resume()
        self.assertTrue(trace_control.pause())
        self.assertEqual(loaded.stub_on(), 0)

    def test_the_program_can_start_the_library_itself_after_cuda(self):
        fresh({})
        trace_control._DEFERRED = None
        self.assertFalse(trace_control.attach_now(), "nothing deferred: nothing to attach")
        env = {"CUDA_INJECTION64_PATH": self.deferred, "NVTX_INJECTION64_PATH": self.deferred, "X": "1"}
        self.assertTrue(trace_control.defer_injection(env))
        self.assertEqual(env, {"X": "1"}, "the driver and NVTX must not see the library")
        self.assertFalse(trace_control.available())
        self.assertTrue(trace_control.attach_now())
        self.assertTrue(trace_control.available())
        loaded = ctypes.CDLL(self.deferred)
        self.assertEqual(loaded.stub_inits(), 1, "started once, as the driver would")
        self.assertTrue(trace_control.resume())
        self.assertEqual(loaded.stub_on(), 1)
        self.assertTrue(trace_control.pause())
        self.assertFalse(trace_control.defer_injection({}), "no library to defer")
        trace_control._DEFERRED = str(Path(self.tmp.name) / "missing.so")
        with self.assertRaises(RuntimeError):
            trace_control.attach_now()
        trace_control._DEFERRED = None

    def test_alternate_pairs_generations_in_the_ut_tu_order(self):
        fresh({})
        order = []
        clock = [0.0]
        # Each generation takes 10 ms more than the one before: a drifting host.
        def generate():
            order.append(len(order))
            clock[0] += (10 + len(order)) / 1e3

        torch = types.SimpleNamespace(cuda=types.SimpleNamespace(synchronize=lambda: None))
        args = types.SimpleNamespace(pairs=4, new_tokens=2, recorder="trace", before=0, settle_s=0)
        real = tinyllama_generate.time.perf_counter
        tinyllama_generate.time.perf_counter = lambda: clock[0]
        try:
            r = tinyllama_generate.alternate(args, torch, generate, 1.0)
        finally:
            tinyllama_generate.time.perf_counter = real
        self.assertFalse(r["traced"])
        self.assertEqual(len(order), 1 + 2 * 4, "one discarded generation, then the pairs")
        # Generation n (1-based) lasts 10 + n ms over 2 tokens. Pairs: (U2,T3) (T4,U5) (U6,T7)
        # (T8,U9): the UT/TU order makes the drift cancel in the median.
        for got, want in (
            (r["untraced_ms_per_token"], [6.0, 7.5, 8.0, 9.5]),
            (r["traced_ms_per_token"], [6.5, 7.0, 8.5, 9.0]),
        ):
            self.assertEqual([round(x, 9) for x in got], want)
        self.assertAlmostEqual(r["pair_pct"][0], (6.5 / 6.0 - 1) * 100)
        self.assertAlmostEqual(r["pair_pct"][1], (7.0 / 7.5 - 1) * 100)
        self.assertLess(abs(r["pair_pct_median"]), 2.0)
        self.assertNotIn("before_ms_per_token_median", r)

    def test_alternate_times_a_never_recorded_baseline_first(self):
        fresh({})
        clock = [0.0]
        state = {"recorded_once": False, "n": 0}
        profiling = [False]
        # 10 ms a generation until the recorder is first used, 12 ms untraced after it (a cost
        # it leaves behind), 15 ms while recording: the pairs read +25%, the baseline +50%.
        def generate():
            state["n"] += 1
            clock[0] += (15 if profiling[0] else 12 if state["recorded_once"] else 10) / 1e3

        class Profile:
            def __init__(self, activities):
                pass

            def __enter__(self):
                profiling[0] = True
                state["recorded_once"] = True

            def __exit__(self, *exc):
                profiling[0] = False

        args = types.SimpleNamespace(pairs=2, new_tokens=1, recorder="profiler", before=3, settle_s=0)
        r = alternate_under_profiler(args, Profile, generate, lambda: None, clock)
        self.assertEqual(state["n"], 3 + 1 + 2 * 2, "the baseline, one discarded, the pairs")
        self.assertEqual([round(x, 9) for x in r["before_ms_per_token"]], [10.0, 10.0, 10.0])
        self.assertAlmostEqual(r["pair_pct_median"], 25.0)
        self.assertAlmostEqual(r["untraced_over_before_pct"], 20.0)
        self.assertAlmostEqual(r["traced_over_before_pct"], 50.0)
        for half in ("untraced", "traced"):
            self.assertGreaterEqual(r[f"{half}_thread_cpu_ms_per_token_median"], 0.0)
            self.assertGreaterEqual(r[f"{half}_process_cpu_ms_per_token_median"], 0.0)

    def test_a_recorder_that_detaches_in_the_next_cuda_call_does_so_outside_the_timing(self):
        fresh({})
        clock = [0.0]
        teardown = [False]
        profiling = [False]
        # 10 ms a generation untraced, 12 ms recording; after each profile the next CUDA call
        # (of any half) pays 40 ms detaching CUPTI, as Kineto's teardown does.
        def generate():
            clock[0] += (12 if profiling[0] else 10) / 1e3

        def synchronize():
            if teardown[0]:
                teardown[0] = False
                clock[0] += 40 / 1e3

        class Profile:
            def __init__(self, activities):
                pass

            def __enter__(self):
                profiling[0] = True

            def __exit__(self, *exc):
                profiling[0] = False
                teardown[0] = True

        args = types.SimpleNamespace(pairs=3, new_tokens=1, recorder="profiler", before=0, settle_s=0)
        r = alternate_under_profiler(args, Profile, generate, synchronize, clock)
        self.assertEqual([round(x, 9) for x in r["untraced_ms_per_token"]], [10.0] * 3)
        self.assertAlmostEqual(r["pair_pct_median"], 20.0)
        self.assertAlmostEqual(r["settle_ms_after_traced_median"], 40.0)
        self.assertAlmostEqual(r["settle_ms_after_untraced_median"], 0.0)


if __name__ == "__main__":
    unittest.main()
