"""``python -m fsa2rnn.nn.train ARGS`` (and ``torchrun --nproc-per-node N -m fsa2rnn.nn.train ARGS``): the same
command as ``fsa2rnn train`` (fsa2rnn.cli.train, which this entry point runs); bad input prints one line
``error: …`` and exits with status 2."""

from ...cli.train import entry

if __name__ == "__main__":
    entry()
