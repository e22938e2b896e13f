"""Environment kinds: one record per kind of environment an agent worked in.

Owns the ``EnvironmentKind`` interface (``kind``), the registry that finds kinds by name, by task
and by served name (``registry``), the choice of backends and the providers started for a run
(``backends``), the collection of leftovers across kinds (``leftovers``), what replay hands a kind
and gets back for each recorded step (``steps``), the comparison rules all kinds share
(``comparison``, ``diffs``), and one subpackage per kind (``filesystem``, ``postgres``,
``browser``, ``android``, ``desktop``). Everything the rest of the runtime needs to know about a
kind is asked through its record; only this package dispatches on a kind. Must not import
``replay``, ``judge_agent``, ``bench`` or the command line.
"""
