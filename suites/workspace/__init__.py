"""The workspace suite: coding tasks on small Python projects, with recorded coding-agent runs."""
