"""Helpers shared by the tests (no tests here)."""
