"""HiLo hidden information beyond the engine's own observation (``test_hilo_information``): what
the env, the batch, the information sets and the agents give a seat never depends on cards that
seat cannot see.

Every check takes random positions, makes a twin that differs only in what one seat cannot see
(``perturb_hidden``, written independently of the engine: face-down cards, the unknown rest and
order of the draw pile, the game's future chance, and another player's drawn card) and asserts
that the seat gets the same thing from both: the env's observation dict, ``last()``, ``infos``,
rewards and ``render()`` (text and picture) in that seat's view or the public one; the batch's
observations, masks and status; the :class:`InformationSet` built from either (its stand-in,
view and samples); and the moves of the sampling agents (``heuristic``, the value-blended
search) with the same seeds.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from spieltisch.agents.base import InformationSet
from spieltisch.agents.hilo.heuristic import HiLoHeuristicAgent
from spieltisch.agents.hilo.search import HiLoSearchAgent
from spieltisch.agents.neural.gumbel_search import GumbelSearchAgent
from spieltisch.agents.neural.policy import PolicyArch, PolicyNet
from spieltisch.envs import hilo_v0
from spieltisch.envs.hilo import HiLoGame
from spieltisch.envs.hilo.batch import HiLoBatch
from test_hilo_information import perturb_hidden, random_states


def hidden_from(state, seat: int, rng: np.random.Generator):
    """A twin of ``state`` that differs only in what ``seat`` cannot see (the drawn card too,
    unless ``seat`` drew it)."""
    return perturb_hidden(state, rng, with_hand=seat != state.current_player)


def sampled_positions(n: int, games: int, seed: int, every: int = 1) -> list:
    """Every ``every``-th position of ``games`` random games, finished ones included."""
    return list(random_states(HiLoGame(n), games, seed))[::every]


def test_the_twins_really_differ_in_hidden_cards():
    """(The other tests rely on it.) The twins change face-down cards and, for the others, a
    drawn card: every such change is invisible to the seat and yet the states differ."""
    rng = np.random.default_rng(0)
    layouts = hands = drawn = 0
    for s in sampled_positions(3, 6, seed=1):
        for seat in range(3):
            t = hidden_from(s, seat, rng)
            layouts += any(
                not np.array_equal(s.layout(p)[~s.face_up(p)], t.layout(p)[~t.face_up(p)])
                for p in range(3)
            )
            if s.held_from == "draw" and seat != s.current_player:
                drawn += 1
                hands += t.held_card != s.held_card
    assert layouts > 300 and drawn > 20 and hands > drawn // 2


@pytest.mark.parametrize("n", [2, 3, 4])
def test_the_env_gives_every_agent_the_same_under_hidden_changes(n):
    """The env's ``observe()`` (observation and mask), ``last()`` and text renderings of every
    agent (seated at random), with the engine state swapped for a twin whose hidden cards differ,
    are unchanged: the public rendering for every twin, an agent's own view for twins of what
    that agent cannot see."""
    views = ["public", *(f"player_{i}" for i in range(n))]
    envs = {v: hilo_v0.env(num_players=n, random_start=True, render_mode="ansi", render_view=v)
            for v in views}  # fmt: skip
    for e in envs.values():
        e.reset(seed=n)
    raw = envs["public"].unwrapped
    seat_of = {a: raw.seat_of(a) for a in raw.possible_agents}
    assert sorted(seat_of.values()) == list(range(n))
    rng = np.random.default_rng(10 + n)
    checked = 0
    for s in sampled_positions(n, 8, seed=20 + n, every=2):
        if s.is_terminal():
            continue
        for agent, seat in seat_of.items():
            t = hidden_from(s, seat, rng)
            seen = []
            for state in (s, t):
                for e in envs.values():
                    e.unwrapped.state = state
                    e.unwrapped.agent_selection = agent  # last() observes it
                env = envs[agent]
                obs = env.observe(agent)
                seen.append(
                    (
                        obs["observation"].tobytes(),
                        obs["action_mask"].tobytes(),
                        env.render(),
                        envs["public"].render(),
                        env.last()[0]["observation"].tobytes(),
                    )
                )
            assert seen[0] == seen[1], (agent, s.to_text())
            mask = np.frombuffer(seen[0][1], dtype=np.int8)
            assert mask.any() == (seat == s.current_player)
            checked += 1
    assert checked > 100


def test_the_env_s_infos_and_rewards_hold_nothing_hidden():
    """While a game runs, every agent's ``infos`` is its seat alone and every reward 0; the
    final infos (coins, breakdowns, winners) come once every card lies face up (public)."""
    rng = np.random.default_rng(3)
    for seed in range(6):
        n = 2 + seed % 3
        env = hilo_v0.env(num_players=n, random_start=True)
        env.reset(seed=seed)
        raw = env.unwrapped
        while not env.terminations[env.agent_selection]:
            for agent in env.agents:
                assert env.infos[agent] == {"seat": raw.seat_of(agent)}
                assert env.rewards[agent] == 0.0
            legal = np.flatnonzero(env.observe(env.agent_selection)["action_mask"])
            env.step(int(rng.choice(legal)))
        assert all(raw.state.face_up(p).all() for p in range(n))
        assert {"coins", "all_coins", "winners"} <= set(env.infos[env.agents[0]])


@pytest.mark.parametrize("n", [2, 4])
def test_the_batch_shows_each_viewer_the_same_under_hidden_changes(n):
    """A batch of positions and a batch of their twins (hidden from one viewer per row): that
    viewer's observations, the masks, players to move, phases, finished flags and turns agree;
    so does the default (player to move) observation where the twin hides only what the mover
    cannot see."""
    game = HiLoGame(n)
    states = sampled_positions(n, 6, seed=40 + n, every=3)
    rng = np.random.default_rng(n)
    viewers = rng.integers(n, size=len(states))
    real, twin = HiLoBatch(game, len(states)), HiLoBatch(game, len(states))
    movers_twin = HiLoBatch(game, len(states))
    for g, s in enumerate(states):
        real.set_state(g, s)
        twin.set_state(g, hidden_from(s, int(viewers[g]), rng))
        movers_twin.set_state(g, hidden_from(s, s.current_player, rng))
    assert not np.array_equal(real.states, twin.states)
    np.testing.assert_array_equal(real.observations(viewers), twin.observations(viewers))
    for name in ("legal_mask", "current_player", "phase", "terminal", "turns"):
        np.testing.assert_array_equal(getattr(real, name), getattr(twin, name))
    for x, y in zip(real.observe(), movers_twin.observe(), strict=True):
        np.testing.assert_array_equal(x, y)
    # and each row is what the single state shows that viewer
    for g in range(0, len(states), 7):
        np.testing.assert_array_equal(
            real.observations(viewers)[g], states[g].observation(int(viewers[g]))
        )


@pytest.mark.parametrize("n", [2, 3])
def test_information_sets_of_indistinguishable_states_are_the_same(n):
    """``InformationSet(real, seat, rng)`` keeps a stand-in that depends only on what the seat
    knows: built from a state and from its twin with equal generators, the stand-ins are the
    same state, and so are the view, the legal actions and every sample drawn from them. The
    stand-in is not the real state: its hidden cards are drawn anew."""
    rng = np.random.default_rng(60 + n)
    differs = checked = 0
    for k, s in enumerate(sampled_positions(n, 10, seed=50 + n, every=2)):
        seat = k % n
        t = hidden_from(s, seat, rng)
        a = InformationSet(s, seat, np.random.default_rng(k))
        b = InformationSet(t, seat, np.random.default_rng(k))
        assert a._stand_in.to_text() == b._stand_in.to_text()
        assert a.view() == b.view() == s.view(seat)
        assert a.current_player == b.current_player == s.current_player
        assert a.legal_actions() == b.legal_actions() == s.legal_actions()
        assert np.array_equal(a._stand_in.observation(seat), s.observation(seat))
        for j in range(2):
            assert a.sample(100 + j).to_text() == b.sample(100 + j).to_text()
        face_down = [~s.face_up(p) for p in range(n)]
        if any(f.any() for f in face_down):
            differs += any(
                not np.array_equal(s.layout(p)[face_down[p]], a._stand_in.layout(p)[face_down[p]])
                for p in range(n)
            )
            checked += 1
    assert checked > 50 and differs > 0.9 * checked


def untrained_net(game: HiLoGame, seed: int = 0) -> PolicyNet:
    torch.manual_seed(seed)
    return PolicyNet(PolicyArch(game.observation_size, game.num_actions, (16,))).eval()


def mover_positions(n: int, count: int, seed: int) -> list:
    """Positions with a choice to make, spread over random games."""
    out = [s for s in sampled_positions(n, 8, seed=seed, every=3) if not s.is_terminal()]
    out = [s for s in out if len(s.legal_actions()) > 1]
    return out[:: max(1, len(out) // count)][:count]


def revealing_information_set(real, seat: int) -> InformationSet:
    """An information set whose stand-in is the real state itself: an agent that read anything
    of it but what the seat knows (through ``sample``, ``view``, ...) would see the real cards."""
    info = InformationSet.__new__(InformationSet)
    info.seat = seat
    info._stand_in = real.clone()
    return info


def agent_moves(agent, state, twin, seat: int, score) -> tuple:
    """The agent's move and scores from ``state`` and from ``twin``, same seeds throughout."""
    out = []
    for real in (state, twin):
        info = revealing_information_set(real, seat)
        obs = {"observation": real.observation(seat), "action_mask": real.legal_mask()}
        agent.reset(seed=11)
        scores = score(np.flatnonzero(obs["action_mask"]), info)
        agent.reset(seed=11)
        out.append((agent.act(obs, info), scores))
    return out


@pytest.mark.parametrize("n", [2, 3])
def test_the_sampling_agents_move_alike_from_indistinguishable_states(n):
    """The heuristic, the value-blended search and the Gumbel search over determinizations,
    given information sets of two real states
    that differ only in hidden cards (stand-ins that *are* the real states, the agents seeded
    alike), make the same move with the same scores: they never read the real cards, only
    consistent samples."""
    game = HiLoGame(n)
    heuristic = HiLoHeuristicAgent(seed=0, samples=2)
    search = HiLoSearchAgent(untrained_net(game), {"num_players": n}, samples=2, seed=0)
    # pretrained:hilo:sims=4,dets=2 with an untrained net
    gumbel = GumbelSearchAgent(untrained_net(game), "hilo", {"num_players": n}, 4, 0, 2)
    rng = np.random.default_rng(80 + n)
    positions = mover_positions(n, 8, seed=70 + n)
    assert len(positions) >= 6
    for state in positions:
        seat = state.current_player
        twin = hidden_from(state, seat, rng)
        assert not np.array_equal(twin.s, state.s)
        for agent, score in (
            (heuristic, heuristic.action_totals),
            (search, search.action_scores),
            (gumbel, lambda legal, info: gumbel.run_search(info).visits),
        ):
            (m1, s1), (m2, s2) = agent_moves(agent, state, twin, seat, score)
            assert m1 == m2 and m1 in state.legal_actions()
            np.testing.assert_array_equal(s1, s2)


def test_pictures_show_a_seat_nothing_it_cannot_see():
    """``render_mode="rgb_array"``: the picture in a seat's view (and the public one) of a
    position and of its twin are the same pixels; the spectator's picture ("all") differs."""
    n = 3
    views = ("public", "player_1")
    envs = {v: hilo_v0.env(num_players=n, render_mode="rgb_array", render_view=v) for v in views}
    spectator = hilo_v0.env(num_players=n, render_mode="rgb_array", render_view="all")
    for e in (*envs.values(), spectator):
        e.reset(seed=0)
    rng = np.random.default_rng(7)
    states = [s for s in sampled_positions(n, 3, seed=9) if s.held_from == "draw"]
    states = [s for s in states if s.current_player != 1][:3]
    assert len(states) == 3
    spectator_differs = 0
    for s in states:
        t = perturb_hidden(s, rng, with_hand=True)  # hidden from seat 1 and the public
        pictures = []
        for state in (s, t):
            for e in (*envs.values(), spectator):
                e.unwrapped.state = state
            pictures.append([e.render() for e in (*envs.values(), spectator)])
        for a, b in zip(pictures[0][:-1], pictures[1][:-1], strict=True):
            np.testing.assert_array_equal(a, b)
        spectator_differs += not np.array_equal(pictures[0][-1], pictures[1][-1])
    assert spectator_differs == len(states)
