"""The Postgres MCP tools: the agents' recorded tool surfaces and the judges' server.

``agent_tools`` re-implements the tools of ``postgres-mcp`` (crystaldba) and the SQL-writing
tools of the Supabase and InsForge servers over an ``asyncpg`` connection, with their names,
parameters and output text (rows printed as the Python objects psycopg would have returned), so
that replay can re-execute recorded calls; ``agent_server`` publishes them as an MCP server for
the suite builder's scripted agents. Beside them: ``statements`` (splitting recorded scripts),
``driver`` (running them as postgres-mcp did), ``values`` (psycopg's values) and ``errors``
(psycopg's error text). ``judge_server`` is the server judges get, with its analysis tools in
``analysis``, its statement checks on PostgreSQL's parse in ``inspection``, its capped answers
in ``answers``, its access modes and per-call walls in ``access`` and the watchdog that stops
calls on the server in ``watchdog``.
"""
