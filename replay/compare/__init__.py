"""Comparing two candidates: the engine, its decision rule and its reports."""
