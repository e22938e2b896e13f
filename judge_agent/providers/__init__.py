"""Model providers: ``openai`` (Chat Completions and compatible servers), ``anthropic``
(Messages API) and ``mock`` (a scripted stand-in for tests), and the registry that finds them by
name (``registry.get_model``). Each provider module imports its SDK itself, so only the providers
a run uses are imported."""
