"""Locally built Docker images for sandboxes, and the Docker leftovers collector."""
