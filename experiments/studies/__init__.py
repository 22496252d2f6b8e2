"""Measurements of the agents beyond a tournament, one command each (``python -m
experiments.studies.NAME``): paired runs compared deal by deal, the belief's error, duels with
OpenSpiel's algorithms."""
