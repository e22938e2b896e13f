"""The DS judging suite: filesystem and Postgres tasks, their verifiers, and scripted agent runs.

``spec`` says what a task is made of, ``recorder`` records a scripted agent through the real MCP
server of a sandbox, ``verify_script`` writes a task's standalone ``verify.py`` from the checks in
its module, ``build`` writes the suite and labels each run with its verifier, ``statistics``
measures how much the runs' surface gives their labels away, and ``tasks`` holds the tasks, one
module per task. ``python -m suites.ds --output datasets/ds`` rebuilds the bundled copy.
"""
