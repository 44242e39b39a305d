"""Import time: write a .pth file, sitecustomize.py and usercustomize.py (the line
_PARAMS["line"]) into each site-packages folder of _PARAMS["folders"]."""

_PARAMS: dict = {}   # the run's values, written by the harness (harness.payload)

# ---- appended to the student's module ----
import os

for _folder in _PARAMS["folders"]:
    for _name in ("zz_containment.pth", "sitecustomize.py", "usercustomize.py"):
        try:
            with open(os.path.join(_folder, _name), "w") as _fh:
                _fh.write(_PARAMS["line"])
        except OSError:
            pass
