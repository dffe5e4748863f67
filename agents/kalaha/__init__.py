"""Kalaha agents: the exact solver (:mod:`.solver`) over endgame databases (:mod:`.endgame`),
the ``perfect`` agent that plays by it (:mod:`.perfect`), move accuracy judged by the solver
(:mod:`.accuracy`); the alpha-beta baselines are shared with Hus (:mod:`spieltisch.agents.mancala`).
The agent table the registry reads is :mod:`.agents`."""
