"""HiLo's agents by name, as :mod:`spieltisch.agents.registry` reads them."""

from __future__ import annotations

from spieltisch.agents.hilo.heuristic import AGENTS as HEURISTIC_AGENTS

AGENTS = dict(HEURISTIC_AGENTS)

#: random opening moves the arena plays for the table by default: none, the deal varies the games
OPENING_PLIES = 0

#: the env option that shows a person only what their seat knows (hidden cards): ``spieltisch
#: play`` sets it to the seat of the one ``human`` agent unless the options set it
HUMAN_VIEW_OPTION = "render_view"
