"""The Postgres MCP tools: the agents' recorded tool surfaces and the judges' server.

``agent_tools`` re-implements the tools of ``postgres-mcp`` (crystaldba), Supabase's server
(``supabase_tools``) and InsForge's (``insforge_tools``) over an ``asyncpg`` connection, with
their names, parameters, output and validation-error text, so that replay can re-execute
recorded calls; ``agent_server`` publishes them as an MCP server for the suite builder's scripted
agents. Beside them: ``statements`` (splitting recorded scripts), ``driver`` (running them as
postgres-mcp did, psycopg's way), ``values`` (psycopg's values), ``errors`` (psycopg's error
text) and ``node_driver`` (running them as the Node.js servers behind Supabase and InsForge did).
``judge_server`` is the server judges get, with its analysis tools in ``analysis``, its statement
checks on PostgreSQL's parse in ``inspection``, its capped answers in ``answers``, its access
modes and per-call walls in ``access`` and the watchdog that stops calls on the server in
``watchdog``.
"""
