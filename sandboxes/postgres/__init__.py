"""Postgres sandboxes: one database per sandbox, cloned from a per-task template database."""
