"""bench/peers/layernorm_peers.py without a GPU: the rotation rule (the same numbers as
src/gpu/rotation.rs's tests), the plan read from a layernorm artifact, and the peer file it
writes, compared with tests/fixtures/layernorm_peers/peers_valid.json (the file the Rust merge
tests read), and the clock readings that flag throttled samples. OPBENCH_REFRESH_FIXTURES=1
rewrites that fixture.
Run: python3 -m unittest tests/python/test_layernorm_peers.py"""

import json
import os
import sys
import tempfile
import time
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench/peers"))

import layernorm_peers as lp  # noqa: E402

FIXTURES = REPO / "tests/fixtures/layernorm_peers"
MB = 1 << 20


def plan():
    return json.loads((FIXTURES / "layernorm.json").read_text())


def fake_peer_file():
    """What the GPU run writes for the fixture's points, with made-up times: torch timed at
    every point, torch-compile failing its check at 4096x1024 f16, triton erroring at 1x2048."""
    a = plan()
    points = lp.read_plan(a, 100)
    l2 = lp.l2_rule(a)
    rows = []
    for i, pt in enumerate(points):
        method, per, sets, _held, _flush, note = lp.timing_plan(pt, l2[1], l2[0])
        timing = {"method": method, "warmup": max(pt["warmup"], sets),
                  "launches_per_sample": per}
        if method == lp.METHOD_ROTATING:
            timing["rotation"] = {"sets": sets, "l2_bytes": l2[1], "l2_multiple": l2[0]}
        ok = {"reference": "float64 (torch on the GPU)", "max_abs_err": 1e-3, "rel_err": pt["tolerance"] / 10,
              "tolerance": pt["tolerance"], "passed": True}
        samples = [10.0 + i + 0.01 * k for k in range(5)]
        rows.append(lp.peer_row("torch", pt, "ok", samples=samples, timing=timing,
                                correctness=ok, notes=[note]))
        if pt["params"]["shape"] == "4096x1024":
            bad = dict(ok, rel_err=lp.NAN_ERR, max_abs_err=lp.NAN_ERR, passed=False)
            rows.append(lp.peer_row("torch-compile", pt, "failed", correctness=bad,
                                    notes=["off the float64 reference: not timed"]))
        else:
            rows.append(lp.peer_row("triton", pt, "failed", notes=["error: no registers"]))
    device = {"name": a["env"]["gpu"]["name"], "uuid": lp.bare_uuid(a["env"]["gpu"]["uuid"])}
    return {"rows": rows, "notes": ["layernorm peers: torch 0.0 (fixture)"], "device": device}


class LayerNormPeersTest(unittest.TestCase):
    def test_the_rotation_rule_is_rusts(self):
        l2 = 50 * MB
        self.assertEqual(lp.sets_needed(64 * MB, l2, 2), 3)
        self.assertEqual(lp.sets_needed(25 * MB, l2, 2), 5)
        self.assertEqual(lp.sets_needed(128 * MB, l2, 2), 2)
        self.assertEqual(lp.sets_needed(16 * MB, l2, 2), 8)
        self.assertEqual(lp.sets_needed(16 * MB, l2, 4), 14)
        self.assertEqual(lp.sets_needed(0, l2, 2), 2 * l2 + 1)
        self.assertIsNone(lp.plan_sets(8 * 1024, l2, 2))
        self.assertEqual(lp.plan_sets(8 * MB, l2, 2), 14)
        smallest = -(-(2 * l2) // (lp.MAX_SETS - 1))
        self.assertEqual(lp.plan_sets(smallest, l2, 2), lp.MAX_SETS)
        self.assertIsNone(lp.plan_sets(smallest - 1, l2, 2))

    def test_the_plan_mirrors_our_rows(self):
        a = plan()
        self.assertEqual(lp.l2_rule(a), (2, 62914560))
        points = lp.read_plan(a, 100)
        self.assertEqual([(p["params"]["shape"], p["params"]["dtype"], p["params"]["mode"])
                          for p in points],
                         [("4096x1024", "f16", "warm"), ("4096x1024", "f16", "cold"),
                          ("1x2048", "f32", "warm"), ("1x2048", "f32", "cold")])
        candle = [r["params"] for r in a["results"] if r["implementation"] == "candle"]
        self.assertEqual([p["params"] for p in points], candle)
        self.assertTrue(all(p["mirror"]["implementation"] == "opbench" for p in points))
        self.assertEqual([p["samples"] for p in points], [100] * 4)
        self.assertEqual([p["samples"] for p in lp.read_plan(a, 30)], [30] * 4)
        self.assertEqual([p["tolerance"] for p in points], [1e-2, 1e-2, 1e-5, 1e-5])
        l2 = lp.l2_rule(a)
        plans = [lp.timing_plan(p, l2[1], l2[0]) for p in points]
        # Warm: held, 20 per sample, one set; 4096x1024 f16 cold: the 9 sets our row rotated;
        # 1x2048 cold: too small to rotate, flushed per single launch as ours was.
        self.assertEqual(plans[0], (lp.METHOD_HELD, 20, 1, True, False, None))
        self.assertEqual(plans[1], (lp.METHOD_ROTATING, 20, 9, True, False, None))
        self.assertEqual(plans[3][:5], (lp.METHOD_EVENTS, 1, 1, False, True))
        self.assertIn("7681 buffer sets", plans[3][5])
        # A plan row whose note names another count is flagged.
        points[1]["mirror_sets"] = 8
        self.assertIn("rotated 8 sets", lp.timing_plan(points[1], l2[1], l2[0])[5])
        a["kind"] = "gemm"
        with self.assertRaises(SystemExit):
            lp.read_plan(a, 100)

    def test_the_peer_file_is_the_fixture_the_merge_reads(self):
        got = fake_peer_file()
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "peers.json")
            lp.write_json_atomic(out, got)
            got = json.loads(Path(out).read_text())
            with self.assertRaises(ValueError):
                lp.write_json_atomic(os.path.join(d, "nan.json"), {"nan": float("nan")})
        fixture = FIXTURES / "peers_valid.json"
        if os.environ.get("OPBENCH_REFRESH_FIXTURES"):
            fixture.write_text(json.dumps(got, indent=1) + "\n")
        self.assertEqual(got, json.loads(fixture.read_text()))

    def test_a_reading_is_throttled_by_a_reason_or_a_busy_sm_clock_below_the_top(self):
        top = 1980
        self.assertFalse(lp.throttled_reading(0x0, 1980, top))
        self.assertFalse(lp.throttled_reading(0x1, 345, top), "idle: a low clock slows nothing")
        self.assertTrue(lp.throttled_reading(0x4, 1980, top), "software power cap")
        self.assertTrue(lp.throttled_reading(0x1 | 0x20, 345, top), "a reason beside idle")
        self.assertTrue(lp.throttled_reading(0x0, 1755, top), "busy below the top clock")
        self.assertFalse(lp.throttled_reading(0x0, None, top), "clock unreadable")

    def test_the_clocks_are_read_at_most_every_interval_and_unreadable_means_not_held(self):
        reads = []

        class Nvml:
            def nvmlDeviceGetClockInfo(self, handle, clock, out):
                out._obj.value = 1980
                return 0

        def reasons(handle, out):
            reads.append(handle)
            out._obj.value = 0x4 if len(reads) > 1 else 0x0
            return 0

        c = lp.Clocks(Nvml(), "h", 1980, reasons)
        self.assertFalse(c.throttled_recently())
        self.assertFalse(c.throttled_recently(), "within the interval: the same reading")
        self.assertEqual(len(reads), 1)
        time.sleep(lp.THROTTLE_READ_INTERVAL_S * 1.5)
        self.assertTrue(c.throttled_recently(), "a new reading: the power cap")
        self.assertEqual(len(reads), 2)
        self.assertFalse(lp.Clocks(Nvml(), "h", 1980, lambda h, out: 999).throttled_now())

    def test_uuids_compare_without_the_nvml_prefix(self):
        nvml = "GPU-fc291897-cc49-0644-5c55-0b3d9817f154"
        for torch_form in ["fc291897-cc49-0644-5c55-0b3d9817f154",
                           "UUID('FC291897-CC49-0644-5C55-0B3D9817F154')",
                           "fc291897cc4906445c550b3d9817f154"]:
            self.assertEqual(lp.bare_uuid(torch_form), lp.bare_uuid(nvml))
        self.assertEqual(lp.bare_uuid(nvml), nvml[4:])
        self.assertEqual(lp.bare_uuid(None), "")
        self.assertEqual(lp.bare_uuid("GPU-short"), "")


if __name__ == "__main__":
    unittest.main()
