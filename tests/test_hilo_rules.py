"""HiLo rules, one constructed position per rule with its exact outcome.

Positions use the engine's notation (``HiLoState.to_text``): ``pN`` = seat N's layout, top row
``|`` bottom row, ``?`` = face down; piles bottom to top, ``*`` = all remaining cards.
Actions: 0 take discard, 1 draw, 2+i swap into slot i, 14+i discard and reveal slot i,
26+i reveal slot i, 38+i wizard own slot i, 50+12(j-1)+i wizard: slot i of the j-th player
to the left.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from spieltisch.envs.hilo import HiLoGame, score_faces
from spieltisch.envs.hilo import rules as R

TAKE, DRAW = 0, 1


def SWAP(i: int) -> int:
    return 2 + i


def DISCARD_REVEAL(i: int) -> int:
    return 14 + i


def REVEAL(i: int) -> int:
    return 26 + i


def WIZ_OWN(i: int) -> int:
    return 38 + i


def WIZ_OTHER(j: int, i: int) -> int:
    return 50 + 12 * (j - 1) + i


G2 = HiLoGame(2)
G3 = HiLoGame(3)


def position(game: HiLoGame, *layouts: str, **fields: str) -> str:
    parts = [f"p{p}={lay}" for p, lay in enumerate(layouts)]
    parts += [f"{k}={v}" for k, v in fields.items()]
    return " ".join(parts)


def field(state, key: str) -> str:
    return next(f for f in state.to_text().split() if f.startswith(key + "="))[len(key) + 1 :]


def check_cards(state) -> None:
    assert sorted(state.all_cards().tolist()) == list(range(state.game.num_cards))


# --- setup -------------------------------------------------------------------------------------
def test_starting_wizard_is_replaced_until_a_non_wizard_comes():
    # The draw pile holds the other three wizards and one Re$: the wizard goes back, the pile is
    # shuffled, and wizards are put back again until the Re$ comes up.
    text = position(
        G2,
        "?Re-L,?Re-L,?Re-L,?Wz,?Re-L,?Re-R|?Re-R,?Re-R,?Re-R,?Re-T,?Re-T,?Re-T",
        "?Re-B,?Re-B,?Re-B,?Dr,?Dr,?Dr|?Dr,?Dr,?Wo,?Wo,?Wo,?Wo",
        draw="Re$,Wz,Wz,Wz",
        discard="*",
        phase="setup",
        to_move="0",
    )
    for seed in range(5):
        s = G2.state_from_text(text.replace("to_move=0", f"to_move=0 rng={seed:x}"))
        assert s.legal_actions() == tuple(REVEAL(i) for i in range(12))
        s.apply(REVEAL(3))
        assert field(s, "p0").split(",")[3] == "Re$"  # face up
        # All four wizards lie in the pile; publicly known is only the one put back (the others
        # were unknown cards, and equal faces cannot be told apart).
        assert sorted(field(s, "draw").split(",")) == ["!Wz", "Wz", "Wz", "Wz"]
        assert s.phase == "setup" and s.current_player == 1
        check_cards(s)


def test_starting_wizard_goes_back_into_a_full_draw_pile():
    s = G2.new_initial_state(7)
    lay = s.layout(0)
    wiz = [i for i in range(12) if G2.deck.card_faces[lay[i]].code == "Wz"]
    text = s.to_text()
    if not wiz:  # put a wizard face down into slot 0 by writing the position
        p0 = field(s, "p0").split(",")
        draw = field(s, "draw").split(",")
        k = draw.index("Wz")
        draw[k], p0[0] = p0[0][1:], "?Wz"
        text = text.replace(field(s, "p0"), ",".join(p0)).replace(
            "draw=" + field(s, "draw"), "draw=" + ",".join(draw)
        )
        wiz = [0]
    s = G2.state_from_text(text)
    size = len(s.draw_pile())
    s.apply(REVEAL(wiz[0]))
    face = G2.deck.card_faces[s.layout(0)[wiz[0]]]
    assert face.code != "Wz" and s.face_up(0)[wiz[0]]
    assert len(s.draw_pile()) == size  # the wizard went in, one card came out
    known = s.known_in_draw_pile()
    assert [G2.deck.card_faces[c].code for c in s.draw_pile() if known[c]] == ["Wz"]
    check_cards(s)
    # Every player now knows that a wizard lies in the draw pile (by face, not by position).
    for p in (0, 1):
        assert s.view(p).known_in_draw == ("Wz",)


def test_phoenix_as_starting_card_has_no_effect():
    text = position(
        G2,
        "?Ph$,?Re-L,?Re-L,?Re-L,?Re-L,?Re-R|?Re-R,?Re-R,?Re-R,?Re-T,?Re-T,?Re-T",
        "?Re-B,?Re-B,?Re-B,?Dr,?Dr,?Dr|?Dr,?Dr,?Wo,?Wo,?Wo,?Wo",
        draw="*",
        discard="Un",
        phase="setup",
        to_move="0",
    )
    s = G2.state_from_text(text)
    s.apply(REVEAL(0))
    assert s.phase == "setup" and s.current_player == 1
    assert field(s, "p0").startswith("Ph$,?Re-L")
    s.apply(REVEAL(11))
    assert s.phase == "turn" and s.current_player == 0  # setup over, seat 0 starts
    assert s.num_turns == 0 and s.move_number == 2


# --- turns -------------------------------------------------------------------------------------
BASE_P0 = "Re-LR,?Re-L,?Re-L,?Re-L,?Re-L,?Wz|?Re-R,?Re-R,?Re-R,?Re-R,?Re-T,?Re-T"
BASE_P1 = "Re-B,Re-B,Re-B,?Dr,?Dr,?Dr|?Dr,?Dr,?Wo,?Wo,?Wo,?Wo"


def test_turn_a_take_discard_and_swap_into_a_face_down_slot():
    s = G2.state_from_text(
        position(G2, BASE_P0, BASE_P1, draw="*", discard="Un,Ki-LR", phase="turn", to_move="0")
    )
    assert s.legal_actions() == (TAKE, DRAW)
    s.apply(TAKE)
    assert s.phase == "taken" and s.held_from == "discard"
    assert s.legal_actions() == tuple(SWAP(i) for i in range(12))
    assert field(s, "discard") == "Un"
    s.apply(SWAP(6))
    assert field(s, "p0") == "Re-LR,?Re-L,?Re-L,?Re-L,?Re-L,?Wz|Ki-LR,?Re-R,?Re-R,?Re-R,?Re-T,?Re-T"
    assert field(s, "discard") == "Un,Re-R"  # the swapped-out card lies face up on top
    assert s.phase == "turn" and s.current_player == 1 and s.num_turns == 1
    check_cards(s)


def test_turn_b_draw_then_discard_and_reveal():
    s = G2.state_from_text(
        position(G2, BASE_P0, BASE_P1, draw="Un,Ba", discard="*", phase="turn", to_move="0")
    )
    s.apply(DRAW)
    assert s.phase == "drawn" and s.held_from == "draw"
    assert G2.deck.card_faces[s.held_card].code == "Ba"
    # swap into any slot, or discard it and turn up any face-down slot (slot 0 is face up)
    expected = tuple(SWAP(i) for i in range(12)) + tuple(DISCARD_REVEAL(i) for i in range(1, 12))
    assert s.legal_actions() == expected
    s.apply(DISCARD_REVEAL(7))
    assert field(s, "p0").split("|")[1].split(",")[1] == "Re-R"
    assert field(s, "discard").endswith(",Ba")
    assert field(s, "draw") == "Un"
    assert s.phase == "turn" and s.current_player == 1


def test_turn_b_swap_drawn_card_face_up_into_a_face_up_slot():
    s = G2.state_from_text(
        position(G2, BASE_P0, BASE_P1, draw="Un,Ba", discard="*", phase="turn", to_move="1")
    )
    s.apply(DRAW)
    s.apply(SWAP(0))
    assert field(s, "p1").startswith("Ba,Re-B")
    assert field(s, "discard").endswith(",Re-B")
    assert s.current_player == 0


# --- effects -----------------------------------------------------------------------------------
def test_phoenix_reveals_a_wizard_chain():
    s = G2.state_from_text(
        position(G2, BASE_P0, BASE_P1, draw="Un,Un,Ph$", discard="*", phase="turn", to_move="0")
    )
    s.apply(DRAW)
    s.apply(SWAP(0))  # the phoenix arrives face up: one more card must be turned up
    assert s.phase == "phoenix" and s.current_player == 0
    assert s.legal_actions() == tuple(REVEAL(i) for i in range(1, 12))
    assert field(s, "discard").endswith(",Re-LR")
    s.apply(REVEAL(5))  # ... it is a wizard: a swap with another player follows
    assert s.phase == "wizard" and s.current_player == 0
    # any own card but the face-up wizard (face-down cards included)
    assert s.legal_actions() == tuple(WIZ_OWN(i) for i in range(12) if i != 5)
    s.apply(WIZ_OWN(1))
    assert s.phase == "wizard2"
    assert s.legal_actions() == tuple(WIZ_OTHER(1, i) for i in range(12))
    s.apply(WIZ_OTHER(1, 0))
    # Both cards keep their faces: a face-down card stays face down, a face-up one face up.
    assert field(s, "p0") == "Ph$,Re-B,?Re-L,?Re-L,?Re-L,Wz|?Re-R,?Re-R,?Re-R,?Re-R,?Re-T,?Re-T"
    assert field(s, "p1") == "?Re-L,Re-B,Re-B,?Dr,?Dr,?Dr|?Dr,?Dr,?Wo,?Wo,?Wo,?Wo"
    assert s.phase == "turn" and s.current_player == 1 and s.num_turns == 1
    check_cards(s)


def test_wizard_swap_keeps_both_faces_face_up_for_face_down():
    s = G2.state_from_text(
        position(
            G2,
            BASE_P0,
            BASE_P1,
            draw="Un,Wz",
            discard="*",
            phase="turn",
            to_move="0",
        ).replace("?Wz", "?Re$")
    )
    s.apply(DRAW)
    s.apply(SWAP(11))  # a drawn wizard placed into the layout casts its spell at once
    assert s.phase == "wizard"
    s.apply(WIZ_OWN(0))  # own face-up Re-LR ...
    s.apply(WIZ_OTHER(1, 11))  # ... for the other player's face-down Wo
    assert field(s, "p0") == "?Wo,?Re-L,?Re-L,?Re-L,?Re-L,?Re$|?Re-R,?Re-R,?Re-R,?Re-R,?Re-T,Wz"
    assert field(s, "p1") == "Re-B,Re-B,Re-B,?Dr,?Dr,?Dr|?Dr,?Dr,?Wo,?Wo,?Wo,Re-LR"
    assert s.phase == "turn" and s.current_player == 1


def test_face_up_wizards_cannot_be_swapped_by_a_wizard():
    p1 = "Wz,Re-B,Re-B,?Dr,?Dr,?Dr|?Dr,?Dr,?Wo,?Wo,?Wo,?Wo"
    p0 = BASE_P0.replace("?Wz", "Wz")
    s = G2.state_from_text(
        position(G2, p0, p1, draw="Un,Wz", discard="*", phase="turn", to_move="0")
    )
    s.apply(DRAW)
    s.apply(SWAP(1))
    assert s.phase == "wizard"
    assert s.legal_actions() == tuple(WIZ_OWN(i) for i in range(12) if i not in (1, 5))
    s.apply(WIZ_OWN(2))
    assert s.legal_actions() == tuple(WIZ_OTHER(1, i) for i in range(1, 12))


def test_wizard_swap_bringing_a_face_up_phoenix_triggers_it():
    p1 = "Ph$,Re-B,Re-B,?Dr,?Dr,?Dr|?Dr,?Dr,?Wo,?Wo,?Wo,?Wo"
    s = G2.state_from_text(
        position(G2, BASE_P0, p1, draw="Un,Wz", discard="*", phase="turn", to_move="0")
    )
    s.apply(DRAW)
    s.apply(SWAP(0))
    s.apply(WIZ_OWN(1))
    s.apply(WIZ_OTHER(1, 0))  # the mover receives the face-up phoenix
    assert s.phase == "phoenix" and s.current_player == 0
    assert field(s, "p0").startswith("Wz,Ph$,?Re-L")
    assert field(s, "p1").startswith("?Re-L,Re-B")
    s.apply(REVEAL(2))
    assert s.phase == "turn" and s.current_player == 1


def test_cards_arriving_in_another_layout_trigger_nothing():
    p0 = "Re-LR,Ph$,?Re-L,?Re-L,?Re-L,?Wz|?Re-R,?Re-R,?Re-R,?Re-R,?Re-T,?Re-T"
    s = G2.state_from_text(
        position(G2, p0, BASE_P1, draw="Un,Wz", discard="*", phase="turn", to_move="0")
    )
    s.apply(DRAW)
    s.apply(SWAP(0))
    s.apply(WIZ_OWN(1))  # give the face-up phoenix away
    s.apply(WIZ_OTHER(1, 3))
    assert field(s, "p1") == "Re-B,Re-B,Re-B,Ph$,?Dr,?Dr|?Dr,?Dr,?Wo,?Wo,?Wo,?Wo"
    assert s.phase == "turn" and s.current_player == 1  # no effect for anybody


def test_phoenix_from_the_discard_pile_acts():
    s = G2.state_from_text(
        position(G2, BASE_P0, BASE_P1, draw="*", discard="Un,Ph$", phase="turn", to_move="0")
    )
    s.apply(TAKE)
    s.apply(SWAP(0))
    assert s.phase == "phoenix"


def test_phoenix_as_the_last_card_has_no_effect_and_ends_the_game():
    p0 = "Re-LR,Re-L,Re-L,Re-L,Re-L,Wz|Re-R,Re-R,Re-R,Re-R,Re-T,?Ph$"
    s = G2.state_from_text(
        position(G2, p0, BASE_P1, draw="Un,Ba", discard="*", phase="turn", to_move="0")
    )
    s.apply(DRAW)
    s.apply(DISCARD_REVEAL(11))
    assert s.is_terminal() and s.legal_actions() == ()
    assert field(s, "ender") == "0"
    assert all(s.face_up(1))  # the other layout is turned up at the end


def test_wizard_without_a_legal_swap_lapses(tmp_path):
    # Only a deck with many wizards allows it: the other layout is 12 face-up wizards (so it is
    # complete and the game ends after this turn).
    deck = {
        "cards": [
            {"kind": "wizard", "count": 30},
            {"kind": "resident", "count": 30, "coin": True},
        ]
    }
    path = tmp_path / "wizards.json"
    path.write_text(json.dumps(deck))
    for final_round in (False, True):
        game = HiLoGame(2, final_round=final_round, deck=str(path))
        extra = {"final": "1"} if final_round else {}
        s = game.state_from_text(
            position(
                game,
                "?Re$,?Re$,?Re$,?Re$,?Re$,?Re$|?Re$,?Re$,?Re$,?Re$,?Re$,?Re$",
                ",".join(["Wz"] * 12),
                draw="Wz",
                discard="*",
                phase="turn",
                to_move="0",
                **extra,
            )
        )
        assert G2.num_actions == game.num_actions
        s.apply(DRAW)
        assert game.deck.card_faces[s.held_card].code == "Wz"
        s.apply(SWAP(0))
        assert s.is_terminal()  # no wizard phase: the spell had nothing to swap
        assert game.deck.card_faces[s.layout(0)[0]].code == "Wz"


# --- end of the game ---------------------------------------------------------------------------
def _completing_position(game: HiLoGame, **extra: str):
    p0 = "Re-LR,Re-L,?Re-L,?Re-L,?Re-L,?Re-T|?Re-R,?Re-R,?Re-R,?Re-R,?Re-T,?Re-T"
    p1 = "Re-B,Re-B,Re-B,Dr,Dr,Dr|Dr,Dr,Wo,Wo,Wo,?Wo"
    return game.state_from_text(
        position(game, p0, p1, draw="Un,Wz", discard="*", phase="turn", to_move="0", **extra)
    )


def test_game_ends_after_a_wizard_swap_completes_another_layout():
    s = _completing_position(G2)
    s.apply(DRAW)
    s.apply(SWAP(2))
    s.apply(WIZ_OWN(1))  # own face-up Re-L for seat 1's last face-down card
    assert not s.is_terminal()
    s.apply(WIZ_OTHER(1, 11))
    assert s.is_terminal()
    assert field(s, "ender") == "0"
    assert all(s.face_up(0)) and all(s.face_up(1))
    check_cards(s)


def test_final_round_option_gives_every_other_player_one_more_turn():
    game = HiLoGame(2, final_round=True)
    s = _completing_position(game)
    s.apply(DRAW)
    s.apply(SWAP(2))
    s.apply(WIZ_OWN(1))
    s.apply(WIZ_OTHER(1, 11))
    assert not s.is_terminal()
    assert s.current_player == 1 and field(s, "final") == "1"
    # Seat 1's layout is complete: it can only swap (no face-down card to reveal).
    s.apply(DRAW)
    assert s.legal_actions() == tuple(SWAP(i) for i in range(12))
    s.apply(SWAP(0))
    assert s.is_terminal()


def test_final_round_with_three_players():
    game = HiLoGame(3, final_round=True)
    p0 = "Re-LR,Re-L,Re-L,Re-L,Re-L,Re-T|Re-R,Re-R,Re-R,Re-R,Re-T,?Re-T"
    p1 = "?Re-B,?Re-B,?Re-B,?Dr,?Dr,?Dr|?Dr,?Dr,?Wo,?Wo,?Wo,?Wo"
    p2 = "?Un,?Un,?Un,?Dk-L,?Dk-R,?Ba|?Ba,?Ba,?Ki-LR,?Ki-LR,?Ki-LR,?Uk-T"
    s = game.state_from_text(
        position(game, p0, p1, p2, draw="*", discard="Un", phase="turn", to_move="0")
    )
    s.apply(DRAW)
    s.apply(DISCARD_REVEAL(11))  # seat 0 completes its layout
    assert s.current_player == 1 and not s.is_terminal() and field(s, "final") == "2"
    s.apply(DRAW)
    s.apply(SWAP(0))
    assert s.current_player == 2 and field(s, "final") == "1"
    s.apply(TAKE)
    s.apply(SWAP(0))
    assert s.is_terminal() and field(s, "ender") == "0"


def test_empty_draw_pile_is_rebuilt_from_the_discards_but_the_top_one():
    s = G2.state_from_text(
        position(G2, BASE_P0, BASE_P1, draw="Un", discard="*", phase="turn", to_move="0")
    )
    discards_before = field(s, "discard").split(",")
    s.apply(DRAW)
    assert len(s.draw_pile()) == 0
    s.apply(DISCARD_REVEAL(1))  # discards the Un and turns up slot 1
    assert field(s, "discard") == "Un"  # the top card stays
    rebuilt = field(s, "draw").split(",")
    assert all(c.startswith("!") for c in rebuilt)  # every player saw these cards
    assert sorted(c[1:] for c in rebuilt) == sorted(discards_before)
    assert s.current_player == 1 and s.legal_actions() == (TAKE, DRAW)
    check_cards(s)
    # The pile is known by face to every player, in unknown order.
    assert sorted(s.view(1).known_in_draw) == sorted(discards_before)


# --- scoring -----------------------------------------------------------------------------------
FILL = "Dr"  # a dragon without a dragon keeper scores nothing and is no person


def lay(top: list[str], bottom: list[str]) -> list[str]:
    return top + [FILL] * (6 - len(top)) + bottom + [FILL] * (6 - len(bottom))


def score(top: list[str], bottom: list[str] = ()) -> dict[str, int]:
    return score_faces(G2, lay(list(top), list(bottom)))


def test_keeper_examples_of_the_manual():
    # "Wolfshueterin + 1 Wolf = 2 Sterntaler; Wolfshueterin + 2 Woelfe = 4"
    assert score(["Wk-L", "Wo"])["keepers"] == 2
    assert score(["Wk-L", "Wo", "Wo"])["keepers"] == 4
    # A third wolf with only one keeper adds nothing; a second keeper tends two more.
    assert score(["Wk-L", "Wo", "Wo", "Wo"])["keepers"] == 4
    assert score(["Wk-L", "Wo", "Wo", "Wo", "Un", "Wk-R"])["keepers"] == 6
    assert score(["Wk-L", "Wo", "Wo", "Wo", "Un", "Wk-R"], ["Wo"])["keepers"] == 8
    # Keepers without their animals, or animals of another kind, score nothing.
    assert score(["Wk-L", "Un", "Un"])["total"] == 0
    assert score(["Wo", "Wo"])["total"] == 0
    # Animals anywhere in the layout count.
    assert score(["Dk-L"], ["Un", "Un", "Un", "Un", "Un", "Wo"]) == {
        "half_coins": 0, "whole_coins": 0, "king": 0, "bard": 0, "keepers": 4, "total": 4,
    }  # fmt: skip
    assert score(["Uk-T", "Un", "Un", "Un"], ["Un", "Uk-B"])["keepers"] == 8


def test_half_coins():
    assert score(["Re-R", "Re-L"])["half_coins"] == 1
    assert score(["Re-LR", "Re-LR", "Re-LR"])["half_coins"] == 2  # outer halves unpaired
    assert score(["Re-L", "Re-R"])["half_coins"] == 0  # halves on the wrong sides
    assert score(["Re-B"], ["Re-T"])["half_coins"] == 1  # vertical pair in one column
    assert score(["Re-T"], ["Re-B"])["half_coins"] == 0
    assert score(["Re-TB"], ["Re-TB"])["half_coins"] == 1
    assert score([FILL, "Re-B"], [FILL, "Re-RT", "Re-LB"])["half_coins"] == 2
    # Kings and keepers carry halves too.
    assert score(["Ki-LR", "Re-L"])["half_coins"] == 1
    assert score(["Dk-R", "Wk-L"])["half_coins"] == 1
    assert score(["Uk-B"], ["Uk-T"])["half_coins"] == 1


def test_whole_coins_and_king():
    assert score(["Re$", "Ph$"]) == {
        "half_coins": 0, "whole_coins": 2, "king": 0, "bard": 0, "keepers": 0, "total": 2,
    }  # fmt: skip
    assert score(["Ki-LR"])["total"] == 1  # the pedestal
    assert score(["Ki-LR", "Ki-LR"]) == {
        "half_coins": 1, "whole_coins": 0, "king": 2, "bard": 0, "keepers": 0, "total": 3,
    }  # fmt: skip


def test_bard_counts_persons_left_right_and_above_not_below():
    # bottom row: the bard at column 2 has a person left (Re$), right (bard) and above (Re$)
    assert score([FILL, FILL, "Re$"], [FILL, "Re$", "Ba", "Ba"])["bard"] == 3 + 1
    # a bard in the top row does not look down
    assert score(["Ba"], ["Ki-LR"])["bard"] == 0
    assert score(["Ba", "Ki-LR"])["bard"] == 1
    # animals, the phoenix and the wizard are no persons
    assert score(["Ba", "Ph$"], ["Un"])["bard"] == 0
    assert score([FILL], ["Wo", "Ba", "Dk-L"])["bard"] == 1  # a keeper is a person


def test_wizard_voids_its_column_partner():
    assert score(["Ki-LR"], ["Wz"])["total"] == 0
    assert score(["Wz"], ["Ki-LR"])["total"] == 0
    assert score(["Wz", "Ki-LR"])["total"] == 1  # a neighbour in the row is not voided
    # A voided keeper tends nothing, a voided animal is not tended, voided halves do not pair.
    assert score(["Wk-L", "Wo"], ["Wz"])["keepers"] == 0
    assert score(["Wk-L", "Wo", "Wo"], [FILL, "Wz"])["keepers"] == 2
    assert score(["Re-R", "Re-L"], [FILL, "Wz"])["half_coins"] == 0
    # The bard does not count a voided neighbour, and a voided bard scores nothing.
    assert score(["Ba", "Re$"], [FILL, "Wz"])["bard"] == 0
    assert score(["Ba", "Re$"], ["Wz"]) == {
        "half_coins": 0, "whole_coins": 1, "king": 0, "bard": 0, "keepers": 0, "total": 1,
    }  # fmt: skip
    # Two wizards in one column void each other; a wizard has no value of its own.
    assert score(["Wz"], ["Wz"])["total"] == 0


# --- winners and rewards -----------------------------------------------------------------------
def _end_position(game: HiLoGame, *layouts: str):
    s = game.state_from_text(
        position(game, *layouts, draw="*", discard="Re-T", phase="end", to_move="0")
    )
    assert s.is_terminal() and s.legal_actions() == ()
    return s


def test_tie_of_all_players_is_zero():
    same = "Dr,Wo,Un,Re-LR,Re-L,Re-R|Re-TB,Re-T,Re-B,Ph$,Ki-LR,Ba"
    s = _end_position(G2, same, same)
    # Re-LR|Re-L 1 half coin, Ph$ 1, king 1, bard 2 (king left, Re-R above)
    assert s.coins() == (5, 5)
    assert s.winners() == (0, 1) and s.returns() == (0.0, 0.0)


def test_shared_win_of_two_of_three():
    good = "Re-LR,Re-LR,Re-LR,Re-L,Re-R,Wo|Re$,Re$,Ph$,Ph$,Ba,Wo"
    bad = "Dr,Dr,Dr,Dr,Dr,Un|Un,Un,Un,Un,Wz,Wz"
    s = _end_position(G3, good, bad, good)
    coins = s.coins()
    assert coins[1] == 0 and coins[0] == coins[2] > 0
    assert s.winners() == (0, 2)
    assert s.returns() == (0.5, -1.0, 0.5)
    assert sum(s.returns()) == 0


def test_one_winner_of_three():
    a = "Re-LR,Re-LR,Re-LR,Re-L,Re-R,Wo|Re$,Re$,Ph$,Ph$,Ba,Ba"
    b = "Dr,Dr,Dr,Dr,Dr,Un|Un,Un,Un,Un,Wz,Wz"
    c = "Re-LR,Re-LR,Re-LR,Re-L,Re-R,Wo|Re$,Re$,Ph$,Ph$,Ba,Wo"
    s = _end_position(G3, a, b, c)
    # a: 3 half coins, 4 whole coins, bards 2 + 1; c: the same with one bard (1): 10 > 8 > 0
    assert s.coins() == (10, 0, 8)
    assert s.returns() == (1.0, -0.5, -0.5)


def test_returns_are_zero_before_the_end():
    s = G3.new_initial_state(0)
    assert s.returns() == (0.0, 0.0, 0.0) and s.winners() == ()


def test_action_names():
    assert G2.action_name(0) == "take the discard"
    assert G2.action_name(SWAP(7)) == "swap into slot 7 (bottom row, column 2)"
    assert "player 2 to the left" in G3.action_name(WIZ_OTHER(2, 0))
    assert G2.num_actions == 62 and G3.num_actions == 74 and HiLoGame(4).num_actions == 86


def test_kernel_constants_match_the_documented_action_layout():
    assert (R.A_SWAP, R.A_DISCARD_REVEAL, R.A_REVEAL, R.A_WIZ_OWN, R.A_WIZ_OTHER) == (
        2, 14, 26, 38, 50,
    )  # fmt: skip


@pytest.mark.parametrize("n", [2, 3, 4])
def test_text_rendering_of_every_layout(n):
    from spieltisch.envs.hilo.notation import render_text

    s = HiLoGame(n).new_initial_state(3)
    text = str(s)  # every card, face-down ones in parentheses
    for p in range(n):
        assert f"seat {p}" in text
    rows = [line for line in text.splitlines() if line.startswith("  ")]
    assert len(rows) == 2 * n and sum(row.count("(") for row in rows) == 12 * n
    public = render_text(s, "public")
    assert public.count("??") == 12 * n
    s.apply(REVEAL(4))
    assert render_text(s, 1).count("??") == 12 * n - 1
    with pytest.raises(ValueError, match="viewer"):
        render_text(s, "everyone")


def test_a_seats_view_says_where_the_known_cards_may_be() -> None:
    """A card known to lie in the draw pile (a wizard put back) may be the one the mover just
    drew, hidden from the others: their view says "known in it or the drawn card" (the text
    said "known inside" the pile and listed more cards than the pile held)."""
    from spieltisch.envs.hilo.notation import render_text

    seen = set()
    for seed in range(60):
        rng = np.random.default_rng(seed)
        s = G2.new_initial_state(rng)
        while not s.is_terminal():
            viewer = 1 - s.current_player
            view = s.view(viewer)
            if view.known_in_draw:
                line = render_text(s, viewer=viewer).splitlines()[1]
                codes = ",".join(view.known_in_draw)
                if view.held_hidden:
                    assert f"known in it or the drawn card: {codes};" in line
                    seen.add("hidden")
                else:
                    assert f"known inside: {codes};" in line
                    assert len(view.known_in_draw) <= view.draw_size
                    seen.add("pile")
            s.apply(int(rng.choice(s.legal_actions())))
        if len(seen) == 2:
            break
    assert seen == {"hidden", "pile"}


def test_the_board_marks_the_cards_the_scoring_voids(monkeypatch):
    """``~`` marks what a wizard voids, from the scoring's own rule: two wizards in one column
    void each other (the diagram had marked neither), one wizard the other card alone."""
    game = HiLoGame()
    text = (
        "p0=Wz,Re-L,Dr,Dr,Un,Un|Wz,Ki-LR,Re-L,Dk-L,Un,Ph$ "
        "p1=Re-LR,Wz,Ki-LR,Re-L,Ph$,Re-R|Re$,Ph$,Ki-LR,Re-RT,Re-LR,Un "
        "draw=* discard=Dk-R hand=- to_move=1 phase=end turns=10 moves=20"
    )
    state = game.state_from_text(text)
    rows = str(state).splitlines()
    seat0, seat1 = (rows.index(r) for r in rows if r.startswith(("seat 0", "seat 1")))
    assert rows[seat0 + 1].split()[0] == "~Wz" and rows[seat0 + 2].split()[0] == "~Wz"
    assert rows[seat1 + 1].split()[1] == "Wz" and rows[seat1 + 2].split()[1] == "~Ph$"
    assert sum(row.count("~") for row in rows) == 3
    # the image draws the same cards voided (it had its own copy of the old rule)
    from spieltisch.envs.hilo import draw

    drawn = []
    original = draw.draw_card
    monkeypatch.setattr(
        draw,
        "draw_card",
        lambda *a, voided=False, **k: drawn.append(voided) or original(*a, voided=voided, **k),
    )
    draw.draw_state(state, None, ["a", "b"])
    assert sum(drawn) == 3  # (it drew 1: seat 1's phoenix)
