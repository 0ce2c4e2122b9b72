"""The verdict of scripts/device/trace_workloads.sh's overhead check (its overhead_report shell
function), on per-process figures written as the generate script prints them: PASS within the
bar, FAIL over it, UNDECIDED where the untraced processes alone spread more than the bar, and
decided anyway where every traced process is slower by more than the bar than every untraced one,
or than the untraced process of its own round.
Run: python3 -m unittest tests/python/test_trace_overhead_report.py"""

import json
import re
import subprocess
import tempfile
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCRIPT = (REPO / "scripts/device/trace_workloads.sh").read_text()
FUNCTION = re.search(r"^overhead_report\(\) \{\n.*?^\}\n", SCRIPT, re.S | re.M).group(0)


def report(figures, *variants, bar="0.05"):
    """Runs overhead_report on {tag: [(ms_per_token, host_control_ms), ...]} (round 0 discarded
    as in the script); returns (exit code, output)."""
    with tempfile.TemporaryDirectory() as w:
        for tag, runs in figures.items():
            for i, (ms, control) in enumerate(runs):
                line = json.dumps({"ms_per_token_median": ms, "host_control_ms": control})
                Path(w, f"ov_eager_{tag}_{i}.out").write_text("a log line\n" + line + "\n")
        n = len(figures["untraced"]) - 1
        r = subprocess.run(["bash", "-c", FUNCTION + f'overhead_report eager "$0" {n} {bar} "$@"', w, *variants],
                           capture_output=True, text=True)
        return r.returncode, r.stdout + r.stderr


class OverheadVerdict(unittest.TestCase):
    def test_within_the_bar_passes_and_variants_are_reported(self):
        u = [(20.0, 22)] + [(17.0 + i * 0.1, 22) for i in range(5)]
        t = [(20.0, 22)] + [(17.4 + i * 0.1, 22) for i in range(5)]
        v = [(20.0, 22)] + [(19.0, 22)] * 5
        rc, out = report({"untraced": u, "default": t, "kinds": v}, "kinds")
        self.assertEqual(rc, 0, out)
        self.assertIn("eager ms/token default: [17.4, 17.5, 17.6, 17.7, 17.8] median 17.6000; overhead +2.33%", out)
        self.assertIn("eager ms/token kinds: [19.0, 19.0, 19.0, 19.0, 19.0] median 19.0000; overhead +10.47%", out)
        self.assertNotIn("UNDECIDED", out)

    def test_over_the_bar_on_a_quiet_host_fails(self):
        u = [(20.0, 22)] + [(17.0, 22)] * 5
        t = [(20.0, 22)] + [(18.0, 22)] * 5
        rc, out = report({"untraced": u, "default": t})
        self.assertEqual(rc, 1, out)
        self.assertIn("overhead +5.88%", out)
        self.assertNotIn("UNDECIDED", out)

    def test_a_spread_wider_than_the_bar_is_undecided_unless_every_traced_run_is_slower(self):
        u = [(20.0, 22)] + [(17.0, 22), (15.5, 22), (18.2, 22), (16.3, 22), (18.8, 22)]
        overlapping = [(20.0, 22)] + [(16.0, 22), (19.0, 22), (20.0, 22), (21.0, 22), (22.0, 22)]
        rc, out = report({"untraced": u, "default": overlapping})
        self.assertEqual(rc, 1, out)
        self.assertIn("UNDECIDED", out)
        apart = [(20.0, 22)] + [(26.3, 22), (23.3, 22), (23.7, 22), (22.8, 22), (29.7, 22)]
        rc, out = report({"untraced": u, "default": apart})
        self.assertEqual(rc, 1, out)
        self.assertNotIn("UNDECIDED", out)
        self.assertIn("decided despite the spread", out)

    def test_a_slower_traced_run_in_every_round_decides_a_drifting_host(self):
        # The host slows down from round 3 on: the medians overlap, each round's pair does not.
        u = [(20.0, 22)] + [(15.87, 22), (15.90, 22), (31.34, 22), (33.87, 22), (31.84, 22)]
        t = [(20.0, 22)] + [(21.75, 22), (27.48, 22), (39.42, 22), (50.01, 22), (37.88, 22)]
        rc, out = report({"untraced": u, "default": t})
        self.assertEqual(rc, 1, out)
        self.assertIn("round by round: ['+37.1%', '+72.8%', '+25.8%', '+47.7%', '+19.0%']; median +37.05%", out)
        self.assertIn("in each of the 5 rounds the traced process is more than 5% slower", out)
        self.assertNotIn("UNDECIDED", out)
        t[4] = (31.0, 22)
        rc, out = report({"untraced": u, "default": t})
        self.assertIn("UNDECIDED", out)

    def test_figures_over_the_host_control_are_printed_beside(self):
        u = [(20.0, 22)] + [(17.0, 20), (25.5, 30), (17.0, 20), (20.4, 24), (20.4, 24)]
        t = [(20.0, 22)] + [(22.1, 20)] * 5
        rc, out = report({"untraced": u, "default": t})
        self.assertIn("eager ms/token per host-control ms: untraced [0.85, 0.85, 0.85, 0.85, 0.85]", out)
        self.assertIn("eager: host control ms per process: untraced [20, 30, 20, 24, 24]", out)


if __name__ == "__main__":
    unittest.main()
