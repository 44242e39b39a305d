"""Import time: never ends, and swallows every exception (KeyboardInterrupt, SystemExit)."""

# ---- appended to the student's module ----
import time

while True:                        # an import that never ends and survives every exception
    try:
        time.sleep(0.05)
    except BaseException:
        pass
