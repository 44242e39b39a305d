import os
import sys

# The grader multiplies tiny matrices: BLAS worker threads only spin and steal the cores
# that the student's worker (and, in batch mode, other gradings) need. Set before numpy loads.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

try:
    from autograder.cli import main  # noqa: E402
except KeyboardInterrupt:             # Ctrl-C while the grader loads: nothing has started yet
    sys.stderr.write("autograder: interrupted; nothing was graded (run the same command again)\n")
    os._exit(130)

_code = main()
# Every file, worker and temporary folder is closed by now (the grader cleans up in `with`
# blocks, never at exit). Tearing down the interpreter's ~900 modules would cost ~0.15 s of
# a grading for nothing, so the process ends here.
sys.stdout.flush()
sys.stderr.flush()
os._exit(_code or 0)
