"""HiLo hidden information: observations hold exactly what a player may know.

Two states that differ only in hidden cards (face-down cards of any player, the order and unknown
content of the draw pile, the card another player drew, the game's future chance) must give every
player identical observations, views and masks; checked on many random states, with a
perturbation written here (independent of the engine) and with the engine's own sampler.
"""

from __future__ import annotations

import numpy as np
import pytest
from spieltisch.envs.hilo import HiLoGame
from spieltisch.envs.hilo import rules as R


def random_states(game: HiLoGame, games: int, seed: int):
    """Every state of ``games`` random games."""
    rng = np.random.default_rng(seed)
    for _ in range(games):
        s = game.new_initial_state(rng)
        while True:
            yield s.clone()
            if s.is_terminal():
                break
            legal = s.legal_actions()
            s.apply(legal[int(rng.integers(len(legal)))])


def perturb_hidden(state, rng: np.random.Generator, with_hand: bool):
    """Another state that differs only in what nobody (or nobody but the drawer) can see."""
    c = state.clone()
    s = c.s
    n = c.game.num_players
    known = c.known_in_draw_pile()
    positions = [R.OFF_LAYOUT + k for k in range(12 * n) if s[R.OFF_FACEUP + k] == 0]
    positions += [R.OFF_DRAW + k for k in range(s[R.H_DRAW_N]) if not known[s[R.OFF_DRAW + k]]]
    if with_hand and c.held_from == "draw" and not known[c.held_card]:
        positions.append(R.H_HAND)
    values = s[positions]
    rng.shuffle(values)
    s[positions] = values
    pile = s[R.OFF_DRAW : R.OFF_DRAW + s[R.H_DRAW_N]]  # a view: shuffled in place
    rng.shuffle(pile)
    c.rng[0] = rng.integers(2**63)
    return c


def check_same_knowledge(a, b, players) -> None:
    for p in players:
        assert np.array_equal(a.observation(p), b.observation(p)), p
    assert a.legal_actions() == b.legal_actions()
    assert np.array_equal(a.legal_mask(), b.legal_mask())


@pytest.mark.parametrize("n", [2, 3, 4])
def test_hidden_cards_do_not_change_any_observation(n):
    game = HiLoGame(n)
    rng = np.random.default_rng(n)
    changed = 0
    for k, s in enumerate(random_states(game, 60, seed=10 + n)):
        # face-down cards and the draw pile: hidden from everybody
        t = perturb_hidden(s, rng, with_hand=False)
        assert sorted(t.all_cards().tolist()) == list(range(game.num_cards))
        changed += not np.array_equal(t.s, s.s)
        check_same_knowledge(s, t, range(n))
        # the drawn card too: hidden from everybody but the drawer
        if s.held_from == "draw":
            u = perturb_hidden(s, rng, with_hand=True)
            others = [p for p in range(n) if p != s.current_player]
            check_same_knowledge(s, u, others)
            if k % 3 == 0:
                for p in others:
                    assert s.information_state_string(p) == u.information_state_string(p)
        if k % 5 == 0:
            for p in range(n):
                obs = s.observation(p)
                assert obs.min() >= 0 and obs.max() <= game.num_cards
                assert s.view(p) == t.view(p)
                assert s.information_state_string(p) == t.information_state_string(p)
    assert changed > 1000  # the perturbation really changed hidden cards


@pytest.mark.parametrize("n", [2, 3, 4])
def test_sampled_states_are_consistent_with_the_players_knowledge(n):
    game = HiLoGame(n)
    rng = np.random.default_rng(50 + n)
    differs = 0
    for k, s in enumerate(random_states(game, 25, seed=20 + n)):
        viewer = k % n
        t = s.sample_consistent(viewer, rng)
        assert sorted(t.all_cards().tolist()) == list(range(game.num_cards))
        assert np.array_equal(t.observation(viewer), s.observation(viewer))
        assert t.legal_actions() == s.legal_actions()
        if k % 4 == 0:
            assert t.information_state_string(viewer) == s.information_state_string(viewer)
        if s.held_from != "draw" or viewer == s.current_player:
            check_same_knowledge(s, t, range(n))  # nothing private was resampled
        differs += t.to_text() != s.to_text()
        if k % 50 == 0 and not t.is_terminal():  # a sampled state plays on like any other
            while not t.is_terminal():
                legal = t.legal_actions()
                t.apply(legal[int(rng.integers(len(legal)))])
    assert differs > 100


@pytest.mark.parametrize("n", [2, 4])
def test_sampling_cannot_tell_where_the_hidden_cards_really_are(n):
    """With the same generator, two states a player cannot tell apart give that player the very
    same sample: what the sampler returns (and so every search over samples) depends only on the
    player's knowledge, not on the real hidden cards."""
    game = HiLoGame(n)
    rng = np.random.default_rng(70 + n)
    changed = 0
    for k, s in enumerate(random_states(game, 12, seed=30 + n)):
        viewer = k % n
        other = perturb_hidden(s, rng, with_hand=s.current_player != viewer)
        changed += other.to_text() != s.to_text()
        a = s.sample_consistent(viewer, k)
        b = other.sample_consistent(viewer, k)
        assert a.to_text() == b.to_text()
    assert changed > 100


def test_drawn_card_is_seen_by_the_drawer_only():
    game = HiLoGame(3)
    s = game.new_initial_state(4)
    for _ in range(3):
        s.apply(s.legal_actions()[0])
    s.apply(1)  # seat 0 draws
    assert s.phase == "drawn"
    card = game.deck.card_faces[s.held_card].code
    assert s.view(0).held == card and not s.view(0).held_hidden
    assert s.view(1).held is None and s.view(1).held_hidden
    assert s.view(None).held is None
    held = 204 * 3 + 16
    assert s.observation(0)[held : held + 3].tolist() == [1.0, 1.0, 1.0]
    assert s.observation(1)[held : held + 3].tolist() == [1.0, 1.0, 0.0]
    assert not s.observation(1)[held + 3 : held + 19].any()
    s.apply(2)  # placed face up: now everybody knows it
    assert s.view(1).layouts[0][0] == card


def test_a_known_card_in_the_draw_pile_counts_by_face():
    # The pile holds a wizard everybody knows about and, unknown to all, another wizard on top.
    # Drawing it must not tell anybody which of the two equal-looking wizards it was.
    game = HiLoGame(2)
    p0 = "?Re-L,?Re-L,?Re-L,?Re-L,?Re-R,?Re-R|?Re-R,?Re-R,?Re-T,?Re-T,?Re-T,?Re-B"
    p1 = "?Re-B,?Re-B,?Dr,?Dr,?Dr,?Dr|?Dr,?Wo,?Wo,?Wo,?Wo,?Wo"
    base = f"p0={p0} p1={p1} discard=* phase=turn to_move=0 draw="
    a = game.state_from_text(base + "Un,!Wz,Un,Wz")  # the known wizard is not on top
    b = game.state_from_text(base + "Un,Wz,Un,!Wz")  # the known wizard is on top
    for p in (0, 1):
        assert np.array_equal(a.observation(p), b.observation(p))
    a.apply(1)
    b.apply(1)
    for p in (0, 1):
        assert np.array_equal(a.observation(p), b.observation(p))
        assert a.view(p) == b.view(p)
    assert a.view(0).known_in_draw == ()  # the drawer saw a wizard come: counted as the known one
    assert a.view(1).known_in_draw == ("Wz",)  # the others do not know what was drawn yet
    a.apply(2 + 0)
    assert a.view(1).known_in_draw == ()


def test_observation_layout_matches_the_documentation():
    game = HiLoGame(4)
    assert game.observation_size == 204 * 4 + 60 + 3 * 22 + 4
    s = game.new_initial_state(0)
    obs = s.observation(2)
    assert obs.dtype == np.float32 and obs.shape == (game.observation_size,)
    assert obs[[17 * i for i in range(48)]].sum() == 48  # all face down
    L, F = 204 * 4, 22
    assert obs[L + 35 + 3 * F] == 69 - 48 - 1  # draw pile size
    assert obs[L + 36 + 3 * F] == 1  # discard pile size
    assert obs[L + 37 + 3 * F + R.PH_SETUP] == 1
    assert obs[L + 45 + 3 * F + 2] == 1  # seat 0 to move is 2 places to seat 2's left
    assert obs[L + 35 + 2 * F : L + 35 + 3 * F].sum() == 68  # unseen: all but the discard
    assert obs.max() <= game.num_cards
