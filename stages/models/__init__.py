"""Small shared networks and their training loops."""
