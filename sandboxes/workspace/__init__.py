"""The workspace kind's shell: a coding agent's commands, run in the dataset-code box."""
