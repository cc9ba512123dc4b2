"""Tools for people: the ``solitaire-env`` command, training, evaluation, play, recordings and replays."""
