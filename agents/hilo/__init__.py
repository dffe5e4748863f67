"""HiLo agents: the sampling ``heuristic``/``greedy`` baselines (:mod:`.heuristic`) and the
information-set search over a trained network (:mod:`.search`). The agent table the registry
reads is :mod:`.agents`."""
