"""Helpers for the repository's own tests: build submissions in temporary folders, run the real grader."""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import html
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from autograder.authoring import unit_checks
from autograder.unit.load import load_unit

REPO = Path(__file__).resolve().parents[1]
SOLUTIONS = REPO / "solutions" / "rnn_prehistory"
STUBS = REPO / "assignments" / "rnn_prehistory"
UNIT = load_unit("rnn_prehistory")


class _TorchOnFirstUse:
    """`torch` for the oracle tests, imported when a test first uses it rather than when the
    test file is collected: every pytest-xdist process collects every file, and importing
    torch costs ~2 s of CPU, so at collection it cost each process of `make test` that much
    although one of them runs the oracle tests. Oracles compute in float64 (set once here)."""

    _module = None

    def __getattr__(self, name: str):
        # pytest probes every module attribute when it collects a file (`_mock_name`, then
        # `__wrapped__`): a private name is not torch's API, and answering it must not import torch.
        if name.startswith("_"):
            raise AttributeError(name)
        if _TorchOnFirstUse._module is None:
            import torch

            torch.set_default_dtype(torch.float64)
            _TorchOnFirstUse._module = torch
        return getattr(_TorchOnFirstUse._module, name)


torch = _TorchOnFirstUse()


def make_submission(folder: Path, base: Path = SOLUTIONS, replace: dict | None = None,
                    files: dict | None = None) -> Path:
    """Copy the modules of `base` into `folder`, apply text edits, add or overwrite files."""
    folder.mkdir(parents=True, exist_ok=True)
    for src in base.glob("*.py"):
        shutil.copyfile(src, folder / src.name)
    for name, edits in (replace or {}).items():
        text = (folder / name).read_text()
        for old, new in edits:
            assert old in text, f"{name}: the text to replace is not in the module: {old!r}"
            text = text.replace(old, new)
        (folder / name).write_text(text)
    for name, text in (files or {}).items():
        (folder / name).write_text(text)
    return folder


# Read with libyaml's parser where PyYAML has it (as the engine): the kill matrix's files take
# ~0.2 s of CPU in pure Python (0.02 s with libyaml), in every process of a run.
MATRIX = unit_checks.load_matrix(UNIT)      # what `python -m autograder check` reads, for any unit
# While one works on a few topics: KILL_MATRIX_TOPICS=bleu,attention grades only their cases
# (the kill matrix's tests then cover those topics only; CI never sets it).
KILL_MATRIX_TOPICS = [t for t in os.environ.get("KILL_MATRIX_TOPICS", "").split(",") if t] or list(MATRIX)
CASES = [(topic, "mutant", m["name"]) for topic in KILL_MATRIX_TOPICS for m in MATRIX[topic].get("mutants", [])] + \
        [(topic, "alternative", a["name"]) for topic in KILL_MATRIX_TOPICS
         for a in MATRIX[topic].get("alternatives", [])]


def graded_tests(mutant: dict) -> list:
    """The tests of its topic a mutant is graded on in `make test`: those that must catch it
    (`killed_by`), then those where it must cost nothing (its own `not_charged_in`: a test of a
    relation between two functions, which compares with the student's own other function)."""
    return [*mutant["killed_by"], *mutant.get("not_charged_in", [])]


def kill_matrix_class(root: Path, killing_tests_only: bool = False) -> dict:
    """The kill matrix as a class (topics/<topic>/mutants.yaml, format in docs/AUTHORING.md):
    one folder per mutant (`mutant-<name>`) and per valid alternative (`alternative-<name>`).
    Returns the batch plan: mutants are graded on the topic they break and on the topics
    where they must cost nothing (`not_charged_in`), whole; alternatives on every topic (not in
    the plan). With `killing_tests_only`, mutants on the tests that must catch them
    (`killed_by`) and those of their topic where they must cost nothing (their own
    `not_charged_in`) only, alternatives on their topic and the topics that call it (its
    `not_charged_in`: the lab calls bptt); only those can see the replaced file."""
    plan = {}
    for topic in KILL_MATRIX_TOPICS:
        spec = MATRIX[topic]
        module = f"{UNIT.topic(topic).module}.py"
        for m in spec.get("mutants", []):
            make_submission(root / f"mutant-{m['name']}", replace={module: [tuple(e) for e in m["replace"]]})
            plan[f"mutant-{m['name']}"] = [f"{topic}::{test}" for test in graded_tests(m)] if killing_tests_only \
                else [topic, *spec.get("not_charged_in", [])]
        for a in spec.get("alternatives", []):
            sub = make_submission(root / f"alternative-{a['name']}")
            shutil.copyfile(UNIT.dirs["topics"] / topic / a["file"], sub / module)
            if killing_tests_only:
                plan[f"alternative-{a['name']}"] = [topic, *spec.get("not_charged_in", [])]
    return plan


def grade_class(root: Path, out: Path, plan: dict, *extra, env: dict | None = None) -> dict:
    """One `batch --plan` run over `root`; (kind, name) -> score.json of every submission."""
    plan_file = out.parent / f"{out.name}.plan.json"
    plan_file.write_text(json.dumps(plan))
    proc = run_grader("batch", root, "--out", out, "--jobs", "2", "--plan", plan_file, *extra, env=env, timeout=1800)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    scores = {}
    for d in (out / "students").iterdir():
        if d.is_dir():
            kind, name = d.name.split("-", 1)
            scores[kind, name] = json.loads((d / "score.json").read_text())
    return scores


# The tests read English reports whatever the machine's locale (tests/engine/test_i18n.py sets its own).
ENGLISH = {"LANGUAGE": "en"}


def run_grader(*args, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """`python -m autograder ARGS`: the command line itself, in a process of its own."""
    return subprocess.run([sys.executable, "-m", "autograder", *map(str, args)], cwd=REPO, capture_output=True,
                          text=True, timeout=timeout, env={**os.environ, **ENGLISH, **(env or {})})


class Background:
    """`run_grader(*args)` started now, in a process of its own; `result()` waits for it. The
    tests grade in this process meanwhile (its output goes to files: no pipe to fill)."""

    def __init__(self, *args, env: dict | None = None, timeout: float = 1200):
        self.timeout = timeout
        self.output = tempfile.TemporaryFile("w+"), tempfile.TemporaryFile("w+")
        self.proc = subprocess.Popen([sys.executable, "-m", "autograder", *map(str, args)], cwd=REPO, text=True,
                                     stdout=self.output[0], stderr=self.output[1],
                                     env={**os.environ, **ENGLISH, **(env or {})})

    def result(self) -> subprocess.CompletedProcess:
        try:
            self.proc.wait(timeout=self.timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
        texts = []
        for f in self.output:
            f.seek(0)
            texts.append(f.read())
            f.close()
        stdout, stderr = texts
        return subprocess.CompletedProcess(self.proc.args, self.proc.returncode, stdout, stderr)


@contextlib.contextmanager
def _as_the_command_line(args: list[str], env: dict):
    """The environment, working folder and sys.argv of `python -m autograder ARGS` run from
    the repository (the reports quote the command line), restored after."""
    saved_env, saved_argv, saved_cwd = dict(os.environ), sys.argv, os.getcwd()
    os.environ.update(env)
    sys.argv = [str(REPO / "autograder" / "__main__.py"), *args]
    os.chdir(REPO)
    try:
        yield
    finally:
        os.chdir(saved_cwd)
        sys.argv = saved_argv
        os.environ.clear()
        os.environ.update(saved_env)


# Worker images kept for the next in-process grading, by what an image is made of (its
# configuration, environment and folder): a batch job keeps one for all its submissions in
# the same way (autograder.commands.batch_pool). Each grading still forks fresh workers from
# it; an image is started anew when the last one has stopped. Starting one costs ~0.25 s of
# CPU, which the few hundred in-process gradings of make test paid each time.
_IMAGES: dict = {}


class _KeptImage:
    """A worker image whose `close` (the grading's) leaves it running for the next grading."""

    def __init__(self, image):
        self.image = image

    def __getattr__(self, name):
        return getattr(self.image, name)

    def close(self) -> None:
        pass


@contextlib.contextmanager
def _worker_images_kept():
    from autograder import pipeline
    from autograder.isolation import image as images

    def start_image(config: dict):
        key = json.dumps([config, images.scrubbed_env(), tempfile.gettempdir()], sort_keys=True)
        kept = _IMAGES.get(key)
        if kept is None or kept.proc.poll() is not None:
            if kept is not None:
                kept.close()
            kept = _IMAGES[key] = images.start_image(config)
        return _KeptImage(kept)

    saved = pipeline.start_image
    pipeline.start_image = start_image
    try:
        yield
    finally:
        pipeline.start_image = saved


@atexit.register
def _close_kept_images() -> None:
    for image in _IMAGES.values():
        image.close()


@contextlib.contextmanager
def _reference_modules_forgotten():
    """The grader imports the unit's reference modules by their top-level names (`import
    bptt`) from a folder it puts on sys.path, as a process of its own would. Those names are
    this test process's too (the oracle tests import the solutions so): forget them after."""
    saved_path, known = list(sys.path), set(sys.modules)
    try:
        yield
    finally:
        added = [os.path.join(folder, "") for folder in sys.path if folder not in saved_path]
        sys.path[:] = saved_path
        for name in set(sys.modules) - known:
            where = getattr(sys.modules[name], "__file__", None) or ""
            if "." not in name and any(where.startswith(folder) for folder in added):
                del sys.modules[name]


@contextlib.contextmanager
def _without_assertion_rewriting():
    """The suites the grader imports are its own business: this pytest's assertion rewriting
    (an import hook) must not rewrite them, as it never does in a grader of its own."""
    from _pytest.assertion.rewrite import AssertionRewritingHook

    hooks = [finder for finder in sys.meta_path if isinstance(finder, AssertionRewritingHook)]
    sys.meta_path[:] = [finder for finder in sys.meta_path if finder not in hooks]
    try:
        yield
    finally:
        sys.meta_path[:0] = hooks


def run_in_process(*args, env: dict | None = None) -> subprocess.CompletedProcess:
    """What `run_grader(*args)` does, with the grader's side in this process
    (`autograder.cli.run`: no interpreter to start, no import to repeat; student code still
    runs only in the worker processes the grader forks). Output, exit status, environment,
    the language of `_`, sys.path and the import hooks are the command line's and are
    restored after. The grader keeps the packages it imported (the suites, numpy, pytest),
    as a batch job does between submissions."""
    from autograder import cli, i18n

    argv = [str(a) for a in args]
    stdout, stderr = io.StringIO(), io.StringIO()
    language = i18n._active, i18n._language
    with _as_the_command_line(argv, {**ENGLISH, **(env or {})}), _without_assertion_rewriting(), \
            _reference_modules_forgotten(), _worker_images_kept(), contextlib.redirect_stdout(stdout), \
            contextlib.redirect_stderr(stderr):
        try:
            code = cli.run(argv)
        except SystemExit as exc:          # argparse's errors
            code = exc.code if isinstance(exc.code, int) else 2
        finally:
            i18n._active, i18n._language = language
    return subprocess.CompletedProcess(["python", "-m", "autograder", *argv], code,
                                       stdout.getvalue(), stderr.getvalue())


def grade(submission: Path, out: Path, *extra, env: dict | None = None,
          command_line: bool = False) -> tuple[subprocess.CompletedProcess, dict]:
    """`grade SUBMISSION --out OUT EXTRA...` and its score.json ({} if none was written). In
    this process (`run_in_process`), except where the command line is the subject
    (`command_line`: its exit status, its output) and for a unit given by path (the grader
    registers a unit's package under its name once per process; the tests make many units
    of one name)."""
    if command_line or "--assignment" in map(str, extra):
        proc = run_grader("grade", submission, "--out", out, *extra, env=env)
    else:
        proc = run_in_process("grade", submission, "--out", out, *extra, env=env)
    score_file = out / "score.json"
    score = json.loads(score_file.read_text()) if score_file.exists() else {}
    return proc, score


def per_topic(score: dict, public_only: bool = False) -> dict[str, tuple[float, str]]:
    """topic -> (earned, status) of a score.json; with `public_only`, earned of its public tests."""
    return {t["id"]: (round(sum(x["earned"] for x in t["tests"] if x["id"].startswith("public::"))
                            if public_only else t["earned"], 6), t["status"]) for t in score["topics"]}


def results_by_id(score: dict, topic: str) -> dict:
    return {t["id"]: t for x in score["topics"] if x["id"] == topic for t in x["tests"]}


def borrowed_venv(folder: Path, *package_roots: Path) -> Path:
    """A fresh virtual environment (no pip) whose dependencies are the development venv's
    packages (a .pth file, which adds that folder but not its editable install), plus the
    given source roots (so `import autograder` resolves to a copy). Returns its python."""
    import sysconfig
    import venv

    venv.create(folder, with_pip=False)
    python = folder / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                               capture_output=True, text=True, check=True).stdout.strip())
    # every site-packages this interpreter sees (its own, and any a .pth file of it adds)
    deps = [sysconfig.get_path("purelib")] + [p for p in sys.path if p.endswith("site-packages")]
    roots = [str(p) for p in package_roots] + list(dict.fromkeys(deps))
    (site / "borrowed.pth").write_text("\n".join(roots) + "\n")
    return python


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
NO_CHROMIUM = "headless Chromium is not installed (apt-get install chromium)"
CHROMIUM_ARGS = ("--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=5000")


# A measure for measured_in_chromium: the characters of the page beyond ASCII that the page's
# font draws as the missing-glyph box (drawn like a code point no font has).
MISSING_GLYPHS = r"""(() => {
  const font = getComputedStyle(document.body).font;
  const canvas = document.createElement("canvas"); canvas.width = 64; canvas.height = 64;
  const ctx = canvas.getContext("2d", {willReadFrequently: true});
  const draw = ch => { ctx.clearRect(0, 0, 64, 64); ctx.font = font.replace(/\d+px/, "40px");
                       ctx.fillText(ch, 4, 48); return Array.from(ctx.getImageData(0, 0, 64, 64).data).join(); };
  const tofu = draw("\u{10FFFD}");
  const chars = [...new Set([...document.body.innerText].filter(c => c.codePointAt(0) > 0x7f && c.trim()))];
  return {checked: chars.length, missing: chars.filter(c => draw(c) === tofu)};
})()"""


def measured_in_chromium(page: Path, measure: str, width: int = 1024):
    """Lay `page` out in headless Chromium at a laptop's width and return the JSON value of the
    JavaScript expression `measure`, evaluated once the page and its images have loaded. The
    probe (the page plus the script) is written beside the page, so its relative images resolve."""
    script = (f'<script>window.addEventListener("load", () => '
              f'document.body.setAttribute("data-measured", JSON.stringify({measure})));</script>')
    probe = page.with_name(f"probe-{page.name}")
    probe.write_text(page.read_text().replace("</body>", script + "</body>"))
    try:
        proc = subprocess.run([CHROMIUM, *CHROMIUM_ARGS, f"--window-size={width},768", "--dump-dom", probe.as_uri()],
                              capture_output=True, text=True, timeout=120)
    finally:
        probe.unlink()
    found = re.search(r'<body[^>]*data-measured="([^"]*)"', proc.stdout)
    assert found, f"the page did not load in Chromium: {proc.stderr[-500:]}"
    return json.loads(html.unescape(found.group(1)))


def screenshot_in_chromium(page: Path, png: Path, width: int = 1024, height: int = 1600) -> None:
    proc = subprocess.run([CHROMIUM, *CHROMIUM_ARGS, f"--window-size={width},{height}", f"--screenshot={png}",
                           page.as_uri()], capture_output=True, text=True, timeout=120)
    assert png.is_file(), f"Chromium took no screenshot: {proc.stderr[-500:]}"


# ----------------------------------------------- what the processes of one run share
def run_folder(tmp_path_factory) -> Path:
    """The temporary folder of this whole run: under xdist the controller's, which holds every
    process's own folder; without xdist the process's own. (Its parent holds the earlier runs.)"""
    base = tmp_path_factory.getbasetemp()
    return base.parent if "PYTEST_XDIST_WORKER" in os.environ else base


def once_per_run(tmp_path_factory, name: str, build):
    """`build()`'s result (JSON), computed once per test run: the first process to ask runs
    it, under a lock in the run's folder; the others wait for it and read what it recorded.
    A build that raised records nothing: the next process to ask builds again (and most
    likely fails the same way, with its own message)."""
    folder = run_folder(tmp_path_factory)
    record = folder / f"{name}.json"
    with open(folder / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not record.exists():
            record.write_text(json.dumps(build()))
        return json.loads(record.read_text())


def remove_at_end(tmp_path_factory, folder: Path) -> None:
    """Remove `folder` (one outside the run's folder, which the processes share) when the whole
    run ends: tests/conftest.py's pytest_sessionfinish, in the run's first process (xdist's
    controller), after every process is done."""
    with open(run_folder(tmp_path_factory) / REMOVE_AT_END, "a") as listing:
        listing.write(f"{folder}\n")


REMOVE_AT_END = "remove-at-end.txt"


# ------------------------------------------------------------------ a class for the similarity report
def kill_matrix_files(limit_mutants: int | None = None) -> dict[str, dict[str, str]]:
    """{student: {module: text}}: the kill matrix's mutants (round-robin over the topics, at
    most `limit_mutants`) and valid alternatives as a class, without writing or grading them."""
    reference = {p.stem: p.read_text(encoding="utf-8") for p in SOLUTIONS.glob("*.py")}
    per_topic = []
    for topic in KILL_MATRIX_TOPICS:
        module = UNIT.topic(topic).module
        mutants = []
        for m in MATRIX[topic].get("mutants", []):
            text = reference[module]
            for old, new in m["replace"]:
                text = text.replace(old, new)
            mutants.append((f"mutant-{m['name']}", {**reference, module: text}))
        per_topic.append(mutants)
    order = [topic[i] for i in range(max(map(len, per_topic))) for topic in per_topic if i < len(topic)]
    students = dict(order[:limit_mutants] if limit_mutants is not None else order)
    for topic in KILL_MATRIX_TOPICS:
        module = UNIT.topic(topic).module
        for a in MATRIX[topic].get("alternatives", []):
            text = (UNIT.dirs["topics"] / topic / a["file"]).read_text(encoding="utf-8")
            students[f"alternative-{a['name']}"] = {**reference, module: text}
    return students


def renamed(text: str, salt: str) -> str:
    """`text` with every name it binds (variables, parameters, private helpers) renamed, as a
    copier hiding a copy would: the code does the same, its tokens' names all differ."""
    import ast
    import builtins
    import tokenize

    bound = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bound.add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.FunctionDef) and node.name.startswith("_"):
            bound.add(node.name)
    table = {name: f"{salt}{i}_{name[::-1]}" for i, name in enumerate(sorted(bound - set(dir(builtins))))}
    toks = [t._replace(string=table.get(t.string, t.string)) if t.type == tokenize.NAME else t
            for t in tokenize.generate_tokens(io.StringIO(text).readline)]
    return tokenize.untokenize(toks)


def reordered(text: str) -> str:
    """`text` with its top-level functions and classes in reverse order (what lies between
    two of them goes with the one after it)."""
    import ast

    tree = ast.parse(text)
    lines = text.splitlines(keepends=True)
    defs = [n for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef)]
    if len(defs) < 2:
        return text
    spans = [((n.decorator_list[0].lineno if n.decorator_list else n.lineno) - 1, n.end_lineno or n.lineno)
             for n in defs]
    pieces = ["".join(lines[(spans[i - 1][1] if i else spans[0][0]):end]) for i, (_start, end) in enumerate(spans)]
    return "".join(lines[:spans[0][0]]) + "\n".join(reversed(pieces)) + "\n" + "".join(lines[spans[-1][1]:])
