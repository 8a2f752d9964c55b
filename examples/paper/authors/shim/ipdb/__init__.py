"""Imported by NIFTY; never called."""
