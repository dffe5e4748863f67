"""Backgammon agents: the play-choosing base and ``greedy``/``gnubg`` baselines
(:mod:`.baselines`), Tesauro's ``pubeval`` (:mod:`.pubeval`) and the TD(lambda) value network
(:mod:`.td_value`). The agent table the registry reads is :mod:`.agents`."""
