"""Scans that run the recurrences of nn/ layers: one folder per scan, each with a sequential reference."""
