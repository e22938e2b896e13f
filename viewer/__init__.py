"""``agentjudge view``: a local web app over a judge results folder or a dataset.

It reads what the layers below wrote (``bench``'s ``verdicts.jsonl`` and ``logs/``, ``replay``'s
``fidelity.jsonl``, the dataset's trajectories and screenshots) and writes only two things: its
table index cache (outside the results folder) and reviewers' label corrections (a separate
``dataset.corrections`` file; the dataset is never edited). Nothing here judges or scores.

Modules: ``source`` (what was opened and where its parts are), ``index`` (the table's rows,
built once and cached), ``pages`` (the data of a run page), ``server`` (the HTTP app), and
``static/`` (the HTML, CSS and JavaScript it serves; no assets from the network).
"""
