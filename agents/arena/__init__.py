"""The evaluation arena: matches and move time limits (:mod:`.match`), tables of games with
swapped seats and paired chance (:mod:`.evaluation`), watched worker processes (:mod:`.workers`),
statistics (:mod:`.stats`), reports and plots (:mod:`.report`) and the provenance recorded with
results (:mod:`.provenance`)."""

from spieltisch.agents.arena.evaluation import (
    AgentFailure,
    ArenaReport,
    GameResult,
    PairSummary,
    evaluate,
    pairings,
    play_table,
    seat_orders,
    summarize_forfeits,
    summarize_pair,
    summarize_table,
)
from spieltisch.agents.arena.provenance import machine_info
from spieltisch.agents.arena.report import plot, to_markdown

__all__ = [
    "AgentFailure",
    "ArenaReport",
    "GameResult",
    "PairSummary",
    "evaluate",
    "machine_info",
    "pairings",
    "play_table",
    "plot",
    "seat_orders",
    "summarize_forfeits",
    "summarize_pair",
    "summarize_table",
    "to_markdown",
]
