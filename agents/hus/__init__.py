"""Hus agents: ``greedy`` and ``alphabeta`` from the mancala search shared with Kalaha
(:mod:`spieltisch.agents.mancala.alphabeta`). The registry reads the agent table :mod:`.agents`.
"""
