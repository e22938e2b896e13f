"""Docker for sandboxes: the locally built image, containers with a resident helper and their warm
pools, and the Docker leftovers collector."""
