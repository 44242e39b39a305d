"""reports/evidence.yaml and reports/fault_injection.png (issue 4): a real grading run of the
reference fills seed 000's learn-llm.evidence.v1 template with real values; the figure has
one panel per signal (two for clipping), each graded, with the grader's curves and the
student's own figure keys, and a broken primitive shows in its curve."""

from __future__ import annotations

import datetime
import importlib
import json
import math
import os
import re
import shlex
import subprocess
import sys
import types

import yaml
from helpers import REPO, SOLUTIONS, STUBS, grade, make_submission

from autograder.units.rnn_prehistory import artefacts as evidence
from autograder.units.rnn_prehistory import fault_figure
from autograder.units.rnn_prehistory.lab import fault_lab
from autograder.units.rnn_prehistory.lab.record import LabRecord

SIGNALS = ["near_one_product_stays_bounded", "rho_below_one_gradient_decays", "rho_above_one_gradient_explodes",
           "rho_one_tanh_saturation_still_decays", "clipping_caps_norm_keeps_training_alive",
           "clipping_does_not_rescue_vanishing", "bptt_matches_finite_difference"]


def _placeholders(value, where="") -> list[str]:
    """Paths of every '<...>' placeholder left in a document."""
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _placeholders(v, f"{where}.{k}")]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _placeholders(v, f"{where}[{i}]")]
    return [where] if isinstance(value, str) and re.search(r"<[^<>]+>", value) else []


def _same_fields(doc, tmpl, where="") -> list[str]:
    """Differences in structure between the document and the template (keys, list lengths, names)."""
    if isinstance(tmpl, dict):
        if not isinstance(doc, dict):
            return [f"{where}: expected a mapping"]
        problems = [f"{where}.{k}: missing" for k in tmpl if k not in doc]
        problems += [f"{where}.{k}: not in the template" for k in doc if k not in tmpl]
        return problems + [p for k in tmpl if k in doc for p in _same_fields(doc[k], tmpl[k], f"{where}.{k}")]
    if isinstance(tmpl, list) and tmpl and isinstance(tmpl[0], dict):
        if not isinstance(doc, list) or len(doc) != len(tmpl):
            return [f"{where}: expected a list of {len(tmpl)} entries"]
        return [p for i, (d, t) in enumerate(zip(doc, tmpl)) for p in _same_fields(d, t, f"{where}[{i}]")]
    if isinstance(tmpl, list):
        return [] if isinstance(doc, list) and doc else [f"{where}: expected a non-empty list"]
    return []


def test_the_template_is_seed_000s():
    tmpl = evidence.template()
    assert tmpl["schema"] == "learn-llm.evidence.v1" and tmpl["module"] == "sequence-models-prehistory"
    assert [m["name"] for m in tmpl["metrics"]] == SIGNALS
    assert len(_placeholders(tmpl)) == 12, "commit, date, environment, command, 7 actual values, artifact"


def test_reference_run_fills_every_field_with_real_values(reference_score):
    score, out = reference_score
    doc = yaml.safe_load((out / "evidence.yaml").read_text())
    assert not _same_fields(doc, evidence.template()), _same_fields(doc, evidence.template())
    assert not _placeholders(doc), f"placeholders left: {_placeholders(doc)}"
    assert doc["schema"] == "learn-llm.evidence.v1"
    assert re.fullmatch(r"[0-9a-f]{40}( with uncommitted changes)?|not-a-git-checkout", doc["commit"])
    datetime.date.fromisoformat(str(doc["verified_at"]))
    assert re.fullmatch(r"python-\d+\.\d+\.\d+ numpy-\S+ [a-z0-9_]+-[a-z0-9_]+ cpu", doc["environment"])
    assert isinstance(doc["seed"], int) and doc["seed"] >= 0
    assert not any(re.search(r"(^|\s)/\S", c) for c in doc["commands"]), doc["commands"]
    metrics = {m["name"]: m for m in doc["metrics"]}
    for key in SIGNALS[:-1]:
        assert metrics[key]["expected"] is True and metrics[key]["actual"] is True, metrics[key]
    bptt = metrics["bptt_matches_finite_difference"]
    assert bptt["expected"] == "relative-error-under-1e-6"
    assert isinstance(bptt["actual"], float) and 0 < bptt["actual"] < 1e-6, bptt
    assert doc["known_failures"] == ["none"]
    assert score["signals"] == dict.fromkeys(SIGNALS, True)


def test_the_evidence_commands_run_as_written(reference_score):
    """From the folder the grader ran in: the grading command replays with the run's seed, and
    the lab command prints run_fault_injection(seed) of the submission, every signal true."""
    import os
    import sys

    score, out = reference_score
    doc = yaml.safe_load((out / "evidence.yaml").read_text())
    grade_cmd, lab_cmd = doc["commands"]
    python = shlex.split(grade_cmd)[0]       # "python", or the grading venv's python inside the folder
    assert python == "python" or (not os.path.isabs(python) and (REPO / python).is_file()), python
    assert grade_cmd.startswith(f"{shlex.quote(python)} -m autograder grade solutions/rnn_prehistory ")
    assert f"--seed {score['seed']}" in grade_cmd
    env = {**os.environ, "PATH": f"{os.path.dirname(sys.executable)}{os.pathsep}{os.environ['PATH']}"}
    proc = subprocess.run(lab_cmd, shell=True, cwd=REPO, capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert f"run_fault_injection({doc['seed']})" in lab_cmd
    for key in SIGNALS:
        assert f"'{key}': True" in proc.stdout, (key, proc.stdout[:500])


# The figure's panels, in order: clipping_caps_norm_keeps_training_alive has two (loss, update norm).
PANEL_SIGNALS = SIGNALS[:5] + [SIGNALS[4]] + SIGNALS[5:]
CLIP_NORM_PANEL = 5
UPDATE_LINE = fault_figure.CLIPPED_UPDATE
# topics/fault_injection/mutants.yaml, clip_per_tensor: every array clipped by its own norm.
PER_TENSOR_CLIP = ("clipped = {name: np.asarray(g, dtype=float) * scale for name, g in grads.items()}",
                   "clipped = {name: np.asarray(g, dtype=float) * min(1.0, max_norm / (np.linalg.norm(g) + 1e-300)) "
                   "for name, g in grads.items()}")


def _panels(path) -> list[dict]:
    return fault_figure.panels_of_png(path.read_bytes())


def _solution(name, replace=()):
    """A module of the reference solution; with text edits, a fresh copy under the same name."""
    if str(SOLUTIONS) not in sys.path:
        sys.path.insert(0, str(SOLUTIONS))
    if not replace:
        return importlib.import_module(name)
    path = SOLUTIONS / f"{name}.py"
    text = path.read_text()
    for old, new in replace:
        assert old in text, old
        text = text.replace(old, new)
    module = types.ModuleType(name)
    exec(compile(text, str(path), "exec"), module.__dict__)
    return module


def test_reference_run_draws_the_figure(reference_score):
    _, out = reference_score
    path = out / "fault_injection.png"
    # imported here, not at the top: every process of make test collects this file (~0.3 s)
    import matplotlib.image

    image = matplotlib.image.imread(path)
    width, height = (int(v * fault_figure.PLOT_DPI) for v in fault_figure.PLOT_SIZE_IN)
    assert image.shape[:2] == (height, width)
    assert image[..., :3].std() > 0.05, "the figure is blank"
    assert path.stat().st_size < 150_000
    panels = _panels(path)
    assert [p["signal"] for p in panels] == PANEL_SIGNALS
    for p in panels:
        assert p["mark"] == "PASS", p
        assert p["lines"] and all(line["points"] > 0 for line in p["lines"].values()), p
        assert p["student"], f"{p['signal']}: none of the student's figure keys drawn"
    by_title = {p["title"]: p["lines"] for p in panels}
    assert set(by_title["rho = 1"]) == {"tanh (median of 8)", "linear (weights only)"}
    assert panels[CLIP_NORM_PANEL]["lines"][UPDATE_LINE]["max"] <= fault_lab.TAU * (1 + 1e-9)
    vanish = panels[PANEL_SIGNALS.index("clipping_does_not_rescue_vanishing")]["lines"]
    for label in ("no clipping", "after clip_grad_norm"):        # ||dL/dx_t|| over t: ~1 down to ~1e-50
        assert vanish[label]["points"] == fault_lab.T_STEPS
        assert vanish[label]["min"] < 1e-10 < 1e-3 < vanish[label]["max"], vanish


def test_per_tensor_clipping_update_norms_exceed_tau():
    """The grader's clipping experiment keeps every step's update norm: through a clip that
    scales each array by its own norm, the update's global norm goes over tau."""
    bptt = _solution("bptt")
    good, bad = _solution("fault_injection"), _solution("fault_injection", [PER_TENSOR_CLIP])
    seed = fault_lab.SEED_POOL[0]
    ok = fault_lab.rerun_clipping(fault_lab.Primitives(good, bptt), seed)
    broken = fault_lab.rerun_clipping(fault_lab.Primitives(bad, bptt), seed)
    for result in (ok, broken):
        assert len(result["figure"]["update_norms"]) == len(result["figure"]["grad_norms"]) == 100
    assert max(ok["figure"]["update_norms"]) <= fault_lab.TAU * (1 + 1e-9)
    assert max(broken["figure"]["update_norms"]) > 1.2 * fault_lab.TAU      # up to sqrt(3) tau: 3 arrays
    assert max(broken["figure"]["grad_norms"]) > fault_lab.TAU


def test_a_per_tensor_clip_looks_wrong_in_the_figure(tmp_path):
    sub = make_submission(tmp_path / "sub", replace={"fault_injection.py": [PER_TENSOR_CLIP]})
    proc, score = grade(sub, tmp_path / "out", "--topic", "fault_injection")
    assert proc.returncode == 0 and "no figure" not in proc.stderr, proc.stderr
    panels = _panels(tmp_path / "out" / "fault_injection.png")
    assert [p["signal"] for p in panels] == PANEL_SIGNALS
    marks = {p["signal"]: p["mark"] for p in panels}
    assert marks["clipping_caps_norm_keeps_training_alive"] == "FAIL"
    assert marks["near_one_product_stays_bounded"] == marks["rho_below_one_gradient_decays"] == "PASS"
    norm = panels[CLIP_NORM_PANEL]
    assert norm["lines"][UPDATE_LINE]["max"] > 1.2 * fault_lab.TAU, norm
    assert any("above tau" in note for note in norm["notes"]), norm["notes"]


def test_the_figure_of_a_stub_submission(tmp_path):
    """Nothing implemented: the figure is still drawn, every panel failed, and a panel
    without curves says why (the error of the student's primitive)."""
    sub = make_submission(tmp_path / "sub", base=STUBS)
    proc, _ = grade(sub, tmp_path / "out", "--topic", "fault_injection")
    assert "no figure" not in proc.stderr, proc.stderr
    panels = _panels(tmp_path / "out" / "fault_injection.png")
    assert [p["signal"] for p in panels] == PANEL_SIGNALS
    assert {p["mark"] for p in panels} == {"FAIL"}
    assert not any(p["student"] for p in panels), "run_fault_injection returned nothing to draw"
    for signal in ("near_one_product_stays_bounded", "clipping_does_not_rescue_vanishing",
                   "bptt_matches_finite_difference"):
        p = panels[PANEL_SIGNALS.index(signal)]
        assert not p["lines"] and any("not implemented" in " ".join(n.split()) for n in p["notes"]), p


def test_a_public_only_run_draws_the_students_values(tmp_path):
    """Without the hidden suite (no curves, nothing graded) the panels hold the student's
    returned figure keys, marked as not graded."""
    returned = {"near_one_log_final": -3.0, "below_one_log_final": -600.0, "above_one_log_final": 47.0,
                "rho0.5_tanh_norm": 1e-30, "rho1.0_tanh_norm": 0.3, "rho1.0_linear_norm": 1.8,
                "rho1.5_tanh_norm": 2.0, "rho1.5_linear_norm": 7e17, "noclip_first_nonfinite_step": 2.0,
                "clip_loss_start": 1e7, "clip_loss_end": 0.01, "clip_max_update_norm": 5.0,
                "vanish_dx1_noclip": 1e-50, "vanish_dx1_clip": 1e-50, "vanish_dxT": 1.0, "bptt_rel_error": 1e-10}
    png = fault_figure.render_fault_plot(LabRecord(seed=7, returned=returned))
    panels = fault_figure.panels_of_png(png)
    assert [p["signal"] for p in panels] == PANEL_SIGNALS
    assert {p["mark"] for p in panels} == {"not graded"}
    drawn = {k: v for p in panels for k, v in p["student"].items()}
    assert drawn == returned
    assert not any(p["lines"] for p in panels)


def test_failures_and_missing_runs_are_reported_not_hidden(tmp_path):
    extras = LabRecord(seed=1003, returned_error="fault_injection.run_fault_injection raised KeyError")
    signals = dict.fromkeys(SIGNALS, True) | {"clipping_caps_norm_keeps_training_alive": False}
    del signals["bptt_matches_finite_difference"]
    command = f"python -m autograder grade {tmp_path / 'sub'}"
    path = evidence.write_evidence(tmp_path, extras, signals, tmp_path, command)
    doc = yaml.safe_load(path.read_text())
    assert doc["known_failures"] == ["clipping_caps_norm_keeps_training_alive", "bptt_matches_finite_difference"]
    assert all(m["actual"].startswith("not-measured") for m in doc["metrics"])
    assert doc["seed"] == 1003 and doc["commit"] == "not-a-git-checkout"
    assert str(tmp_path) not in doc["commands"][0] and doc["commands"][0].endswith("grade sub")
    assert evidence.write_fault_plot(tmp_path, extras) is None, "no curve data: no figure"


def test_student_values_are_the_actual_values(tmp_path):
    returned = dict.fromkeys(SIGNALS, True) | {"rho_above_one_gradient_explodes": False, "bptt_rel_error": 2.5e-10}
    doc = evidence.build_evidence(LabRecord(seed=7, returned=returned), dict.fromkeys(SIGNALS, True),
                                  tmp_path, "make grade")
    actual = {m["name"]: m["actual"] for m in doc["metrics"]}
    assert actual["rho_above_one_gradient_explodes"] is False and actual["near_one_product_stays_bounded"] is True
    assert math.isclose(actual["bptt_matches_finite_difference"], 2.5e-10)


def test_commit_of_a_git_checkout(tmp_path):
    git = ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run(git[:3] + ["init", "-q"], check=True)
    (tmp_path / "fault_injection.py").write_text("x = 1\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text("y = 1\n")
    subprocess.run(git + ["add", "fault_injection.py", "tests"], check=True)
    subprocess.run(git + ["commit", "-q", "-m", "submission"], check=True)
    head = subprocess.run(git[:3] + ["rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    assert evidence.submission_commit(tmp_path) == head
    assert evidence.submission_commit(tmp_path / "missing") == "not-a-git-checkout"
    (tmp_path / "tests" / "test_x.py").write_text("y = 2\n")
    assert evidence.submission_commit(tmp_path) == head, "only the graded module files count"
    (tmp_path / "bptt.py").write_text("z = 1\n")
    assert evidence.submission_commit(tmp_path) == f"{head} with uncommitted changes", "an untracked module file"
    (tmp_path / "bptt.py").unlink()
    (tmp_path / "fault_injection.py").write_text("x = 2\n")
    assert evidence.submission_commit(tmp_path) == f"{head} with uncommitted changes", "an edited module file"



def test_a_git_file_pointing_at_another_repository_is_not_followed(tmp_path):
    """A submitted folder whose `.git` is a file reading `gitdir: <the instructor's checkout>/.git`
    (as a worktree or a submodule has) would make the evidence name the instructor's commit."""
    instructor = tmp_path / "instructor"
    git = ["git", "-C", str(instructor), "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    instructor.mkdir()
    subprocess.run(git[:3] + ["init", "-q"], check=True)
    (instructor / "secret.txt").write_text("x\n")
    subprocess.run(git + ["add", "secret.txt"], check=True)
    subprocess.run(git + ["commit", "-q", "-m", "instructor"], check=True)
    student = tmp_path / "student"
    student.mkdir()
    (student / "bptt.py").write_text("x = 1\n")
    (student / ".git").write_text(f"gitdir: {instructor / '.git'}\n")
    assert evidence.submission_commit(student) == "not-a-git-checkout"


def test_the_commit_is_read_without_running_the_checkouts_git_hooks(tmp_path):
    """A submitted folder may carry its own .git: nothing its configuration names may run
    (git status would run core.fsmonitor, and clean filters, as commands)."""
    git = ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run(git[:3] + ["init", "-q"], check=True)
    (tmp_path / "bptt.py").write_text("x = 1\n")
    subprocess.run(git + ["add", "bptt.py"], check=True)
    subprocess.run(git + ["commit", "-q", "-m", "submission"], check=True)
    ran = tmp_path.parent / f"{tmp_path.name}-ran"
    subprocess.run(git[:3] + ["config", "core.fsmonitor", f"touch {ran}; false"], check=True)
    (tmp_path / ".gitattributes").write_text("*.py filter=evil\n")
    subprocess.run(git[:3] + ["config", "filter.evil.clean", f"touch {ran}; cat"], check=True)
    (tmp_path / "bptt.py").write_text("x = 2\n")
    assert evidence.submission_commit(tmp_path).endswith(" with uncommitted changes")
    assert not ran.exists(), "the checkout's git configuration ran a command"


def test_a_public_only_run_claims_no_signal_it_did_not_check(tmp_path):
    """The public tests check no signal: the evidence must neither list the seven as failed
    nor pass them as verified; it lists what the student's own values miss, and says so."""
    sub = make_submission(tmp_path / "sub")
    proc, score = grade(sub, tmp_path / "out", "--suite", "public", "--topic", "fault_injection")
    assert proc.returncode == 0, proc.stderr
    assert score["signals"] == {}, "no signal was checked"
    text = (tmp_path / "out" / "evidence.yaml").read_text()
    assert text.endswith("\n") and not text.endswith("\n\n")
    doc = yaml.safe_load(text)
    assert [m["actual"] for m in doc["metrics"][:-1]] == [True] * 6, "what the reference measured"
    assert not set(SIGNALS) & set(doc["known_failures"]), doc["known_failures"]
    assert len(doc["known_failures"]) == 1 and doc["known_failures"][0].startswith("not-verified"), doc
    # a student's own false value (and a failed gradient check) are failures even unchecked
    returned = dict.fromkeys(SIGNALS, True) | {"rho_above_one_gradient_explodes": False, "bptt_rel_error": 3e-4}
    doc = evidence.build_evidence(LabRecord(seed=7, returned=returned), {}, tmp_path, "make grade")
    assert doc["known_failures"][:2] == ["rho_above_one_gradient_explodes", "bptt_matches_finite_difference"]
    assert doc["known_failures"][2].startswith("not-verified") and len(doc["known_failures"]) == 3


def test_the_tampered_files_are_in_the_evidence(tmp_path):
    lab = LabRecord(seed=7, returned=dict.fromkeys(SIGNALS, True) | {"bptt_rel_error": 1e-9})
    signals = dict.fromkeys(SIGNALS, True)
    path = evidence.write_evidence(tmp_path, lab, signals, tmp_path, "make grade", tampered=["Makefile"])
    doc = yaml.safe_load(path.read_text())
    assert doc["tampered"] == ["Makefile"] and doc["known_failures"] == ["none"]
    path = evidence.write_evidence(tmp_path, lab, signals, tmp_path, "make grade")
    assert "tampered" not in yaml.safe_load(path.read_text()), "not checked (a plain grade): not said"


def test_sanitised_command_and_environment_hold_no_machine_paths(tmp_path):
    outside = tmp_path / "reports"
    cmd = evidence.sanitise_command(f"python -m autograder grade {REPO}/solutions/rnn_prehistory --out {outside}", REPO)
    assert cmd == "python -m autograder grade solutions/rnn_prehistory --out reports"
    env = evidence.sanitised_environment()
    assert "/" not in env and env.endswith(" cpu")


def test_the_figure_restates_the_labs_settings():
    """fault_figure.py ships to students (public-only runs draw it), lab/fault_lab.py does not."""
    assert (fault_figure.TAU, fault_figure.T_STEPS) == (fault_lab.TAU, fault_lab.T_STEPS)


def test_the_figure_is_drawn_without_matplotlib():
    """The figure is drawn with Pillow (raster.py): importing matplotlib and drawing with it
    cost more CPU than the rest of a grading. A drawing that pulls matplotlib in again fails here."""
    code = ("import sys; from autograder.units.rnn_prehistory import fault_figure; "
            "from autograder.units.rnn_prehistory.lab.record import LabRecord; "
            "png = fault_figure.render_fault_plot(LabRecord(seed=7, returned={'bptt_rel_error': 1e-10})); "
            "assert png[:8] == b'\\x89PNG\\r\\n\\x1a\\n'; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'matplotlib'))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]", proc.stdout


def _student_repository(tmp_path, modules) -> tuple:
    """A student's repository as `make grade` runs in it: the modules in assignments/, the
    grader importable from its own .venv; an environment with no `python` on PATH (the venv
    not activated). Returns (folder, its python, that environment)."""
    from helpers import UNIT, borrowed_venv

    repo = tmp_path / "my-course"
    make_submission(repo / UNIT.stubs, base=modules)
    python = borrowed_venv(repo / ".venv", REPO)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "LANGUAGE": "en"}
    return repo, python, env


def _make_grade(repo, python, env) -> subprocess.CompletedProcess:
    from helpers import UNIT

    return subprocess.run([os.path.relpath(python, repo), "-m", "autograder", "grade", str(UNIT.stubs), "--suite",
                           "public", "--out", "reports"], cwd=repo, capture_output=True, text=True, env=env,
                          timeout=300)


def test_the_evidence_commands_rerun_as_written_in_a_student_repository(tmp_path):
    """evidence.yaml's commands, run as printed from the repository's root (where the student
    ran `make grade`), the venv not activated: the grading gives the same scores with the same
    seed, and the lab prints the values the evidence recorded."""
    repo, python, env = _student_repository(tmp_path, SOLUTIONS)
    proc = _make_grade(repo, python, env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    first = json.loads((repo / "reports" / "score.json").read_text())
    doc = yaml.safe_load((repo / "reports" / evidence.EVIDENCE_FILE).read_text())
    grade_cmd, lab_cmd = doc["commands"]
    replay = subprocess.run(grade_cmd, shell=True, cwd=repo, capture_output=True, text=True, env=env, timeout=300)
    assert replay.returncode == 0, (grade_cmd, replay.stdout + replay.stderr)
    again = json.loads((repo / "reports" / "score.json").read_text())
    assert again["seed"] == first["seed"] and again["seed_from"] == "--seed"
    assert [(t["id"], t["earned"]) for t in again["topics"]] == [(t["id"], t["earned"]) for t in first["topics"]]
    lab = subprocess.run(lab_cmd, shell=True, cwd=repo, capture_output=True, text=True, env=env, timeout=120)
    assert lab.returncode == 0, (lab_cmd, lab.stderr)
    measured = {m["name"]: m["actual"] for m in doc["metrics"]}
    assert f"'bptt_rel_error': {measured['bptt_matches_finite_difference']!r}" in lab.stdout, lab.stdout[-300:]


def test_a_report_without_the_lab_files_says_why_they_are_absent(tmp_path):
    """The README promises evidence.yaml and fault_injection.png after `make grade`: while the
    lab is a stub (or raises), score.md and the terminal say why they are not there."""
    repo, python, env = _student_repository(tmp_path, STUBS)
    proc = _make_grade(repo, python, env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not (repo / "reports" / evidence.EVIDENCE_FILE).exists()
    assert not (repo / "reports" / evidence.PLOT_FILE).exists()
    md = (repo / "reports" / "score.md").read_text()
    for text in (md.replace("\\", ""), proc.stdout):
        assert "evidence.yaml and fault_injection.png were not written" in text, text[-800:]
        assert "run_fault_injection in fault_injection.py is not implemented yet" in text
    broken = make_submission(tmp_path / "raises", replace={"fault_injection.py": [(
        "def run_fault_injection(seed=42):", "def run_fault_injection(seed=42):\n    raise ValueError('no lab today')")]})
    _proc, _score = grade(broken, tmp_path / "out", "--suite", "public", "--topic", "fault_injection")
    md = (tmp_path / "out" / "score.md").read_text().replace("\\", "")
    assert "were not written" in md and "no lab today" in md, md
