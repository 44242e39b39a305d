"""`python -m autograder build [UNIT] [--check]`: everything derived (catalogues, stubs, nbgrader
notebooks, the README's and AUTHORING's tables) is written by one verb, in the order the files
depend on each other, and `--check` names each stale file with the command that fixes it.

The repository must be in step (a build on a clean checkout changes nothing); the failures are
provoked in a unit scaffolded in a temporary folder, never in the repository."""

from __future__ import annotations

from pathlib import Path

from helpers import REPO, run_grader
from test_second_unit import scaffold

from autograder.authoring import catalogues

FIX = "(run `python -m autograder build`)"


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts}


def test_build_check_passes_on_the_repository():
    """Every derived file of the repository is what `build` writes: on a clean checkout it
    would change nothing (the catalogues' merge keeps their order: no churn)."""
    proc = run_grader("build", "--check")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout == "", proc.stdout


def test_a_second_build_changes_nothing(tmp_path):
    unit = scaffold(tmp_path)          # new-unit ends with a build
    before = _snapshot(tmp_path)
    proc = run_grader("build", unit)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "every derived file is up to date" in proc.stdout
    assert _snapshot(tmp_path) == before
    assert run_grader("build", unit, "--check").returncode == 0


def test_check_names_a_hand_edited_stub_and_build_keeps_the_edit_unless_forced(tmp_path):
    unit = scaffold(tmp_path)
    stub = tmp_path / "assignments" / "tiny_unit" / "doubler.py"
    generated = stub.read_text()
    edited = generated.replace('raise NotImplementedError("double: fill in the TODO above")', "return x + x")
    assert edited != generated
    stub.write_text(edited)
    proc = run_grader("build", unit, "--check")
    assert proc.returncode == 1
    assert proc.stdout.splitlines() == [f"stale: {stub} {FIX}"], proc.stdout
    assert stub.read_text() == edited, "--check writes nothing"
    proc = run_grader("build", unit)
    assert proc.returncode == 1 and "--force" in proc.stdout and str(stub) in proc.stdout, proc.stdout
    assert stub.read_text() == edited, "a stub edited by hand is someone's work: build refuses to overwrite it"
    proc = run_grader("build", unit, "--force")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert stub.read_text() == generated
    assert [p.read_text() for p in stub.parent.glob("doubler.py.bak-*")] == [edited]


def test_check_names_the_catalogue_that_misses_a_new_text_and_one_build_brings_it_everywhere(tmp_path):
    """A new TODO text: --check names the topic's catalogue, the stub and the notebook; build
    writes the catalogue (an empty msgstr, and says so) and the stub; once it is translated, one
    more build puts the Chinese line in the stub and the notebook."""
    unit = scaffold(tmp_path)
    solution = tmp_path / "solutions" / "tiny_unit" / "doubler.py"
    solution.write_text(solution.read_text().replace("# TODO: return twice x.", "# TODO: return x added to itself."))
    po = unit / "topics" / "doubling" / "locale" / "zh_CN" / "LC_MESSAGES" / "unit.po"
    stub = tmp_path / "assignments" / "tiny_unit" / "doubler.py"
    notebook = tmp_path / "course" / "source" / "tiny_unit" / "doubling.ipynb"
    proc = run_grader("build", unit, "--check")
    assert proc.returncode == 1
    for path in (po, stub, notebook):
        assert f"stale: {path} {FIX}" in proc.stdout.splitlines(), proc.stdout
    proc = run_grader("build", unit)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 text(s) to translate" in proc.stdout and "return x added to itself." in proc.stdout, proc.stdout
    text = po.read_text()
    assert 'msgid "return x added to itself."\nmsgstr ""' in text
    assert "return twice x." not in text, "a text no longer used is dropped"
    assert "# TODO: return x added to itself.\n    raise" in stub.read_text(), "no Chinese line before it is translated"
    po.write_text(text.replace('msgid "return x added to itself."\nmsgstr ""',
                               'msgid "return x added to itself."\nmsgstr "返回 x 加上它自己。"'))
    proc = run_grader("build", unit, "--check")
    assert proc.returncode == 1 and f"stale: {stub} {FIX}" in proc.stdout, proc.stdout
    assert run_grader("build", unit).returncode == 0
    assert "# TODO（中文）：返回 x 加上它自己。" in stub.read_text()
    assert "返回 x 加上它自己。" in notebook.read_text()
    assert run_grader("build", unit, "--check").returncode == 0


def test_the_merge_keeps_a_catalogues_order_and_puts_new_texts_after_it(tmp_path):
    po = tmp_path / "unit.po"
    po.write_text(catalogues.render_po({"b": ["x.py:1"], "a": ["y.py:2"]}, {"a": "甲", "b": "乙"}, "zh"))
    merged = catalogues.merged(po, {"a": ["y.py:9"], "c": ["z.py:1"], "b": ["x.py:5"]}, "zh")
    ids = [line for line in merged.splitlines() if line.startswith("msgid ") and line != 'msgid ""']
    assert ids == ['msgid "b"', 'msgid "a"', 'msgid "c"']
    assert 'msgid "a"\nmsgstr "甲"' in merged and 'msgid "c"\nmsgstr ""' in merged
    assert merged.startswith(po.read_text()), "the kept entries are as they were, the new one after them"


def test_the_makefile_targets_call_the_verb():
    makefile = (REPO / "Makefile").read_text()
    assert "\t$(PY) -m autograder build\n" in makefile
    assert "i18n stubs nbgrader: build" in makefile
