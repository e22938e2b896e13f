"""Replay: rebuilds, in a fresh sandbox, the state an agent left behind, and checks fidelity.

Owns walking a trajectory's steps in order, handing each to the task's environment kind
(``EnvironmentKind.replay_step``: the kind re-executes it and compares it with the record), and
running task verifiers on the result. Must not judge, must not create environments itself, and
names no kind, domain or action type: it asks the task's environment kind (``environments``).
"""
