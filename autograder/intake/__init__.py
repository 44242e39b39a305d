"""What comes in from outside the grader, read without trusting it:

- `files`: no-follow reads of a submission's files (`read_regular`, `copy_submission`);
- `submissions`: the shapes a submission comes in (folders, clones, archives, uploads);
- `manifest`: the protected files' hashes, and which of them a checkout changed.
"""
