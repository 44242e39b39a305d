"""Stable scores: the hidden inputs come from a seed derived from the submission's own files."""

from __future__ import annotations

import csv
import json

from helpers import SOLUTIONS, UNIT, grade, make_submission, run_in_process

from autograder.grading.seed import submission_seed


def test_the_seed_follows_the_module_files_and_nothing_else(tmp_path):
    base = submission_seed(UNIT, SOLUTIONS)
    copy = make_submission(tmp_path / "copy", files={"notes.txt": "not a module", "extra.py": "x = 1\n"})
    assert submission_seed(UNIT, copy) == base, "files that are not topic modules must not change the seed"
    crlf = make_submission(tmp_path / "crlf")
    (crlf / "bleu.py").write_bytes((crlf / "bleu.py").read_bytes().replace(b"\n", b"\r\n"))
    assert submission_seed(UNIT, crlf) == base, "a Windows checkout (CRLF) must get the seed a Linux one gets"
    edited = make_submission(tmp_path / "edited", files={})
    (edited / "attention.py").write_text((edited / "attention.py").read_text() + "\n# an edit\n")
    assert submission_seed(UNIT, edited) != base, "an edit of any topic module must give new inputs"
    missing = make_submission(tmp_path / "missing")
    (missing / "bptt.py").unlink()
    assert submission_seed(UNIT, missing) not in (base, submission_seed(UNIT, edited))
    assert 0 <= base < 2**31


def test_the_same_files_get_the_same_seed_and_score_and_every_report_says_which(tmp_path):
    runs = [grade(SOLUTIONS, tmp_path / f"run{i}", "--topic", "attention") for i in range(2)]
    (p1, s1), (p2, s2) = runs
    assert p1.returncode == p2.returncode == 0, p1.stderr + p2.stderr
    assert s1["seed"] == s2["seed"] == submission_seed(UNIT, SOLUTIONS) and s1["seed_from"] == "files"
    assert f"seed {s1['seed']}, derived from your files" in p1.stdout
    assert f"--seed {s1['seed']}" in (tmp_path / "run0" / "score.md").read_text()
    assert f'name="seed" value="{s1["seed"]}"' in (tmp_path / "run0" / "junit.xml").read_text()
    assert str(s1["seed"]) in json.loads((tmp_path / "run0" / "results.json").read_text())["output"]
    proc, replay = grade(SOLUTIONS, tmp_path / "replay", "--topic", "attention", "--seed", "7")
    assert proc.returncode == 0 and replay["seed"] == 7 and replay["seed_from"] == "--seed"


def test_class_csv_records_each_submission_seed(tmp_path):
    root = tmp_path / "class"
    make_submission(root / "alice")
    bob = make_submission(root / "bob")
    (bob / "attention.py").write_text((bob / "attention.py").read_text() + "\n# bob's copy\n")
    proc = run_in_process("batch", root, "--out", tmp_path / "out", "--jobs", "1", "--topic", "attention")
    assert proc.returncode == 0, proc.stderr
    rows = {r["submission"]: r for r in csv.DictReader((tmp_path / "out" / "class.csv").open())}
    for name in ("alice", "bob"):
        assert int(rows[name]["seed"]) == submission_seed(UNIT, root / name)
        assert int(rows[name]["seed"]) == json.loads((tmp_path / "out" / "students" / name / "score.json").read_text())["seed"]
    assert rows["alice"]["seed"] != rows["bob"]["seed"]


def test_grading_twice_gives_the_same_score_json_apart_from_durations(tmp_path):
    """A submission with mistakes (so messages carry numbers), on the topics whose hidden inputs
    and lab draw the most random numbers: the two score.json agree byte for byte once the
    duration is set aside."""
    from helpers import make_submission

    sub = make_submission(tmp_path / "sub", replace={
        "bleu.py": [("return math.exp(1.0 - ref_len / hyp_len)", "return math.exp(1.0 - hyp_len / ref_len)")],
        "bptt.py": [("        dWh += sdWh\n", "        dWh = sdWh\n")]})
    texts = []
    for i in range(2):
        proc, _ = grade(sub, tmp_path / f"run{i}", "--topic", "bleu", "--topic", "fault_injection", "--topic", "bptt")
        assert proc.returncode == 0, proc.stderr
        doc = json.loads((tmp_path / f"run{i}" / "score.json").read_text())
        doc.pop("duration_s")
        texts.append(json.dumps(doc, indent=1))
    assert texts[0] == texts[1]
    assert '"outcome": "failed"' in texts[0]
