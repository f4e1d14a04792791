"""Communicating activations between LM agents (Ramesh & Li, ICML 2025): steps, games, claims."""
