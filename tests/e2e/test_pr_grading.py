"""Pull-request grading as the student repository's workflow runs it, locally: the grader
bundle from `make release` grades a checkout of the student repository with a GitHub
environment (job summary, event payload, outputs, a fake secret).

- the summary and the comment body are produced, the outputs name the pull request;
- a submission that edits the rubric, a public test or the engine is graded as if it had
  not (same score) and is reported `tampered` with the list of files;
- a submission that reads its environment never sees the secret;
- a pass mark fails the check below it, and the summary, the comment and every report say so;
- the instructor's hidden-detail level holds in every file the student can see: the summary,
  the comment, the log and every file of the uploaded `reports` artifact.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess

import pytest
import xmlschema
import yaml
from helpers import MATRIX, REPO, SOLUTIONS, UNIT, borrowed_venv

# The scenarios of one delivery path run in `make sweep` (CI runs it after `make test`);
# `make test` sends half-finished work through every path once (test_journey.py).
pytestmark = pytest.mark.sweep

JUNIT_XSD = REPO / "tests" / "junit-10.xsd"
SECRET = "fake-deploy-key-7c1e9b"
# The row maximum taken over the padding too (a kill-matrix mutant): it fails a hidden test
# without a diagnosis, so its rubric hint is what the "hints" level adds to "tests".
MUTANT = tuple(next(m for m in MATRIX["attention"]["mutants"] if m["name"] == "max_includes_padding")["replace"][0])


@pytest.fixture(scope="module")
def release(dist):
    """The release and a python whose `autograder` is the grader bundle's."""
    return dist, borrowed_venv(dist / "venv", dist / "grader-bundle")


def checkout(release, tmp_path, edit=None):
    """A pull request's checkout: the student repository with finished modules (the
    attention module with one mistake), optionally edited further by `edit(folder)`."""
    dist, _ = release
    folder = tmp_path / "submission"
    shutil.copytree(dist / "student", folder, symlinks=True)
    for module in SOLUTIONS.glob("*.py"):
        shutil.copyfile(module, folder / UNIT.stubs / module.name)
    attention = folder / UNIT.stubs / "attention.py"
    text = attention.read_text()
    assert MUTANT[0] in text
    attention.write_text(text.replace(MUTANT[0], MUTANT[1]))
    if edit:
        edit(folder)
    return folder


def grade_pr(release, tmp_path, folder, *extra):
    dist, python = release
    summary, outputs, event = tmp_path / "summary.md", tmp_path / "outputs.txt", tmp_path / "event.json"
    event.write_text(json.dumps({"action": "synchronize", "pull_request": {"number": 7}}))
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    env.update(GITHUB_STEP_SUMMARY=str(summary), GITHUB_OUTPUT=str(outputs), GITHUB_EVENT_PATH=str(event),
               GRADER_DEPLOY_KEY=SECRET, GITHUB_ACTIONS="true")
    out = tmp_path / "reports"
    proc = subprocess.run([str(python), "-m", "autograder", "pr", str(folder), "--manifest",
                           str(dist / "grader-bundle" / "protected-files.sha256"), "--out", str(out),
                           "--seed", "5", *extra], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    score = json.loads((out / "score.json").read_text()) if (out / "score.json").exists() else {}
    return proc, score, out, summary, outputs


def everything(out) -> str:
    return "\n".join(p.read_text(errors="replace") for p in out.iterdir() if p.suffix in (".json", ".md", ".xml", ".yaml"))


@pytest.fixture(scope="module")
def honest(release, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("honest")
    return grade_pr(release, tmp, checkout(release, tmp))


def test_an_honest_pull_request_is_graded_with_summary_comment_and_outputs(honest):
    proc, score, out, summary, outputs = honest
    assert proc.returncode == 0, proc.stdout + proc.stderr
    attention = next(t for t in score["topics"] if t["id"] == "attention")
    assert attention["earned"] < attention["possible"], "the mistake in attention.py costs points"
    assert score["earned"] == score["possible"] - (attention["possible"] - attention["earned"])
    assert score["tampered"] == []
    assert summary.read_text().startswith("## Autograder:") and "hidden::" in summary.read_text()
    comment = (out / "comment.md").read_text()
    assert comment.startswith("<!-- autograder:score -->\n## Autograder:")
    assert "pr=7" in outputs.read_text() and f"score={score['earned']:g}" in outputs.read_text()
    assert {"junit.xml", "results.json", "evidence.yaml", "fault_injection.png"} <= {p.name for p in out.iterdir()}
    assert "fault_injection.png" not in summary.read_text(), "the summary cannot show the figure; the artifact has it"
    xmlschema.XMLSchema(str(JUNIT_XSD)).validate(str(out / "junit.xml"))    # CI dashboards validate it
    # the evidence describes the pull request's module folder, and its command replays the grading
    grade_cmd, lab_cmd = yaml.safe_load((out / "evidence.yaml").read_text())["commands"]
    assert grade_cmd.startswith("python -m autograder pr submission --manifest ") and "--seed 5" in grade_cmd
    assert f'"submission/{UNIT.stubs}"' in lab_cmd, lab_cmd


def _zero_the_failing_rubric_entry(folder):
    path = folder / "autograder" / "units" / UNIT.name / "topics" / "attention" / "rubric.yaml"
    path.write_text(path.read_text().replace("points: 1", "points: 0"))


def _public_test_that_always_passes(folder):
    path = folder / UNIT.stubs / "tests" / "test_attention.py"
    path.write_text(path.read_text() + "\n\ndef test_additive_attention_fixed_vector(attention):\n    pass\n")


def _engine_that_passes_everything(folder):
    path = folder / "autograder" / "grading" / "score.py"
    text = path.read_text()
    assert "passed = rec.outcome == Outcome.PASSED" in text, "the edit must change the engine"
    path.write_text(text.replace("passed = rec.outcome == Outcome.PASSED", "passed = True"))


def _workflow_that_posts_a_fake_score(folder):
    path = folder / ".github" / "workflows" / "x.yml"
    path.write_text("on: pull_request\njobs:\n  fake:\n    runs-on: ubuntu-latest\n    steps:\n"
                    "      - run: echo 'score=114'\n")


@pytest.mark.parametrize("edit,file", [
    (_zero_the_failing_rubric_entry, f"autograder/units/{UNIT.name}/topics/attention/rubric.yaml"),
    (_public_test_that_always_passes, f"{UNIT.stubs}/tests/test_attention.py"),
    (_engine_that_passes_everything, "autograder/grading/score.py"),
    (_workflow_that_posts_a_fake_score, ".github/workflows/x.yml (added)"),
], ids=["rubric", "public test", "engine", "added workflow"])
def test_tampering_changes_nothing_but_the_flag(release, tmp_path, honest, edit, file):
    proc, score, out, summary, _ = grade_pr(release, tmp_path, checkout(release, tmp_path, edit))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert score["earned"] == honest[1]["earned"], "graded with the original files"
    assert score["tampered"] == [file]
    assert "TAMPERED" in summary.read_text() and file in (out / "comment.md").read_text()
    assert "tampered" in (out / "junit.xml").read_text() and "TAMPERED" in (out / "results.json").read_text()
    assert json.loads((out / "results.json").read_text())["extra_data"]["tampered"] == [file]
    assert yaml.safe_load((out / "evidence.yaml").read_text())["tampered"] == [file]


SPY = '''

def additive_attention(*args, **kwargs):
    import os
    seen = {k: v for k, v in os.environ.items()}
    for name in os.listdir("/proc") if os.path.isdir("/proc") else []:
        try:
            seen[name] = open(f"/proc/{name}/environ").read()
        except OSError:
            pass
    raise RuntimeError(f"ENV {seen}")
'''


def test_student_code_never_sees_the_secret(release, tmp_path):
    def spy(folder):
        path = folder / UNIT.stubs / "attention.py"
        path.write_text(path.read_text() + SPY)

    proc, score, out, summary, _ = grade_pr(release, tmp_path, checkout(release, tmp_path, spy))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = everything(out) + summary.read_text()
    assert "ENV {" in text, "the spy ran and reported what it saw"
    assert SECRET not in text and "GRADER_DEPLOY_KEY" not in text and "GITHUB_OUTPUT" not in text


def test_a_pass_mark_fails_the_check_below_it_and_says_so(release, tmp_path, honest):
    pct = 100 * honest[1]["earned"] / honest[1]["possible"]
    folder = checkout(release, tmp_path)
    for mark, status, sentence in [(pct + 0.5, 1, "Below the pass mark"), (pct - 0.5, 0, "Pass mark reached")]:
        mark = round(mark, 2)
        proc, score, out, summary, _ = grade_pr(release, tmp_path, folder, "--fail-under", str(mark))
        assert proc.returncode == status, proc.stdout + proc.stderr
        assert sentence in proc.stdout and f"{mark:g}%" in proc.stdout, proc.stdout
        assert score["pass_mark"] == {"percent": mark, "reached": status == 0}
        for text in (summary.read_text(), (out / "comment.md").read_text(), (out / "results.json").read_text(),
                     (out / "junit.xml").read_text()):
            assert sentence in text and f"{mark:g}%" in text
        summary.unlink()


def _readable(path) -> str:
    """A file's text as a reader sees it: JSON strings decoded, Markdown escapes, entities and
    word joiners undone (a name hidden only by an escape is not hidden); a PNG's bytes (its
    text chunks are plain)."""
    if path.suffix == ".png":
        return path.read_bytes().decode("latin-1")
    text = path.read_text()
    if path.suffix == ".json":
        text = json.dumps(json.loads(text), ensure_ascii=False)
    return readable_text(text)


def readable_text(text: str) -> str:
    import html

    return html.unescape(text.replace("\\", "").replace("\u2060", ""))


def _word(text: str) -> re.Pattern:
    return re.compile(rf"(?<![A-Za-z0-9_]){re.escape(text)}(?![A-Za-z0-9_])")


@pytest.mark.parametrize("detail", ["total", "tests", "hints"])
def test_the_instructor_chooses_what_students_see_of_hidden_tests(release, tmp_path, honest, detail):
    """Every file the student can see — the job summary, the comment, the log, and every
    file of the `reports` artifact (each format, the evidence, the figure) — is searched for
    every hidden test's name and hint in the rubric."""
    proc, score, out, summary, _ = grade_pr(release, tmp_path, checkout(release, tmp_path), "--hidden-detail", detail)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    seen = {"summary": readable_text(summary.read_text()), "log": proc.stdout + proc.stderr}
    seen |= {f"reports/{p.name}": _readable(p) for p in out.iterdir()}
    assert {"reports/score.md", "reports/score.json", "reports/junit.xml", "reports/results.json",
            "reports/evidence.yaml", "reports/fault_injection.png", "reports/comment.md"} <= set(seen)
    rubric = [t for topic in UNIT.rubric.topics for t in topic.tests]
    hidden = [t for t in rubric if t.visibility == "hidden"]
    public_hints = {t.hint for t in rubric if t.visibility == "public"}
    hidden_hints = [readable_text(t.hint) for t in hidden if t.hint and t.hint not in public_hints]
    assert len(hidden) > 40 and hidden_hints
    for where, text in seen.items():
        names = [t.test for t in hidden if _word(t.test).search(text)]
        if detail == "total":
            assert not names, f"{where} names hidden tests at --hidden-detail total: {names[:5]}"
        if detail != "hints":
            hints = [h for h in hidden_hints if h in text]
            assert not hints, f"{where} shows hidden hints at --hidden-detail {detail}: {hints[:2]}"
    failed_hidden = [x for t in score["topics"] for x in t["tests"] if x["id"].startswith("hidden") and
                     x["outcome"] != "passed"]
    assert failed_hidden, "the mistake in attention.py fails hidden tests"
    text = seen["summary"]
    if detail == "total":
        assert "hidden tests:" in text and {x["id"] for x in failed_hidden} == {"hidden::*"}
    else:
        assert all(x["id"] in text for x in failed_hidden)
        assert any(x["hint"] and x["hint"][:40] in text for x in failed_hidden) == (detail == "hints")
