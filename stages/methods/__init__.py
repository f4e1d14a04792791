"""Reusable, paper-independent methods. Nothing here knows about papers."""
