"""The SQL tools of the Postgres MCP servers agents were recorded with.

``operations`` re-implements the tools of ``postgres-mcp`` (crystaldba) and the SQL-writing tools of
the Supabase and InsForge servers over an ``asyncpg`` connection, with their names, parameters and
output text (rows printed as the Python objects psycopg would have returned), so that replay can
re-execute recorded calls and a later layer can publish the same functions as an MCP server.
Beside it: ``statements`` (splitting scripts), ``driver`` (running them as postgres-mcp did),
``values`` (psycopg's values) and ``errors`` (psycopg's error text).
"""
