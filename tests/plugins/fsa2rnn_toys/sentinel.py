"""A module that tests/contracts/test_plugin_models.py names in a run directory and checks is never imported."""

raise RuntimeError("fsa2rnn_toys.sentinel was imported: a run directory made fsa2rnn import code on its own")
