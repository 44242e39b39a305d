"""Import time: spins forever on the CPU, and swallows every exception (KeyboardInterrupt, SystemExit)."""

# ---- appended to the student's module ----
while True:                        # an import that never ends, never sleeps, survives every exception
    try:
        pass
    except BaseException:
        pass
