"""Appended to the bptt.py stub: rel_error looks for the grader's secret in its environment and
in every /proc/<pid>/environ, reads the hidden suite (_PARAMS["hidden_suite"]), connects to a
port on the host (_PARAMS["port"]), and raises with what it saw and its uid."""

_PARAMS: dict = {}   # the run's values, written by the harness (harness.payload)

# ---- appended to the student's module ----
import os

try:
    import socket
except ImportError:        # the sandbox preloads numpy and part of the standard library only
    socket = None

def _view():
    found = [k for k, v in os.environ.items() if "s3cr3t-grader-token" in v or k == "GRADER_SECRET"]
    for pid in os.listdir("/proc") if os.path.isdir("/proc") else []:
        try:
            with open(f"/proc/{pid}/environ", "rb") as fh:
                if b"s3cr3t-grader-token" in fh.read():
                    found.append(f"/proc/{pid}/environ")
        except OSError:
            pass
    try:
        open(_PARAMS["hidden_suite"]).read()
        hidden = "readable"
    except OSError:
        hidden = "unreadable"
    try:
        socket.create_connection(("127.0.0.1", _PARAMS["port"]), timeout=1).close()
        net = "connected"
    except (OSError, AttributeError):
        net = "refused"
    return f"VIEW found={found} uid={os.getuid()} hidden={hidden} net={net} home={os.environ.get('HOME')}"

def rel_error(a, b):
    raise RuntimeError(_view())
