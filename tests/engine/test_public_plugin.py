"""The public tests' plugin (autograder/authoring/public_plugin.py): a unit's conftest names
no module, the plugin gives a fixture for each topic module its manifest lists, and stays
out of the grader's way."""

from __future__ import annotations

import subprocess
import sys

import pytest
import yaml
from helpers import REPO, STUBS

from autograder import i18n
from autograder.authoring import public_plugin
from autograder.commands.new_unit import scaffold
from autograder.unit.load import load_unit


class PluginManager:
    """pytest's plugin manager, as far as `install` uses it."""

    def __init__(self, *present):
        self.plugins = dict.fromkeys(present)

    def has_plugin(self, name):
        return name in self.plugins

    def register(self, plugin, name):
        assert name not in self.plugins, f"{name} registered twice"
        self.plugins[name] = plugin


class Parser:
    def __init__(self):
        self.options = []

    def addoption(self, *names, **settings):
        self.options.append(names)


@pytest.fixture
def english():
    yield
    i18n.activate("en")             # install chose the language from the locale


def test_the_fixtures_are_the_modules_the_topic_folders_list(english):
    topic_files = (REPO / "autograder" / "units" / "rnn_prehistory" / "topics").glob("*/topic.yaml")
    modules = {yaml.safe_load(f.read_text()).get("module", f.parent.name) for f in topic_files}
    manager, parser = PluginManager(), Parser()
    public_plugin.install(parser, manager, unit="rnn_prehistory", stubs=STUBS)
    public_plugin.install(parser, manager, unit="rnn_prehistory", stubs=STUBS)    # the conftest read again
    (name, plugin), = manager.plugins.items()
    fixtures = {getattr(plugin, attribute).name for attribute in dir(plugin) if attribute.startswith("student_")}
    assert fixtures == modules and len(modules) == 9
    assert hasattr(plugin, "rng") and hasattr(plugin, "report_extras")
    assert parser.options == [("--submission",)]


def test_inside_the_grader_the_plugin_stays_out():
    manager, parser = PluginManager(public_plugin.GRADER_FIXTURES), Parser()
    public_plugin.install(parser, manager, unit="rnn_prehistory", stubs=STUBS)
    assert list(manager.plugins) == [public_plugin.GRADER_FIXTURES] and parser.options == []


def test_a_conftest_naming_no_module_runs_a_new_units_public_tests(tmp_path):
    unit_dir = scaffold("plugin_unit", tmp_path)
    unit = load_unit(unit_dir)
    public = unit.dirs["public_tests"]          # with the scaffold's conftest, which names no module
    right = tmp_path / "right"
    right.mkdir()
    for topic in unit.topics:
        (right / f"{topic.module}.py").write_text("def double(x):\n    return x + x\n")

    def pytest_run(*args):
        return subprocess.run([sys.executable, "-m", "pytest", str(public), "-q", "-p", "no:cacheprovider", *args],
                              cwd=tmp_path, capture_output=True, text=True, timeout=120)

    proc = pytest_run("--submission", str(right))
    assert proc.returncode == 0 and "1 passed" in proc.stdout, proc.stdout[-2000:] + proc.stderr[-2000:]
    proc = pytest_run()                                        # the default: the unit's stubs
    assert proc.returncode == 1 and "NotImplementedError" in proc.stdout, proc.stdout[-2000:]
