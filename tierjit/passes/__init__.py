"""Passes over typed IR; pipeline.py lists their order."""
