"""A plug-in package for the test suite: extensions registered through entry points only, never by editing fsa2rnn.

tests/plugins/ is put on ``sys.path`` and ``PYTHONPATH`` by tests/conftest.py (no pip install); the committed
``fsa2rnn_toys-0.1.dist-info/entry_points.txt`` declares what this package registers in fsa2rnn's groups.
"""
