"""The ``fsa2rnn`` command line: thin click commands over fsa, compiler, nn and realize."""
