"""Realization checks: exact (rational) checks, agreement at a dtype and length, certificates, extraction."""
