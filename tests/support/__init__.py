"""Shared helpers and fixtures of the test suite: imported by test files and benchmarks, never collected."""
