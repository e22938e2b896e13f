"""Model providers: ``openai`` (Chat Completions and compatible servers), ``anthropic``
(Messages API) and ``mock`` (a scripted stand-in for tests). Each module imports its SDK itself,
so only the providers a run uses are imported (``judge_agent.model.get_model``)."""
