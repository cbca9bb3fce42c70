"""bench/kernelbench.py's summary on recorded results (no GPU, no torch):
fallbacks count 1.0x, ill-posed tasks are excluded and listed, wrong or
failed ModelNews count in no geomean, tasks below 0.98x are named."""

import math
import os
import sys
import unittest

ROOT = sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "bench"))
import kernelbench  # noqa: E402


def task(name, eager, compile_, new, **kw):
    r = {"set": "gen-1", "task": name, "eager_ms": eager, "compile_ms": compile_,
         "new_ms": new, "correct_1e4": True, "correct_1e2": True, "forward_choice": "new"}
    r.update(kw)
    return r


# Figures from H200 runs (bench/results): L2-2 and L2-9 of session 12, a
# forward that measured itself slower, a dropout task, a wrong one.
RESULTS = [
    task("2_a.py", 10.02, 2.54, 2.58),
    task("9_b.py", 2.87, 2.81, 2.86),
    task("3_c.py", 1.64, 1.20, 1.70, forward_choice="original",
         dropped_for_speed=[{"name": "kb_region_0", "kernel_ms": 1.8, "eager_ms": 0.5}]),
    task("4_d.py", 1.0, 0.8, 0.9, ill_posed=True, correct_1e4=False),
    task("5_e.py", 1.0, 0.8, 0.5, correct_1e4=False),
    {"set": "gen-1", "task": "6_f.py", "error": {"stage": "export", "message": "x"}},
    task("7_g.py", 1.0, 1.1, 1.05),
]


class Summary(unittest.TestCase):
    def setUp(self):
        self.s = kernelbench.summarize(RESULTS)["gen-1"]

    def test_fallback_counts_one(self):
        self.assertEqual(kernelbench.ratios(RESULTS[2]), (1.0, 1.20 / 1.64))
        self.assertEqual(self.s["fallbacks"], 1)
        self.assertEqual(self.s["regions_dropped_for_speed"], 1)

    def test_geomean_over_correct_well_posed(self):
        vs_eager = [10.02 / 2.58, 2.87 / 2.86, 1.0, 1.0 / 1.05]
        want = math.exp(sum(map(math.log, vs_eager)) / 4)
        self.assertAlmostEqual(self.s["geomean_vs_eager"], want)

    def test_correctness_among_well_posed(self):
        self.assertEqual(self.s["ill_posed"], ["4_d.py"])
        self.assertEqual(self.s["well_posed"], 6)
        self.assertEqual(self.s["correct_1e4"], 4)
        self.assertEqual(self.s["failed"], {"6_f.py": "export"})

    def test_slow_tasks_are_named(self):
        self.assertEqual(self.s["below_0.98_eager"], ["7_g.py"])
        self.assertAlmostEqual(self.s["min_vs_eager"], 1.0 / 1.05)


class TaskSets(unittest.TestCase):
    def test_dir_and_levels(self):
        gen = os.path.join(ROOT, "bench", "models")
        tasks = kernelbench.task_files(os.path.join(ROOT, "bench", "kernelbench"), [2],
                                       {1, 2}, [gen])
        self.assertEqual([t[0] for t in tasks[-2:]], ["level2", "level2"])  # folders first
        models = [t for t in tasks if t[0] == "models"]
        self.assertGreaterEqual(len(models), 10)
        self.assertEqual([t[1] for t in models], sorted(t[1] for t in models))


if __name__ == "__main__":
    unittest.main(verbosity=2)
