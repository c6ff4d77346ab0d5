"""Batches: cases x candidates x runs, each run under a stable key, resumable after any crash."""
