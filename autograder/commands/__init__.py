"""One module per verb of the command line, each with `run(args) -> exit status`.

A command calls the pipeline (`autograder.pipeline`) or the report writers, never another
command: `cli` imports only the chosen command's module.
"""
