"""The student stubs are generated from the solutions and must not drift or leak."""

import io
import re
import subprocess
import sys
import tokenize

import pytest
from helpers import REPO, SOLUTIONS, STUBS, UNIT

sys.path.insert(0, str(REPO / "scripts"))
import make_stubs  # noqa: E402

BLOCK = re.compile(r"### BEGIN SOLUTION\n(.*?)\n\s*### END SOLUTION", re.S)


def test_committed_stubs_match_the_generator():
    expected = make_stubs.expected_stubs()
    assert expected, "no solution modules found"
    committed = {p.name: p.read_text() for p in STUBS.glob("*.py")}
    assert set(committed) == set(expected), "every solution module has exactly one stub"
    stale = [n for n in expected if committed[n] != expected[n]]
    assert not stale, f"stale stubs {stale}: run `make stubs`"
    check = run_make_stubs("--check")
    assert check.returncode == 0, check.stdout


def test_no_marker_reaches_assignments():
    for path in STUBS.rglob("*"):
        if path.is_file() and path.suffix in {".py", ".ipynb", ".md", ".txt", ".yaml"}:
            text = path.read_text()
            assert "BEGIN SOLUTION" not in text and "END SOLUTION" not in text, path
            assert "HIDDEN TESTS" not in text, path


def code_lines(source: str) -> set[str]:
    """Stripped lines that hold code (docstrings may quote the algorithm on purpose)."""
    lines = source.splitlines()
    numbers = {tok.start[0] for tok in tokenize.generate_tokens(io.StringIO(source).readline)
               if tok.type in (tokenize.NAME, tokenize.OP, tokenize.NUMBER)}
    return {lines[n - 1].strip() for n in numbers}


def test_no_solution_line_reaches_the_stubs():
    for solution in SOLUTIONS.glob("*.py"):
        stub_lines = code_lines((STUBS / solution.name).read_text())
        for block in BLOCK.findall(solution.read_text()):
            for line in block.splitlines():
                code = line.strip()
                # short lines ("return h", "else:") legitimately occur outside solution blocks
                if len(code) > 24 and not code.startswith("#"):
                    assert code not in stub_lines, f"{solution.name}: solution line in the stub: {code}"


def test_every_todo_is_followed_by_a_not_implemented_stub():
    for stub in STUBS.glob("*.py"):
        lines = stub.read_text().splitlines()
        raises = [i for i, line in enumerate(lines) if "raise NotImplementedError(" in line]
        assert raises, f"{stub.name} has nothing to implement"
        for i in raises:
            before = [line.strip() for line in lines[max(0, i - 6):i]]
            assert any(b.startswith("# TODO") or b.startswith("#") for b in before), \
                f"{stub.name}:{i + 1}: a stubbed block without a TODO comment above it"


def test_generator_replaces_blocks_and_rejects_bad_markers():
    src = ('def f(x):\n    """Doc."""\n    # TODO: double x\n    ### BEGIN SOLUTION\n    y = 2 * x\n'
           '    ### END SOLUTION\n    return y\n\n\n### BEGIN SOLUTION\ndef _helper():\n    pass\n### END SOLUTION\n')
    out = make_stubs.stub_source(src, "m.py")
    assert '    raise NotImplementedError("f: fill in the TODO above")\n    return y\n' in out
    assert "y = 2 * x" not in out and "_helper" not in out and "# TODO: double x" in out
    for bad in ["def f():\n    ### BEGIN SOLUTION\n    pass\n",
                "def f():\n    pass\n    ### END SOLUTION\n",
                "def f():\n    ### BEGIN SOLUTION\n    ### BEGIN SOLUTION\n    ### END SOLUTION\n"]:
        with pytest.raises(make_stubs.MarkerError):
            make_stubs.stub_source(bad, "bad.py")


def _unit_with_stubs(tmp_path):
    """A one-module unit whose stub folder is in tmp_path (make_stubs writes there)."""
    unit = tmp_path / "tiny_unit"
    (unit / "reference").mkdir(parents=True)
    (unit / "topics" / "t").mkdir(parents=True)
    (unit / "unit.yaml").write_text(f"name: tiny_unit\nstubs: {tmp_path / 'stubs'}\n")
    (unit / "topics" / "t" / "topic.yaml").write_text("module: m\nfunctions: {f: {}}\n")
    (unit / "topics" / "t" / "rubric.yaml").write_text("topic: t\npoints: 1\ntests:\n"
                                            "  - {test: test_f, visibility: public, points: 1, hint: h}\n")
    (unit / "reference" / "m.py").write_text('def f(x):\n    """Double x."""\n    y = None\n    # TODO: y = 2x\n'
                                             '    ### BEGIN SOLUTION\n    y = 2 * x\n    ### END SOLUTION\n'
                                             '    return y\n')
    return unit, tmp_path / "stubs"


def run_make_stubs(*args):
    return subprocess.run([sys.executable, str(REPO / "scripts" / "make_stubs.py"), *map(str, args)],
                          capture_output=True, text=True, cwd=REPO)


def test_make_stubs_never_overwrites_edited_stubs(tmp_path):
    unit, stubs = _unit_with_stubs(tmp_path)
    assert run_make_stubs("--assignment", unit).returncode == 0
    generated = (stubs / "m.py").read_text()
    assert "raise NotImplementedError" in generated
    # the instructor edits the solution: regenerating over an untouched stub is fine
    (unit / "reference" / "m.py").write_text((unit / "reference" / "m.py").read_text().replace("Double x.", "Twice x."))
    assert run_make_stubs("--assignment", unit).returncode == 0
    assert "Twice x." in (stubs / "m.py").read_text()
    # a student fills in the stub: make stubs refuses and changes nothing
    work = (stubs / "m.py").read_text().replace('raise NotImplementedError("f: fill in the TODO above")', "y = x + x")
    (stubs / "m.py").write_text(work)
    before = {p.name: p.read_bytes() for p in stubs.iterdir()}
    proc = run_make_stubs("--assignment", unit)
    assert proc.returncode == 1 and "m.py" in proc.stderr and "--force" in proc.stderr, proc.stderr
    assert {p.name: p.read_bytes() for p in stubs.iterdir()} == before
    # --force overwrites and keeps the student's version
    proc = run_make_stubs("--assignment", unit, "--force")
    assert proc.returncode == 0, proc.stderr
    backups = list(stubs.glob("m.py.bak-*"))
    assert len(backups) == 1 and backups[0].read_text() == work
    assert "raise NotImplementedError" in (stubs / "m.py").read_text()


def test_stubs_have_no_undefined_name():
    """Outputs are assigned before each TODO, so an editor shows no error in a stub (an
    unused import is expected: the student's code will use it)."""
    proc = subprocess.run([sys.executable, "-m", "pyflakes", *map(str, sorted(STUBS.glob("*.py")))],
                          capture_output=True, text=True)
    problems = [line for line in proc.stdout.splitlines() if "imported but unused" not in line]
    assert not problems, "\n".join(problems)


def test_student_files_cite_nothing_students_do_not_have():
    """No "SPEC §…" or "seed 000": students have neither file (name "the course notes")."""
    cites = re.compile(r"\bSPEC\b|§|[Ss]eed 0\d\d|seeds'")
    student_files = [p for p in STUBS.rglob("*") if p.is_file() and p.suffix in (".py", ".md", ".yaml", ".txt")]
    student_files += sorted(UNIT.dirs["topics"].glob("*/rubric.yaml"))
    found = [f"{p.relative_to(REPO)}:{i}" for p in student_files
             for i, line in enumerate(p.read_text().splitlines(), 1) if cites.search(line)]
    assert not found, found
