"""The library the experiments share: agent specs and one game (:mod:`.match`), win rates and
their intervals (:mod:`.stats`), the local and Ray backends (:mod:`.parallel`), the seeds
derived from a run's seed (:mod:`.seeds`) and the command-line helpers (:mod:`.cli`)."""
