"""The DS judging suite: filesystem and Postgres tasks, their verifiers, and scripted agent runs.

``spec`` says what a task is made of, ``recorder`` records a scripted agent through the real MCP
server of a sandbox, ``build`` writes the suite and labels each run with its verifier,
``claims`` tells whether a final message claims success, and ``tasks`` holds the tasks.
``python -m suites.ds --output datasets/ds`` rebuilds the bundled copy.
"""
