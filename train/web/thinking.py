"""The page's analysis panel and Hus sowing steps, computed for a :class:`.GameSession`.

The numbers come from :mod:`spieltisch.agents.analysis` (what an agent thinks of the position it
would move in) and, for Kalaha, from the solver when the position solves within a second. This
module adds the labels the board uses and enforces the time limit; in HiLo it is handed only the
information set of the seat the page shows (see :meth:`.GameSession.analysis_input`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from spieltisch.agents.human import move_label
from spieltisch.train.web.boards import board_view
from spieltisch.train.web.sessions import GameSession, RequestError, run_with_limit

#: seconds the Kalaha solver may take before the panel says the position is too big to solve
SOLVER_SECONDS = 1.0
#: the most steps of one Hus move the page is sent (a move can relay for thousands of steps)
SOWING_STEPS = 2000


def analyse_session(session: GameSession, agent_spec: str | None) -> dict[str, Any]:
    """What ``agent_spec`` (default: the agent of the seat to move) thinks of the position, with
    every move labelled as the board names it; Kalaha adds the solver's exact values."""
    from spieltisch.agents.analysis import analyse, solver_analysis

    agent, spec, first = session.analyst(agent_spec)
    observation, state, seat = session.analysis_input()
    settings = session.settings
    limit = settings.first_move_time_limit if first else settings.analysis_time_limit

    def think() -> dict[str, Any]:
        return analyse(agent, session.game, observation, state, session.options)

    think_alone = holding(session.analysis_slot, think)
    result = run_with_limit(think_alone, limit, f"the analysis by {spec}")
    result["agent"] = spec
    result["seat"] = seat
    for move in result.get("moves", []):
        actions = move.get("actions", [move.get("action")])
        names = [
            move_label(session.game, a, seat, session.options) for a in actions if a is not None
        ]
        move["label"] = " ".join(names) or "pass"
    if session.game == "kalaha":
        position = session.raw.agent_state()
        try:
            # (a slot of its own: a solver still building its table must not hold up the
            # agent's analysis, only the next solve)
            solve = holding(session.solver_slot, lambda: solver_analysis(position, SOLVER_SECONDS))
            result["solver"] = run_with_limit(solve, limit, "the solver")
        except RequestError:  # the first use on a board size builds its endgame table
            note = ("the solver is still preparing (its first use on this board size builds an "
                    "endgame table); analyse again in a few seconds")  # fmt: skip
            result["solver"] = {"solved": False, "note": note}
    return result


def holding(slot: threading.Semaphore, fn: Callable[[], Any]) -> Callable[[], Any]:
    """``fn`` holding ``slot`` (one of the session's) until it returns, which may be after its
    request gave up on it (504); RequestError (409) while an earlier call still holds it."""
    if not slot.acquire(blocking=False):
        raise RequestError(
            "busy: an earlier analysis of this game, over its time limit, is still computing; "
            "analyse again when it ends",
            409,
        )

    def run() -> Any:
        try:
            return fn()
        finally:
            slot.release()

    return run


def sowing_steps(session: GameSession, index: int) -> dict[str, Any]:
    """Hus move ``index`` (0 = the game's first move) stone by stone: the board after each step."""
    if session.game != "hus":
        raise RequestError("sowing steps are shown for Hus moves")
    if not 0 <= index < len(session.states_before):
        raise RequestError(f"no move {index}: the game has {len(session.states_before)} moves", 404)
    before = session.states_before[index]
    move = session.moves[index]
    trace = before.sowing_trace(move["action"], max_steps=SOWING_STEPS)
    return {
        "move": move,
        "before": board_view("hus", before),
        "steps": [step.as_dict() for step in trace],  # {kind, pit, hand, sides}
        "truncated": trace.truncated,
    }
