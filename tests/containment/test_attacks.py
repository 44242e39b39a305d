"""Containment: hostile submissions, graded for real, in both ways the grader is started
(root, in `make sweep`; and unprivileged, as `nobody` over a copy of the checkout).

Each case adds a payload (payloads/<name>.py) to the reference or the stubs and asserts,
besides what the harness checks after every grading (harness.py, the `case` fixture of
conftest.py), that only the attacked tests lose points. A failing case here is a
containment hole: fix the engine, never the test.
"""

from __future__ import annotations

import base64
import csv
import errno
import json
import os
import re
import shutil
import sys
import time
from pathlib import Path

import pytest
from harness import (
    CALLS_NUMERICAL_GRADIENT,
    CALLS_REL_ERROR,
    DEV_SITE,
    NEVER_IN_REPORTS,
    PUBLIC_REL,
    SOLUTIONS_REL,
    UNIT_REL,
    expect_at_most,
    expect_full_marks,
    hidden_suite_paths,
    junit_times,
    payload,
    points,
    restored,
    results_of,
    topic,
)
from helpers import REPO, SOLUTIONS, STUBS, UNIT

from autograder.isolation import wire

# make sweep runs every case below in both modes. make test runs, unprivileged, one case per
# way out: the jail's files (the test suites), its size limit, its processes, the grader's
# secrets, the reply frames (a forged reply), the refusal without namespaces, what the jail
# allows on purpose, text in reports; and the two cases no other test covers: where an error
# raised in the grader's helpers points, and hiding a change to an input.
# These run in make sweep only:
# - an attack on a class (batch, two or more students: a hang, a kill, formula-like folder
#   names), beside batch's other scenarios (tests/e2e/test_batch_intake.py); make test's cases
#   attack one grading, and tests/engine/test_report_text.py checks CSV cells;
CLASS_SCALE = pytest.mark.sweep
# - a second case of a way out that make test takes: a venv's and the log files (the jail's
#   files, as the test suites), frames with wrong ids (reply frames, as the forged reply; it
#   waits out the 5 s call limit), links and FIFOs in the submission folder (make test's
#   tests/containment/test_intake.py refuses submission folders that are links).
ANOTHER_CASE = pytest.mark.sweep


@ANOTHER_CASE
def test_log_replacement_by_links_and_fifos(case):
    """Import-time: links named like log files (to the environment and the hidden suite), or
    FIFOs, wherever the grader might read a log; then os._exit. The grader reads the worker's
    output from a pipe only: nothing of those targets reaches a report, nothing blocks."""
    out = case.dir / "out"
    # Where the links would land if the jail let them out (out is checked by check_reports).
    folders = [case.dir, case.tmp, case.grader.checkout, REPO, Path("/tmp"), Path("/work")]
    config = dict(folders=[str(f) for f in folders + [out]],
                  targets=["/proc/self/environ", f"/proc/{os.getpid()}/environ", *hidden_suite_paths(case.grader)])
    sub = case.submission("sub", append={"bptt.py": payload("log_replacement", fifo=False, **config),
                                         "bleu.py": payload("log_replacement", fifo=True, **config)})
    names = ["output.log", "log", "stdout", "stderr", "worker.log", "score.md", "score.json"]
    with restored([f / n for f in folders for n in names]):
        graded = case.grade(sub, "bptt", "bleu", "attention", out=out)
    expect_full_marks(graded.score, "attention")
    for tid in ("bptt", "bleu"):
        assert topic(graded.score, tid)["earned"] == 0 and topic(graded.score, tid)["status"] == "crashed"
    assert "exited with status 3" in topic(graded.score, "bptt")["tests"][0]["message"]


@ANOTHER_CASE
def test_links_fifos_and_odd_files_in_the_submission_folder(case):
    """The grader copies regular files by name, never through a link: a link to the reference
    or to the hidden suite, a FIFO, a root-only file and a 5 MB file give no marks, no
    content and no hang."""
    solution_attention = REPO / SOLUTIONS_REL / "attention.py"
    for variant in ("absolute", "relative"):
        sub = case.submission(f"sub-{variant}", base=STUBS)
        for name in ("attention.py", "bptt.py", "bleu.py"):
            (sub / name).unlink()
        hidden_suite = Path(hidden_suite_paths(case.grader)[0])
        for name, target in (("attention.py", solution_attention), ("bptt.py", hidden_suite)):
            (sub / name).symlink_to(target if variant == "absolute" else os.path.relpath(target, sub))
        os.mkfifo(sub / "bleu.py")
        (sub / "beam_search.py").write_bytes((SOLUTIONS / "beam_search.py").read_bytes())   # the intact topic
        gru = sub / "gru_lstm.py"
        gru.write_text(gru.read_text() + "# padding\n" * ((5 << 20) // 10))
        case.grader.own(sub)
        if case.grader.owner is not None:        # unprivileged: a file only root may read
            os.chown(sub / "gate_derivative.py", 0, 0)
            (sub / "gate_derivative.py").write_bytes((SOLUTIONS / "gate_derivative.py").read_bytes())
            (sub / "gate_derivative.py").chmod(0o600)
        graded = case.grade(sub, "attention", "bptt", "bleu", "gate_derivative", "gru_lstm_step", "beam_attribution")
        expect_full_marks(graded.score, "beam_attribution")
        for tid in ("attention", "bptt", "bleu", "gru_lstm_step"):
            assert topic(graded.score, tid)["earned"] == 0, f"{variant}: {tid} earned marks through a link or odd file"
        if case.grader.owner is not None:
            assert topic(graded.score, "gate_derivative")["earned"] == 0, "a file its user cannot read was graded"


@CLASS_SCALE
def test_batch_one_student_cannot_kill_another(case):
    """batch --jobs 2: mallory's import signals every process it can for 2 s while alice
    (the reference) is graded beside her: alice keeps full marks, and so do mallory's
    topics she does not sabotage."""
    root = case.dir / "class"
    case.submission("class/alice")
    case.submission("class/mallory", append={"bptt.py": payload("kill_everything")})
    _, out, rows = case.batch(root, "--jobs", "2", "--topic", "bptt", "--topic", "attention")
    assert rows["alice"]["status"] == "graded", rows
    assert float(rows["alice"]["earned"]) == points("bptt") + points("attention"), rows
    assert rows["mallory"]["status"] == "graded" and float(rows["mallory"]["attention"]) == points("attention"), rows
    assert float(rows["mallory"]["bptt"]) == 0, rows
    mallory = topic(json.loads((out / "students" / "mallory" / "score.json").read_text()), "bptt")
    assert mallory["status"] == "crashed", mallory["tests"][0]["message"]      # she killed herself, nobody else


@CLASS_SCALE
def test_batch_records_a_hanging_submission_as_timeout(case):
    """batch --timeout 8 (CPU seconds of a grading): a submission whose every import sleeps
    forever (and swallows every exception) is stopped after two imports' limits, since the
    imports of a grading share one budget: every topic `timeout`, nothing earned. One whose
    every import spins is stopped at the batch's limit and recorded as `timeout`. The class
    file is written and the other student is graded."""
    root = case.dir / "class"
    case.submission("class/alice")
    modules = ("bptt.py", "attention.py", "bleu.py")
    case.submission("class/hangs", append={m: payload("hang_at_import") for m in modules})
    case.submission("class/spins", append={m: payload("spin_at_import") for m in modules})
    run, out, rows = case.batch(root, "--jobs", "2", "--timeout", "8", "--topic", "bptt", "--topic", "attention",
                                "--topic", "bleu", within=40)
    assert rows["hangs"]["status"] == "graded" and float(rows["hangs"]["earned"]) == 0, rows
    assert {rows["hangs"][f"{t}_status"] for t in ("bptt", "attention", "bleu")} == {"timeout"}, rows
    assert rows["spins"]["status"] == "timeout" and "8 s of CPU time" in rows["spins"]["detail"], rows
    assert rows["alice"]["status"] == "graded", rows
    assert float(rows["alice"]["earned"]) == points("bptt") + points("attention") + points("bleu"), rows


@ANOTHER_CASE
def test_frames_with_a_wrong_request_id_cost_at_most_the_call_limit(case):
    """A function writes a reply frame with a wrong id every second (forever; or for 21 s, then
    returns the right answer): each call is charged as a failure within the call limit
    (5 s) plus slack, never the 21 s, and grading ends."""
    limit = UNIT.limits.call_cpu_s
    sub = case.submission("sub", append={"bptt.py": payload("wrong_request_id")})
    graded = case.grade(sub, "bptt", "attention")
    expect_full_marks(graded.score, "attention")
    attacked = CALLS_REL_ERROR | CALLS_NUMERICAL_GRADIENT
    tests = results_of(graded.score, "bptt")
    assert {i for i, t in tests.items() if t["outcome"] != "passed"} == attacked, tests
    assert all(tests[i]["outcome"] in ("error", "timeout") for i in attacked)
    times = junit_times(graded.out, "bptt")
    slow = {i: times[i] for i in attacked if times[i] > limit + 2}
    assert not slow, f"calls charged more than the {limit} s call limit: {slow}"


def test_huge_forged_reply_costs_the_grader_little(case):
    """A forged 48 MB reply of nested empty lists with the right request id (and one just
    under the size cap): refused before it is parsed, so the grader stays far below 1 GB and
    finishes fast. The peak is the grader's (and of the workers it reaped), from wait4."""
    code = payload("huge_forged_reply", just_under_size_cap=wire.MAX_REPLY_BYTES - 64)
    sub = case.submission("sub", append={"bptt.py": code})
    graded = case.grade(sub, "bptt", "attention")
    expect_full_marks(graded.score, "attention")
    expect_at_most(graded.score, "bptt", points("bptt") - points("bptt", CALLS_REL_ERROR | CALLS_NUMERICAL_GRADIENT))
    tests = results_of(graded.score, "bptt")
    assert all(tests[i]["outcome"] in ("error", "timeout") for i in CALLS_REL_ERROR | CALLS_NUMERICAL_GRADIENT)
    assert graded.run.maxrss_kb < 512 * 1024, f"peak memory {graded.run.maxrss_kb >> 10} MiB"


# Everything a terminal, a Markdown renderer, an XML parser or a spreadsheet might act on.
NASTY = ("first line\n# Fake heading\n| bptt | 20 / 20 |\n<img src=http://x/beacon>\n<script>alert(1)</script>"
         "\x1b[2J\x1b]8;;http://x\x07link\x1b]8;;\x07 nul\x00 bel\x07 bs\x08 vt\x0b ff\x0c cr\r del\x7f csi\x9b"
         " rtl\u202e end")

def test_student_text_is_inert_in_every_report(case):
    """Exception messages, an exception class name, printed output before a crash and an
    import error full of Markdown, HTML, escape sequences and control characters: score.md,
    junit.xml, results.json and the terminal get them inert (checked by `check_reports`)."""
    sub = case.submission("sub", append={"bptt.py": payload("nasty_text", text=NASTY),
                                         "bleu.py": payload("nasty_import_error", text=NASTY)})
    graded = case.grade(sub, "bptt", "bleu", "attention")
    expect_full_marks(graded.score, "attention")
    expect_at_most(graded.score, "bptt", points("bptt") - points("bptt", CALLS_REL_ERROR | CALLS_NUMERICAL_GRADIENT))
    assert topic(graded.score, "bleu")["status"] == "error" and topic(graded.score, "bleu")["earned"] == 0
    assert "\x1b" not in graded.run.stdout and "\x1b" not in graded.run.stderr
    messages = " ".join(t["message"] for t in topic(graded.score, "bptt")["tests"])
    assert "Fake heading" in messages, "the student's text must reach the report (sanitised), or this proves nothing"


@CLASS_SCALE
def test_hostile_folder_names_are_not_formulas_in_class_csv(case):
    """Class folders named like spreadsheet formulas: their class.csv cells
    start with a quote, so a spreadsheet shows text."""
    root = case.dir / "class"
    names = ['=HYPERLINK("http:x.example","y")', "+SUM(1)", "-2+3", "@cmd"]   # a folder name cannot hold "/"
    for name in names:
        case.submission(f"class/{name}")
    _, out, rows = case.batch(root, "--jobs", "2", "--topic", "attention")
    cells = [r[0] for r in csv.reader((out / "class.csv").read_text().splitlines()[1:])]
    assert sorted(cells) == sorted("'" + n for n in names), cells
    assert all(float(rows[n]["attention"]) == points("attention") for n in names), rows


def test_disk_writes_stop_at_the_jail_limit(case):
    """A function writes 1.2 GB to /work and to /tmp: stopped by ENOSPC/EFBIG at the jail's
    64 MiB within seconds; grading completes; the host's disk did not receive it."""
    name = f"containment-fill-{os.urandom(4).hex()}.bin"
    disk_before = shutil.disk_usage(case.dir).used
    sub = case.submission("sub", append={"bptt.py": payload("disk_fill", name=name)})
    try:
        graded = case.grade(sub, "bptt", "attention")
        grew = shutil.disk_usage(case.dir).used - disk_before
        landed = [str(p) for p in (Path("/tmp") / name, Path("/work") / name, *case.dir.rglob(name)) if p.exists()]
    finally:
        for p in (Path("/tmp") / name, Path("/work") / name, *case.dir.rglob(name)):
            if p.exists():
                p.unlink()
    assert not landed, f"the student's writes reached the host: {landed}"
    assert grew < 300 << 20, f"the host's disk grew by {grew >> 20} MiB during grading"
    expect_full_marks(graded.score, "attention")
    expect_at_most(graded.score, "bptt", points("bptt") - points("bptt", CALLS_REL_ERROR))
    message = results_of(graded.score, "bptt")["public::test_rel_error_formula"]["message"]
    fills = re.findall(r"(/\w+):(\d+):(\w+):([\d.]+)", message)
    assert len(fills) == 2, message
    for _folder, mib, error, seconds in fills:
        assert int(mib) <= 64 and error in ("ENOSPC", "EFBIG") and float(seconds) < 5, message


def test_error_location_names_the_students_file(case):
    """A student function passes bad input to a callable of the grader's helpers (the
    language model in beam_search, the scalar function in numerical_gradient): the error
    is raised in language_models.py / functions.py, but the report names the student's line."""
    bad_prefix = "total += float(log_prob_fn(tuple(tokens[:t]))[token])"        # no bos: the LM refuses it
    bad_shape = "fplus = f(x.reshape(-1, 1, 1))"                                 # CubicForm's x @ A fails
    sub = case.submission("sub", replace={
        "beam_search.py": [("total += float(log_prob_fn((bos,) + tokens[:t])[token])", bad_prefix)],
        "bptt.py": [("fplus = f(x)", bad_shape)]})
    lines = {m: next(i for i, line in enumerate((sub / m).read_text().splitlines(), 1) if text in line)
             for m, text in (("beam_search.py", bad_prefix), ("bptt.py", bad_shape))}
    graded = case.grade(sub, "beam_attribution", "bptt", "attention")
    expect_full_marks(graded.score, "attention")
    for tid, module in (("beam_attribution", "beam_search.py"), ("bptt", "bptt.py")):
        failed = [t for t in topic(graded.score, tid)["tests"] if t["outcome"] != "passed"]
        assert failed, f"the broken {module} should fail some {tid} tests"
        for t in failed:
            assert "language_models.py" not in t["message"] and "functions.py" not in t["message"], t["message"]
        located = [t for t in failed if "raised ValueError" in t["message"]]
        assert located, [t["message"][:300] for t in failed]
        for t in located:
            assert f"{module}:{lines[module]}" in t["message"], t["message"]
    for report in graded.out.iterdir():
        text = report.read_text(errors="replace")
        for grader_file in ("language_models.py", "helpers/functions.py"):
            assert grader_file not in text, f"{report.name} names {grader_file}"


def test_student_cannot_edit_the_test_suites(case):
    """Import-time: append a passing no-op test to the hidden and public suites (the real
    checkout, its copy, relative to the cwd) and add files beside them: nothing changes,
    and the stubs still score 0."""
    targets = [UNIT_REL / "topics" / "bptt" / "test_hidden.py", UNIT_REL / "public" / "test_bptt.py", PUBLIC_REL / "test_bptt.py",
               UNIT_REL / "topics" / "bptt" / "conftest.py", UNIT_REL / "topics" / "bptt" / "test_zz_injected.py",
               UNIT_REL / "topics" / "bptt" / "rubric.yaml"]
    paths = [p for rel in targets for p in case.grader.everywhere(rel)]
    paths += [str(up / rel) for up in (Path("."), Path(".."), Path("../..")) for rel in targets]
    stub_bptt = (STUBS / "bptt.py").read_text()
    sub = case.submission("sub")
    (sub / "bptt.py").write_text(stub_bptt + payload("edit_test_suites", paths=paths))
    case.grader.own(sub)
    with restored([p for p in paths if os.path.isabs(p)]):
        graded = case.grade(sub, "bptt", "attention")
        stubs = case.grade(case.grader.checkout / "assignments" / "rnn_prehistory", "bptt")
    expect_full_marks(graded.score, "attention")
    for score in (graded.score, stubs.score):
        assert topic(score, "bptt")["earned"] == 0
        assert set(results_of(score, "bptt")) == {str(t.id) for t in UNIT.rubric.topic("bptt").tests}


def test_no_daemon_outlives_the_worker(case):
    """A setsid'd fork (and a thread) that would rewrite score.json after the grader wrote
    it: neither can start, and score.json is still the grader's 2 s later."""
    out = case.dir / "out"
    targets = [str(out / "score.json"), "score.json", "../score.json"]
    sub = case.submission("sub", append={"bptt.py": payload("daemon", targets=targets)})
    graded = case.grade(sub, "bptt", "attention", out=out)
    written = (out / "score.json").read_bytes()
    time.sleep(2)
    assert (out / "score.json").read_bytes() == written, "score.json changed after the grader wrote it"
    assert "forged" not in written.decode()
    expect_full_marks(graded.score, "attention")
    expect_at_most(graded.score, "bptt", points("bptt") - points("bptt", CALLS_REL_ERROR))
    for i in CALLS_REL_ERROR:
        message = results_of(graded.score, "bptt")[i]["message"]
        assert "fork:refused" in message and "thread:refused" in message, message


def test_grader_secrets_and_files_stay_out_of_reach(case):
    """The student reads the grader's environment (/proc/<ppid>/environ), the reference
    solution and the hidden suite (absolute and relative paths), and kills its parent:
    every read fails, nothing of it reaches a report, grading completes."""
    rels = [UNIT_REL / "topics" / "bptt" / "test_hidden.py", SOLUTIONS_REL / "bptt.py", SOLUTIONS_REL / "attention.py",
            UNIT_REL / "reference" / "bptt.py"]
    files = [p for rel in rels for p in case.grader.everywhere(rel)]
    files += [str(up / rel) for up in (Path("."), Path("..")) for rel in rels] + [f"/proc/{os.getpid()}/environ"]
    keys = [base64.b64encode(k.encode()[:24]).decode() for k in ["GRADER_SECRET=", *NEVER_IN_REPORTS]]
    sub = case.submission("sub", append={"bptt.py": payload("snoop", files=files, keys=keys)})
    graded = case.grade(sub, "bptt", "attention")
    expect_full_marks(graded.score, "attention")
    expect_at_most(graded.score, "bptt", points("bptt") - points("bptt", CALLS_REL_ERROR))
    message = results_of(graded.score, "bptt")["public::test_rel_error_formula"]["message"]
    assert "SNOOP" in message and ":READ:" not in message, message


@ANOTHER_CASE
def test_student_cannot_install_code_into_a_venv(case):
    """Import-time: a .pth file (and sitecustomize.py) written into the site-packages of the
    grader's venvs: no file appears, and the next grading is unaffected."""
    folders = [str(DEV_SITE), str(case.grader.env.site_packages)]
    line = "import sys; sys.stderr.write('PTH-INJECTED\\n')\n"
    planted = [Path(f) / n for f in folders for n in ("zz_containment.pth", "sitecustomize.py", "usercustomize.py")]
    planted += [Path(f) / "__pycache__" / f"{n}.{sys.implementation.cache_tag}.pyc" for f in folders
                for n in ("sitecustomize", "usercustomize")]            # left by an import of what was planted
    sub = case.submission("sub", append={"bptt.py": payload("install_into_venv", folders=folders, line=line)})
    with restored(planted):
        first = case.grade(sub, "bptt", "attention")
        second = case.grade(case.submission("reference"), "bptt", "attention")
    expect_full_marks(first.score, "bptt", "attention")
    expect_full_marks(second.score, "bptt", "attention")
    assert "PTH-INJECTED" not in second.run.stdout + second.run.stderr


def test_without_isolation_hidden_suites_are_refused(case):
    """Where no namespace can be made (simulated by AUTOGRADER_NO_NAMESPACES=1), untrusted
    code is not run beside the hidden suites: exit 2 naming both ways out, which then work."""
    no_ns = {"AUTOGRADER_NO_NAMESPACES": "1"}
    reference = case.submission("reference")
    topics = ("bptt", "bleu")
    refused = case.grade(reference, *topics, expect_exit=2, env=no_ns)
    assert "--trust-submission" in refused.run.stderr and "--suite public" in refused.run.stderr, refused.run.stderr
    assert not (refused.out / "score.json").exists()
    trusted = case.grade(reference, *topics, extra=["--trust-submission"], env=no_ns)
    assert trusted.score["earned"] == trusted.score["possible"] == sum(map(points, topics))
    public = case.grade(reference, *topics, extra=["--suite", "public"], env=no_ns)
    public_points = sum(t.points for tid in topics for t in UNIT.rubric.topic(tid).tests if t.visibility == "public")
    assert public.score["earned"] == public.score["possible"] == public_points
    assert all(t["id"].startswith("public::") for tp in public.score["topics"] for t in tp["tests"])


# Ways student code can switch off the worker's measurement of mutated arguments.
HIDES_THE_MUTATION = {"patches the worker's _snapshot": "hide_mutation_in_snapshot",
                      "patches numpy.array_equal": "hide_mutation_in_array_equal"}


def test_student_cannot_hide_that_it_mutates_its_inputs(case):
    """Which arguments a call modified is measured inside the worker, beside the student's
    code and with the numpy it shares: hiding a mutation must not earn the points an honest
    run loses."""
    honest = case.grade(case.submission("honest", append={"attention.py": payload("mutates_its_input")}),
                        "attention", "bleu")
    ceiling = topic(honest.score, "attention")["earned"]
    assert ceiling < points("attention"), "the mutation should cost points when it is not hidden"
    forged = {}
    for i, (how, hider) in enumerate(HIDES_THE_MUTATION.items()):
        sub = case.submission(f"forged{i}", append={"attention.py": payload("mutates_its_input") + payload(hider)})
        graded = case.grade(sub, "attention", "bleu")
        expect_full_marks(graded.score, "bleu")
        forged[how] = topic(graded.score, "attention")["earned"]
    over = {how: earned for how, earned in forged.items() if earned > ceiling}
    assert not over, (f"attention earns {ceiling} / {points('attention')} honestly (it mutates H), "
                      f"more when the student's code hides the mutation: {over}")


def test_what_the_jail_allows_on_purpose_gains_nothing(case):
    """Pins what the README's containment section says the jail allows on purpose, in both modes:
    the worker may narrow its own CPU affinity, and may make a nested user namespace, where it
    holds every capability over nothing: no host file in sight, still no fork (RLIMIT_NPROC 0),
    a tmpfs of its own it cannot create a file in (its uid is unmapped, and /proc, where a map
    is written, cannot be mounted). If the jail starts refusing either, or the nested namespace
    starts giving something, update the README and this test."""
    files = [p for rel in (UNIT_REL / "topics" / "bptt" / "test_hidden.py", SOLUTIONS_REL / "bptt.py")
             for p in case.grader.everywhere(rel)]
    sub = case.submission("sub", append={"bptt.py": payload("allowed_on_purpose", host_files=files)})
    graded = case.grade(sub, "bptt", "attention")
    expect_full_marks(graded.score, "attention")
    message = results_of(graded.score, "bptt")["public::test_rel_error_formula"]["message"]
    found = re.search(r"DESIGN affinity:(\d+)[\d,]*->(\d+) userns:(.*?) \(at ", message)
    assert found, message
    assert found.group(2) == found.group(1), f"the worker could not narrow its CPU affinity: {message}"
    capabilities = f"{(1 << (int(Path('/proc/sys/kernel/cap_last_cap').read_text()) + 1)) - 1:x}"
    assert found.group(3) == (f"created uid=65534 capeff={capabilities} host_files=0 fork=refused:{errno.EAGAIN}"
                              f" mount=tmpfs-write:-{errno.EOVERFLOW}-proc:{errno.EPERM}"), message
