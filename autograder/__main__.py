import os
import sys

# The grader multiplies tiny matrices: BLAS worker threads only spin and steal the cores
# that the student's worker (and, in batch mode, other gradings) need. Set before numpy loads.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

from autograder.cli import main  # noqa: E402

sys.exit(main())
