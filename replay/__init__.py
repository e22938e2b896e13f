"""Replay: rebuilds, in a fresh sandbox, the state an agent left behind, and checks fidelity.

Owns applying a trajectory's state-changing actions in order, comparing re-executed outputs with
the recorded ones, and running task verifiers on the result. Must not judge, and must not create
environments itself: it asks the task's environment kind (``environments``) for them.
"""
