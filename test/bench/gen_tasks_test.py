"""bench/gen_tasks.py: determinism, the distribution issue 21 fixes, and
tasks that are valid KernelBench files (no torch needed)."""

import ast
import filecmp
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "bench"))
import gen_tasks  # noqa: E402


def run(count, seed, out):
    r = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "gen_tasks.py"),
                        "--count", str(count), "--seed", str(seed), "-o", out],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stdout


class GenTasks(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp()
        cls.a = os.path.join(cls.tmp, "a")
        cls.out = run(150, 7, cls.a)
        with open(os.path.join(cls.a, "manifest.json")) as f:
            cls.manifest = json.load(f)

    def test_same_seed_same_files(self):
        b = os.path.join(self.tmp, "b")
        run(150, 7, b)
        names = sorted(os.listdir(self.a))
        self.assertEqual(names, sorted(os.listdir(b)))
        match, mismatch, errors = filecmp.cmpfiles(self.a, b, names, shallow=False)
        self.assertEqual((mismatch, errors), ([], []))

    def test_other_seed_other_tasks(self):
        c = os.path.join(self.tmp, "c")
        run(150, 8, c)
        self.assertNotEqual(sorted(os.listdir(self.a)), sorted(os.listdir(c)))

    def test_prefix_is_the_same_tasks(self):
        # A smaller --count is a prefix of the larger set (resumable runs).
        d = os.path.join(self.tmp, "d")
        run(12, 7, d)
        for name in os.listdir(d):
            if name != "manifest.json":
                self.assertTrue(filecmp.cmp(os.path.join(d, name), os.path.join(self.a, name),
                                            shallow=False), name)

    def test_fifty_single_ops_hundred_chains(self):
        h = self.manifest["histogram"]
        self.assertEqual(h["categories"], {"single": 50, "chain": 100})
        for e in self.manifest["tasks"]:
            if e["category"] == "single":
                self.assertIsNone(e["anchor"])
                self.assertEqual(len(e["ops"]), 1, e["file"])
            else:
                self.assertTrue(1 <= len(e["ops"]) <= 6, e["file"])
                if e["anchor"] is None:
                    self.assertGreaterEqual(len(e["ops"]), 2, e["file"])

    def test_anchor_share(self):
        chains = [e for e in self.manifest["tasks"] if e["category"] == "chain"]
        none = sum(e["anchor"] is None for e in chains) / len(chains)
        self.assertTrue(0.12 <= none <= 0.40, none)  # 25% drawn, 100 draws
        kinds = {e["anchor"] for e in chains} - {None}
        self.assertGreaterEqual(len(kinds), 8)

    def test_bytes_moved(self):
        for e in self.manifest["tasks"]:
            self.assertTrue(0.25e9 <= e["bytes"] <= 4e9, (e["file"], e["bytes"]))

    def test_every_pointwise_row_has_a_generator(self):
        rows = gen_tasks.op_table_pointwise()
        self.assertGreater(len(rows), 60)
        self.assertEqual(sorted(set(gen_tasks.POINTWISE) | gen_tasks.OLD_SIGNATURES |
                                gen_tasks.INDIRECT), rows)

    def test_the_families_all_occur(self):
        ops = self.manifest["histogram"]["ops"]
        for family in ("batch_norm", "group_norm", "instance_norm", "layer_norm", "softmax",
                       "log_softmax", "residual_add"):
            self.assertIn(family, ops)
        self.assertTrue(any(o.endswith("pool1d") or o.endswith("pool2d") or o.endswith("pool3d")
                            for o in ops))
        self.assertTrue(any(o.startswith("loss.") for o in ops))
        reductions = {"sum", "mean", "amax", "amin", "logsumexp", "var", "std", "argmax"}
        self.assertGreaterEqual(len(reductions & set(ops)), 6)
        classes = self.manifest["histogram"]["shape_classes"]
        for c in ("dim=leading", "dim=middle", "dim=trailing", "row=short", "row=long",
                  "rows=few", "rows=many"):
            self.assertIn(c, classes)

    def test_histogram_is_printed(self):
        self.assertIn("categories: chain 100, single 50", self.out)
        self.assertIn("shape classes:", self.out)
        self.assertIn("GB moved:", self.out)

    def test_files_are_kernelbench_tasks(self):
        for e in self.manifest["tasks"]:
            with open(os.path.join(self.a, e["file"])) as f:
                tree = ast.parse(f.read())
            names = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
            self.assertTrue({"Model", "get_inputs", "get_init_inputs"} <= names, e["file"])
            self.assertRegex(e["file"], r"^\d+_[A-Za-z0-9_]+\.py$")

    def test_bad_count_is_a_usage_error(self):
        r = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "gen_tasks.py"),
                            "--count", "0", "--seed", "1", "-o", self.tmp],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 2)
        self.assertIn("--count must be at least 1", r.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
