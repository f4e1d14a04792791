"""Graph datasets: the graph table format, the TU-format loader, B3DB molecules and synthetic controls."""
