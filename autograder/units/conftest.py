"""Collection of the repository's tests below the units (`testpaths` in pyproject.toml): a
topic's oracle test (topics/<topic>/test_oracle.py) is collected; its hidden suite runs only
inside the grader (it needs the grader's plugin and a worker), and the public tests run from
the stubs' folder (tests/content/test_public_tests.py), never through a unit's `public` link."""

collect_ignore_glob = ["*/topics/*/test_hidden.py", "*/topics/*/alternatives/*", "*/public", "*/reference"]
