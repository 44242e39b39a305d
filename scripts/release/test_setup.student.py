"""`make test`: the grader of this repository works on this machine, and its protected
files are as your instructor released them."""

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STUBS = ROOT / "{stubs}"


def test_protected_files_are_unchanged():
    changed = []
    for line in (ROOT / "protected-files.sha256").read_text().splitlines():
        if line.startswith("# link: "):            # a link of the release: "# link: <path> -> <target>"
            name, _arrow, target = line[len("# link: "):].partition(" -> ")
            if not (ROOT / name).is_symlink() or os.readlink(ROOT / name) != target:
                changed.append(name)
            continue
        digest, name = line.split(maxsplit=1)
        path = ROOT / name
        if path.is_symlink() or not path.is_file() or hashlib.sha256(path.read_bytes()).hexdigest() != digest:
            changed.append(name)
    assert not changed, f"these files differ from the release (restore them with git): {{changed}}"


def test_the_grader_grades_the_public_tests(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "autograder", "grade", str(STUBS), "--suite", "public",
                           "--out", str(tmp_path), "--quiet"], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    score = json.loads((tmp_path / "score.json").read_text())
    assert score["possible"] > 0 and [t["id"] for t in score["topics"]]
    assert all(x["id"].startswith("public::") for t in score["topics"] for x in t["tests"])
