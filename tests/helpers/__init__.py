"""Helpers shared by the tests: kernel builders, the independent dtype model and reference arithmetic."""
