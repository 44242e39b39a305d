"""reports/evidence.yaml and reports/fault_injection.png (issue 4): a real grading run of the
reference fills seed 000's learn-llm.evidence.v1 template with real values, and the
figure opens with the expected size."""

from __future__ import annotations

import datetime
import math
import re
import subprocess

import matplotlib.image
import yaml

from autograder.units.rnn_prehistory import artefacts as evidence
from autograder.units.rnn_prehistory.lab.record import LabRecord
from helpers import REPO

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
    assert re.fullmatch(r"[0-9a-f]{40}|not-a-git-checkout", doc["commit"])
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
    assert grade_cmd.startswith("python -m autograder grade solutions/rnn_prehistory ")
    assert f"--seed {score['seed']}" in grade_cmd
    env = {**os.environ, "PATH": f"{os.path.dirname(sys.executable)}{os.pathsep}{os.environ['PATH']}"}
    proc = subprocess.run(lab_cmd, shell=True, cwd=REPO, capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert f"run_fault_injection({doc['seed']})" in lab_cmd
    for key in SIGNALS:
        assert f"'{key}': True" in proc.stdout, (key, proc.stdout[:500])


def test_reference_run_draws_the_figure(reference_score):
    _, out = reference_score
    image = matplotlib.image.imread(out / "fault_injection.png")
    width, height = (int(v * evidence.PLOT_DPI) for v in evidence.PLOT_SIZE_IN)
    assert image.shape[:2] == (height, width)
    assert image[..., :3].std() > 0.05, "the figure is blank"


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
    subprocess.run(git + ["add", "fault_injection.py"], check=True)
    subprocess.run(git + ["commit", "-q", "-m", "submission"], check=True)
    head = subprocess.run(git[:3] + ["rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    assert evidence.submission_commit(tmp_path) == head
    assert evidence.submission_commit(tmp_path / "missing") == "not-a-git-checkout"


def test_sanitised_command_and_environment_hold_no_machine_paths(tmp_path):
    outside = tmp_path / "reports"
    cmd = evidence.sanitise_command(f"python -m autograder grade {REPO}/solutions/rnn_prehistory --out {outside}", REPO)
    assert cmd == "python -m autograder grade solutions/rnn_prehistory --out reports"
    env = evidence.sanitised_environment()
    assert "/" not in env and env.endswith(" cpu")
