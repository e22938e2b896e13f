"""The search judging suite: a small archived web, search tasks over it, scripted agents.

``world`` holds the ground truth, ``site`` renders the three sites and writes their page archive,
``browsing`` records a scripted agent's browser calls through the browser MCP server and reads
its snapshots, ``spec`` says what a task, a policy and a claim are, ``tasks`` holds the twelve
tasks and their agents, and ``build`` writes the dataset, labelling every claim against the
world. ``python -m suites.search --output datasets/search`` rebuilds the bundled copy.
"""
