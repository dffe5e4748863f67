// The page of `spieltisch serve`: a new-game form, the board of the game in progress, the moves,
// the controls for watching agents and the analysis panel. Plain ES modules, no build step.
//
// How the page drives a game: the server never moves an agent by itself. Whenever it is an
// agent's turn and the page is "playing", the page waits the chosen delay and POSTs
// /api/sessions/ID/agent (one agent turn). Playing is on from the start when a person sits at the
// table, and off when only agents play (press Play or Step to watch them). All requests of one
// game go through one queue, so they never overlap; a 409 "busy" answer is retried.
//
// DOM hooks for tests: body[data-ready|data-session|data-game|data-status|data-busy],
// #status[data-status], #result, #message, #moves > li[data-index][data-seat], #seats >
// .seat[data-seat], #board (the game's <svg>, see each board module), #actions >
// button[data-action], #play #pause #step #speed #resign #download #sowing, #analyse
// #analyse-auto #analysis-agent #analysis (table#analysis-table, tr[data-action]).

import * as backgammon from "./backgammon.js";
import * as hilo from "./hilo.js";
import * as hus from "./hus.js";
import * as kalaha from "./kalaha.js";

const BOARDS = { kalaha, hus, backgammon, hilo };
const GAME_NAMES = { kalaha: "Kalaha", hus: "Hus", backgammon: "Backgammon", hilo: "HiLo" };
const POSITION_HINTS = {
  kalaha: "Kalaha: seat 0's pits/store, seat 1's pits/store, seat to move, e.g. 4,4,4,4/0 4,4,4,4/0 0",
  hus: "Hus: each seat's row 1/row 2 and the seat to move (see the position of a running game).",
  backgammon: "GNU Backgammon position ID, the seat on roll, then roll or the dice: 4HPwATDgc/ABMA 0 roll, 4HPwATDgc/ABMA 0 31",
  hilo: "HiLo: the engine's notation (it lists every hidden card).",
};

const $ = (id) => document.getElementById(id);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const state = {
  games: null, // GET /api/games
  view: null, // the game as the server last showed it
  gen: 0, // bumped by every new game: answers for an older game are dropped
  playing: false, // agents move by themselves
  timer: null, // the pending agent turn
  chain: Promise.resolve(), // the request queue of the game
  inFlight: 0,
  agentBusy: false,
  turnBusy: false,
  resigning: false,
  pendingFocus: null, // where keyboard focus goes back once the board can take it again
  animating: false,
  sowing: null, // Hus: the sowing step on show
  animatedMoves: 0, // Hus: moves already shown step by step (or skipped)
  analysisKey: null,
  analysis: null,
  analysisHint: [], // what the analysis panel says before the first analysis
};

class ApiError extends Error {
  constructor(message, status) {
    super(message);
    this.status = status;
  }
}

// --- talking to the server ----------------------------------------------------------------------

async function request(method, path, body) {
  for (let attempt = 0; ; attempt++) {
    let response;
    try {
      response = await fetch(path, {
        method,
        headers: body === undefined ? {} : { "Content-Type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (err) {
      throw new ApiError(`the server cannot be reached (${err.message})`, 0);
    }
    let data = null;
    try {
      data = await response.json();
    } catch {
      data = null;
    }
    const error = data && typeof data.error === "string" ? data.error : null;
    if (response.status === 409 && error && error.startsWith("busy") && attempt < 120) {
      await sleep(250); // another request of this game is still running: wait and retry
      continue;
    }
    if (!response.ok) throw new ApiError(error || `${response.status} ${response.statusText}`, response.status);
    return data;
  }
}

/** A request about the game on the page, queued behind the game's earlier requests. */
function gameRequest(method, suffix, body) {
  const id = state.view.id;
  const run = () => request(method, `/api/sessions/${id}${suffix ? `/${suffix}` : ""}`, body);
  const result = state.chain.then(run, run).catch((err) => {
    // the server no longer has the game (restarted, or expired): it is over for the page too,
    // and its controls go (it went on saying "your move")
    if (err.status === 404 && state.view && state.view.id === id && state.view.status === "playing") {
      state.playing = false;
      clearTimer();
      setView({ ...state.view, status: "gone", human_to_move: false, message: "the server no longer has this game" });
    }
    throw err;
  });
  state.chain = result.catch(() => {});
  state.inFlight += 1;
  updateBusy();
  return result.finally(() => {
    state.inFlight -= 1;
    updateBusy();
  });
}

function updateBusy() {
  const busy = state.inFlight > 0 || state.timer !== null || state.animating || state.agentBusy;
  document.body.dataset.busy = busy ? "1" : "0";
}

// --- messages -----------------------------------------------------------------------------------

function showError(text) {
  const box = $("message");
  box.textContent = text;
  box.className = "message error";
  box.hidden = false;
}

function showInfo(text) {
  const box = $("message");
  box.textContent = text;
  box.className = "message info";
  box.hidden = false;
}

function clearMessage() {
  $("message").hidden = true;
  $("message").textContent = "";
}

// --- the new-game form --------------------------------------------------------------------------

function buildSetup() {
  const select = $("game-select");
  select.replaceChildren();
  for (const game of Object.keys(state.games.games)) {
    const option = new Option(GAME_NAMES[game] || game, game);
    select.append(option);
  }
  select.value = state.games.games.kalaha ? "kalaha" : select.options[0].value;
  select.addEventListener("change", () => {
    buildOptions();
    buildAgents(true);
  });
  buildOptions();
  buildAgents(true);
}

function currentGame() {
  return $("game-select").value;
}

function buildOptions() {
  const game = currentGame();
  const host = $("options");
  host.replaceChildren();
  const options = state.games.games[game].options;
  const names = Object.keys(options);
  if (!names.length) host.textContent = "none";
  for (const name of names) {
    const label = document.createElement("label");
    label.className = "field inline-field";
    label.append(document.createTextNode(name.replace(/_/g, " ")));
    const select = document.createElement("select");
    select.id = `opt-${name}`;
    select.dataset.option = name;
    select.append(new Option("default", ""));
    for (const value of options[name]) select.append(new Option(String(value), JSON.stringify(value)));
    if (name === "num_players") select.addEventListener("change", () => buildAgents(false));
    label.append(select);
    host.append(label);
  }
  $("position-hint").textContent = POSITION_HINTS[game] || "";
}

function seatCount() {
  const game = currentGame();
  if (game !== "hilo") return 2;
  const chosen = $("opt-num_players");
  return chosen && chosen.value ? JSON.parse(chosen.value) : 2;
}

function buildAgents(reset) {
  const game = currentGame();
  const info = state.games.games[game];
  const list = $("agents-list");
  list.replaceChildren(...[...info.agents, ...info.prefixed].map((name) => new Option(name)));
  const host = $("agents");
  const old = [...host.querySelectorAll("input")].map((input) => input.value);
  host.replaceChildren();
  for (let seat = 0; seat < seatCount(); seat++) {
    const label = document.createElement("label");
    label.className = "field inline-field";
    label.append(document.createTextNode(`seat ${seat}`));
    const input = document.createElement("input");
    input.type = "text";
    input.id = `agent-${seat}`;
    input.dataset.seat = seat;
    input.setAttribute("list", "agents-list");
    input.value = !reset && old[seat] !== undefined ? old[seat] : seat === 0 ? "human" : "random";
    input.spellcheck = false;
    label.append(input);
    host.append(label);
  }
}

async function newGame(event) {
  if (event) event.preventDefault();
  const game = currentGame();
  const body = { game, agents: [], options: {} };
  for (const input of $("agents").querySelectorAll("input")) body.agents.push(input.value.trim());
  for (const select of $("options").querySelectorAll("select")) {
    if (select.value !== "") body.options[select.dataset.option] = JSON.parse(select.value);
  }
  const seed = $("seed").value.trim();
  if (seed !== "") {
    if (!/^\d+$/.test(seed)) return showError("The seed is a whole number (or empty for a random one).");
    body.seed = seed; // the digits as typed: Number() rounds seeds above 2**53 (the server draws 63-bit ones)
  }
  const position = $("position").value.trim();
  if (position) body.position = position;
  $("new-game").disabled = true;
  const previous = state.view;
  let view;
  try {
    view = await request("POST", "/api/sessions", body);
  } catch (err) {
    showError(`New game: ${err.message}`);
    return;
  } finally {
    $("new-game").disabled = false;
  }
  startGame(view);
  // the page shows one game: the server forgets the one it leaves (it kept every game for
  // hours, a perfect agent's 400 MB each)
  if (previous && previous.id !== view.id) request("DELETE", `/api/sessions/${previous.id}`).catch(() => {});
}

function startGame(view) {
  state.gen += 1;
  clearTimer();
  state.chain = Promise.resolve();
  state.agentBusy = state.turnBusy = state.animating = false;
  state.pendingFocus = null;
  state.sowing = null;
  state.animatedMoves = view.moves.length;
  state.analysisKey = null;
  state.analysis = null;
  $("analysis").replaceChildren(...state.analysisHint.map((node) => node.cloneNode(true)));
  $("analysis-message").hidden = true;
  // the game in the page's address: a reload (or Back and Forward) comes back to it
  history.replaceState(null, "", `#game=${view.id}`);
  const people = view.seats.some((s) => s.human);
  state.playing = people; // agents against agents start paused: press Play or Step
  clearMessage();
  if (!people) showInfo("Only agents at this table: press Play to watch them, or Step for one turn.");
  setView(view);
}

// --- showing the game ---------------------------------------------------------------------------

function setView(view) {
  state.view = view;
  document.body.dataset.session = view.id;
  document.body.dataset.game = view.game;
  document.body.dataset.status = view.status;
  renderAll();
  const summary = $("analysis-summary");
  $("analysis").classList.toggle("outdated", !!summary && !analysisIsCurrent(summary.dataset.key));
  afterUpdate();
}

/** Where keyboard focus is on the board or its buttons (which every render rebuilds), as a
 * selector for the rebuilt element; null elsewhere. */
function focusKey(element) {
  if (!element || !element.closest) return null;
  const area = element.closest("#board, #actions");
  if (!area) return null;
  const keys = [["data-seat", "data-pit"], ["data-point", "data-seat"], ["data-point"], ["data-action"], ["id"]];
  for (const attrs of keys) {
    if (attrs.every((a) => element.hasAttribute(a))) {
      return `#${area.id} ` + attrs.map((a) => `[${a}="${CSS.escape(element.getAttribute(a))}"]`).join("");
    }
  }
  return `#${area.id}`;
}

/** Focus the rebuilt element of `key`, or else the first control of its area that takes focus:
 * a keyboard player keeps their place after a move instead of starting over from the page top.
 * Returns whether something took focus. */
function restoreFocus(key) {
  if (!key) return false;
  const area = $(key.split(" ")[0].slice(1));
  const same = key.includes(" ") ? document.querySelector(key) : null;
  const usable = (e) => e && !e.disabled && (e.tabIndex >= 0 || e.tagName === "BUTTON");
  const target = usable(same) ? same : area.querySelector('[tabindex="0"], button:not([disabled])');
  if (target) target.focus({ preventScroll: true });
  return !!target;
}

/** True when the analysis of `key` (session:moves) is of the position on the board. */
function analysisIsCurrent(key) {
  return !!state.view && key === `${state.view.id}:${state.view.moves.length}`;
}

function renderAll() {
  renderSeats();
  renderStatus();
  renderBoard();
  renderMoves();
  renderControls();
}

function seatName(seat) {
  const info = state.view.seats[seat];
  if (!info) return `seat ${seat}`;
  return info.human ? `seat ${seat} (you)` : `seat ${seat} (${info.agent})`;
}

function renderSeats() {
  const v = state.view;
  const host = $("seats");
  host.replaceChildren();
  for (const info of v.seats) {
    const div = document.createElement("div");
    div.className = `seat seat${info.seat}`;
    if (v.status === "playing" && v.to_move === info.seat) div.classList.add("to-move");
    div.dataset.seat = info.seat;
    div.dataset.agent = info.agent;
    const marker = document.createElement("span");
    marker.className = `marker seat${info.seat}`;
    const name = document.createElement("span");
    name.className = "seat-name";
    name.textContent = `Seat ${info.seat}`;
    const agent = document.createElement("span");
    agent.className = "seat-agent";
    agent.textContent = info.human ? "human" : info.agent;
    div.append(marker, name, agent);
    if (v.result) {
      const r = document.createElement("span");
      r.className = "seat-result";
      r.textContent = formatScore(v.result[info.seat]);
      div.append(r);
    }
    host.append(div);
  }
}

/** A seat's result: whole numbers as they are, shares (a HiLo table's 1/3) to 2 decimals. */
function formatScore(value) {
  const shown = Number.isInteger(value) ? String(value) : value.toFixed(2);
  return value > 0 ? `+${shown}` : shown;
}

function renderStatus() {
  const v = state.view;
  const status = $("status");
  status.dataset.status = v.status;
  const result = $("result");
  if (v.status === "playing") {
    const who = seatName(v.to_move);
    const waiting = state.animating
      ? "showing the last move stone by stone…"
      : v.human_to_move
        ? "your move"
        : state.playing
          ? "thinking…"
          : "paused (press Play or Step)";
    status.textContent = `${GAME_NAMES[v.game]} · ${who} to move — ${waiting}`;
    result.hidden = true;
    result.textContent = "";
  } else {
    status.textContent = `${GAME_NAMES[v.game]} · game ${v.status === "over" ? "over" : v.status}`;
    const scores = (v.result || []).map((r, i) => `seat ${i}: ${formatScore(r)}`).join(", ");
    result.textContent = `Result: ${v.message || v.status}${scores ? ` (${scores})` : ""}`;
    result.hidden = false;
  }
  // the position in the game's notation (not in HiLo, whose notation holds the hidden cards)
  $("position-line").hidden = !v.position;
  $("position-text").textContent = v.position || "";
}

function boardContext() {
  const v = state.view;
  return {
    interactive: v.status === "playing" && v.human_to_move && !state.sowing,
    play,
    api: (method, suffix, body) => gameRequest(method, suffix, body),
    redraw: renderBoard,
    setActions,
    setHint: (text) => {
      if (!state.sowing) $("board-caption").textContent = text;
    },
    showError,
    sowing: state.sowing,
  };
}

function renderBoard() {
  const v = state.view;
  const host = $("board");
  // keyboard focus survives the redraw (kept over the agent's turn, when nothing takes it)
  const active = document.activeElement;
  const focused = focusKey(active) ?? (active === document.body ? state.pendingFocus : null);
  host.dataset.game = v.game;
  setActions([]);
  BOARDS[v.game].render(host, v, boardContext());
  state.pendingFocus = restoreFocus(focused) ? null : focused;
}

/** The buttons under the board: {label, action?, id?, primary?, disabled?, onClick, group?};
 * buttons of one group (HiLo's "swap", "discard", ...) share a row, each showing `short`. */
function setActions(buttons) {
  const host = $("actions");
  host.replaceChildren();
  const groups = new Map();
  for (const spec of buttons) {
    const button = document.createElement("button");
    button.type = "button";
    button.textContent = spec.short ?? spec.label;
    button.title = spec.label;
    button.setAttribute("aria-label", spec.label);
    if (spec.id) button.id = spec.id;
    if (spec.action !== undefined) button.dataset.action = spec.action;
    if (spec.primary) button.classList.add("primary");
    button.disabled = !!spec.disabled;
    button.addEventListener("click", spec.onClick);
    if (!spec.group) {
      host.append(button);
      continue;
    }
    if (!groups.has(spec.group)) {
      const row = document.createElement("div");
      row.className = "action-group";
      row.dataset.group = spec.group;
      const name = document.createElement("span");
      name.className = "group-label";
      name.textContent = spec.group;
      row.append(name);
      host.append(row);
      groups.set(spec.group, row);
    }
    groups.get(spec.group).append(button);
  }
}

function renderMoves() {
  const v = state.view;
  const list = $("moves");
  const items = v.moves.map((move, i) => {
    const li = document.createElement("li");
    li.dataset.index = i;
    li.dataset.seat = move.seat;
    const seat = document.createElement("span");
    seat.className = `marker seat${move.seat}`;
    seat.title = `seat ${move.seat}`;
    const label = document.createElement("span");
    label.className = "move-label";
    label.textContent = move.label;
    const who = document.createElement("span");
    who.className = "move-seat";
    who.textContent = `seat ${move.seat}`;
    li.append(seat, who, label);
    return li;
  });
  list.replaceChildren(...items);
  $("move-count").textContent = v.moves.length;
  list.scrollTop = list.scrollHeight;
}

function renderControls() {
  const v = state.view;
  const agents = v.seats.some((s) => !s.human);
  const people = v.seats.filter((s) => s.human);
  const playing = v.status === "playing";
  $("controls").hidden = false;
  for (const id of ["play", "pause", "step"]) $(id).hidden = !agents;
  $("play").disabled = !playing || state.playing;
  $("pause").disabled = !playing || !state.playing;
  $("step").disabled = !playing || v.human_to_move || state.playing;
  $("resign").hidden = !people.length || !playing;
  $("resign").disabled = state.resigning;
  const download = $("download");
  download.hidden = false;
  download.href = `/api/sessions/${v.id}/record`;
  // backgammon from the opening: also GNU Backgammon's .mat match format
  const mat = $("download-mat");
  mat.hidden = !(v.game === "backgammon" && v.moves.length > 0 && !v.from_position);
  mat.href = `/api/sessions/${v.id}/record?format=mat`;
  $("again").hidden = playing;
  $("sowing-label").hidden = v.game !== "hus";
}

// --- after every change: the Hus sowing, the automatic analysis, the next agent turn ---------------

async function afterUpdate() {
  const gen = state.gen;
  const v = state.view;
  if (v.game === "hus" && $("sowing").checked && state.animatedMoves < v.moves.length) {
    await animateSowing(gen);
  }
  if (gen !== state.gen) return;
  state.animatedMoves = Math.max(state.animatedMoves, v.moves.length);
  if ($("analyse-auto").checked && v.status === "playing" && (v.game !== "hilo" || v.human_to_move)) {
    await analyse();
  }
  if (gen !== state.gen || state.view !== v) return;
  schedule();
}

function clearTimer() {
  if (state.timer !== null) clearTimeout(state.timer);
  state.timer = null;
  updateBusy();
}

function schedule() {
  clearTimer();
  const v = state.view;
  if (v && v.status === "playing" && !v.human_to_move && state.playing) {
    state.timer = setTimeout(() => {
      state.timer = null;
      agentTurn();
    }, Number($("speed").value) || 0);
  }
  updateBusy();
  renderControls();
}

async function agentTurn() {
  clearTimer();
  const v = state.view;
  if (!v || v.status !== "playing" || v.human_to_move || state.agentBusy || state.animating || state.resigning) return;
  const gen = state.gen;
  state.agentBusy = true;
  updateBusy();
  try {
    const next = await gameRequest("POST", "agent");
    if (gen === state.gen) setView(next);
  } catch (err) {
    if (gen === state.gen && err.status === 409) {
      // the game moved on without this page's knowing (a resign queued before this turn,
      // another tab on the same game): no error, show where it stands
      try {
        const now = await gameRequest("GET", "");
        if (gen === state.gen) setView(now);
      } catch {
        // (the next request says what is wrong)
      }
    } else if (gen === state.gen) {
      state.playing = false;
      showError(`Agent turn: ${err.message}`);
      renderAll();
    }
  } finally {
    state.agentBusy = false;
    updateBusy();
  }
}

/** A person's turn: POST /turn with the actions (one, or a backgammon roll's checker moves). */
async function play(actions) {
  const v = state.view;
  if (!v || state.turnBusy || v.status !== "playing" || !v.human_to_move) return;
  const gen = state.gen;
  state.turnBusy = true;
  try {
    const next = await gameRequest("POST", "turn", { actions });
    if (gen === state.gen) {
      clearMessage();
      setView(next);
    }
  } catch (err) {
    if (gen === state.gen) {
      showError(err.message);
      renderBoard();
    }
  } finally {
    state.turnBusy = false;
    updateBusy();
  }
}

async function resign() {
  const v = state.view;
  if (!v || v.status !== "playing" || state.resigning) return;
  const people = v.seats.filter((s) => s.human).map((s) => s.seat);
  const seat = people.includes(v.to_move) ? v.to_move : people[0];
  if (seat === undefined) return;
  const gen = state.gen;
  state.resigning = true; // one resign at a time: it may wait behind an agent's move
  clearTimer(); // and no further agent turn after it
  renderControls();
  showInfo("Resigning… (after the move being computed)");
  try {
    const next = await gameRequest("POST", "resign", { seat });
    if (gen === state.gen) {
      clearMessage();
      setView(next);
    }
  } catch (err) {
    if (gen === state.gen) showError(`Resign: ${err.message}`);
  } finally {
    state.resigning = false;
    if (gen === state.gen && state.view) renderControls();
  }
}

// --- Hus: a move stone by stone -----------------------------------------------------------------

async function animateSowing(gen) {
  const total = state.view.moves.length;
  state.animating = true;
  updateBusy();
  renderStatus();
  try {
    for (let n = state.animatedMoves; n < total; n++) {
      if (gen !== state.gen || !$("sowing").checked) break;
      let data;
      try {
        data = await gameRequest("GET", `sowing/${n}`);
      } catch (err) {
        $("board-caption").textContent = `Sowing of move ${n + 1}: ${err.message}`;
        break;
      }
      if (gen !== state.gen) break;
      const move = data.move || state.view.moves[n];
      const mover = move.seat;
      const label = move.label || move.action;
      const steps = Array.isArray(data.steps) ? data.steps : [];
      const interval = Math.max(20, Math.min(220, 5000 / Math.max(1, steps.length)));
      const before = hus.stepSides(data.before);
      if (before) {
        state.sowing = { sides: before, pit: move.action, kind: "pickup", hand: null, mover };
        $("board-caption").textContent = `Move ${n + 1}: seat ${mover} plays pit ${label}`;
        renderBoard();
        await sleep(interval * 2);
      }
      for (let i = 0; i < steps.length; i++) {
        if (gen !== state.gen || !$("sowing").checked) break;
        const step = steps[i];
        const sides = hus.stepSides(step);
        if (!sides) continue;
        state.sowing = { sides, pit: step.pit ?? null, kind: step.kind || "", hand: step.hand ?? null, mover };
        const hand = step.hand === undefined || step.hand === null ? "" : `, ${step.hand} in hand`;
        $("board-caption").textContent = `Move ${n + 1} (seat ${mover}, pit ${label}): step ${i + 1} of ${steps.length}, ${step.kind || "step"}${hand}${data.truncated ? " (long move: first steps only)" : ""}`;
        renderBoard();
        await sleep(interval);
      }
      state.animatedMoves = n + 1;
    }
  } finally {
    state.sowing = null;
    state.animating = false;
    if (gen === state.gen) {
      $("board-caption").textContent = "";
      renderBoard();
      renderStatus();
    }
    updateBusy();
  }
}

// --- analysis -----------------------------------------------------------------------------------

function analysisMessage(text, kind = "info") {
  const box = $("analysis-message");
  box.textContent = text;
  box.className = `message small ${kind}`;
  box.hidden = !text;
}

async function analyse() {
  const v = state.view;
  if (!v) return analysisMessage("Start a game first.");
  if (v.status !== "playing") return analysisMessage("The game is over: nothing to analyse.");
  const agent = $("analysis-agent").value.trim();
  const key = `${v.id}:${v.moves.length}:${agent}`;
  state.analysisKey = key;
  analysisMessage(`Thinking (${agent || "the agent to move"})…`);
  $("analysis").classList.add("stale");
  try {
    const result = await gameRequest("POST", "analysis", agent ? { agent } : {});
    if (state.analysisKey !== key) return;
    state.analysis = result;
    analysisMessage("");
    renderAnalysis(result);
  } catch (err) {
    if (state.analysisKey !== key) return;
    analysisMessage(err.message, "error");
    $("analysis").replaceChildren();
  } finally {
    $("analysis").classList.remove("stale");
  }
}

function formatValue(value, format, scale = 1) {
  if (value === null || value === undefined || value === "") return "";
  if (typeof value !== "number") return String(value);
  if (format === "percent") return `${(value * scale).toFixed(1)}%`;
  if (format === "int") return String(Math.round(value));
  if (Number.isInteger(value) || Math.abs(value) >= 100) return value.toFixed(0);
  return value.toFixed(3);
}

function sameMove(row, chosen) {
  if (chosen === null || chosen === undefined) return false;
  if (typeof chosen === "object" && !Array.isArray(chosen)) {
    if (chosen.actions) return sameMove(row, chosen.actions);
    if (chosen.action !== undefined) return sameMove(row, chosen.action);
    if (chosen.label !== undefined) return row.label === chosen.label;
    return false;
  }
  if (Array.isArray(chosen)) {
    const actions = row.actions || (row.action !== undefined ? [row.action] : []);
    return actions.length === chosen.length && actions.every((a, i) => a === chosen[i]);
  }
  if (typeof chosen === "string") return row.label === chosen;
  // backgammon agents that choose whole plays name the play by its index
  if (row.index !== undefined && row.action === undefined) return row.index === chosen;
  return row.action === chosen || (Array.isArray(row.actions) && row.actions.length === 1 && row.actions[0] === chosen);
}

function renderAnalysis(result) {
  const host = $("analysis");
  host.replaceChildren();
  const summary = document.createElement("div");
  summary.className = "analysis-summary";
  summary.id = "analysis-summary";
  summary.dataset.moves = state.view.moves.length; // the position analysed: after this many moves
  summary.dataset.key = `${state.view.id}:${state.view.moves.length}`;
  const head = document.createElement("div");
  head.innerHTML = "";
  const agentName = document.createElement("b");
  agentName.textContent = result.agent ?? "agent";
  head.append(agentName, document.createTextNode(` for seat ${result.seat ?? "?"}${result.method ? ` · ${result.method}` : ""}`));
  summary.append(head);
  if (result.value !== undefined && result.value !== null) {
    const value = document.createElement("div");
    value.className = "analysis-value";
    value.textContent = `value ${formatValue(result.value, "number")}`;
    if (result.value_meaning) {
      const meaning = document.createElement("span");
      meaning.className = "meaning";
      meaning.textContent = ` (${result.value_meaning})`;
      value.append(meaning);
    }
    summary.append(value);
  }
  host.append(summary);

  const columns = Array.isArray(result.columns) ? result.columns : [];
  const rows = Array.isArray(result.moves) ? result.moves : [];
  const solver = result.solver;
  const solved = solver && solver.solved;
  const solverValues = new Map();
  const optimal = new Set();
  if (solved) {
    for (const m of solver.moves || []) solverValues.set(m.action, m.value);
    for (const a of solver.optimal || []) optimal.add(typeof a === "object" ? a.action : a);
  }
  // percent columns: fractions (0..1) unless a value is over 1; the first one gets bars
  const barColumn = columns.length > 3 ? -1 : columns.findIndex((c) => c.format === "percent");
  const scales = columns.map((c) =>
    c.format === "percent" && rows.every((r) => typeof r[c.key] !== "number" || r[c.key] <= 1.0000001) ? 100 : 1,
  );

  if (rows.length) {
    const table = document.createElement("table");
    table.id = "analysis-table";
    const thead = table.createTHead().insertRow();
    const wide = columns.length > 3;
    const th = (text, cls) => {
      const cell = document.createElement("th");
      // many columns (backgammon's outcome probabilities): short names, the full one on hover
      cell.textContent = wide ? text.replace(/backgammon/g, "bg").replace(/gammon/g, "g") : text;
      cell.title = text;
      if (cls) cell.className = cls;
      thead.append(cell);
    };
    th("move");
    columns.forEach((c, i) => th(`${c.label || c.key}${wide && c.format === "percent" ? " %" : ""}`, i === barColumn ? "pct" : "num"));
    if (solved) th("solver", "num");
    const body = table.createTBody();
    const interactive = state.view.human_to_move && state.view.status === "playing";
    for (const row of rows) {
      const tr = body.insertRow();
      const actions = row.actions || (row.action !== undefined ? [row.action] : []);
      if (row.action !== undefined) tr.dataset.action = row.action;
      else tr.dataset.actions = actions.join(",");
      if (sameMove(row, result.chosen)) tr.classList.add("chosen");
      const label = tr.insertCell();
      label.className = "move-label";
      label.textContent = row.label ?? actions.join(" ");
      columns.forEach((c, i) => {
        const cell = tr.insertCell();
        const value = row[c.key];
        if (i === barColumn && typeof value === "number") {
          cell.className = "pct";
          const bar = document.createElement("div");
          bar.className = "bar";
          const fill = document.createElement("span");
          fill.style.width = `${Math.max(0, Math.min(100, value * scales[i]))}%`;
          bar.append(fill);
          const number = document.createElement("span");
          number.className = "pct-text";
          number.textContent = formatValue(value, "percent", scales[i]);
          cell.append(bar, number);
        } else {
          cell.className = "num";
          cell.textContent = formatValue(value, c.format, scales[i]);
          if (wide && c.format === "percent") cell.textContent = cell.textContent.replace("%", "");
        }
      });
      if (solved) {
        const cell = tr.insertCell();
        cell.className = "num solver";
        const value = solverValues.get(row.action);
        cell.textContent = value === undefined ? "" : `${value > 0 ? "+" : ""}${value}${optimal.has(row.action) ? " ★" : ""}`;
        if (optimal.has(row.action)) tr.classList.add("optimal");
      }
      if (interactive && actions.length) {
        tr.classList.add("playable");
        tr.title = "click to play this move";
        tr.addEventListener("click", () => {
          // never in a later position, where the same action is another move (or illegal)
          if (!analysisIsCurrent(summary.dataset.key)) return;
          if (state.view.game === "backgammon" || actions.length === 1) play(actions);
        });
      }
    }
    const wrap = document.createElement("div");
    wrap.className = "table-wrap";
    wrap.append(table);
    host.append(wrap);
    if (wide) table.classList.add("wide");
  }
  const notes = [];
  if (result.note) notes.push(result.note);
  if (solver) {
    if (solved) notes.push(`Solver: the position is worth ${solver.value > 0 ? "+" : ""}${solver.value} with perfect play${optimal.size ? " (★ optimal moves)" : ""}.`);
    else notes.push(`Solver: ${solver.note || "not solved within 1 s"}.`);
  }
  for (const note of notes) {
    const p = document.createElement("p");
    p.className = "analysis-note";
    p.textContent = note;
    host.append(p);
  }
}

// --- wiring -------------------------------------------------------------------------------------

/** The second click of a double click on the board, its buttons or the analysis would land on
 * what the first one's move redrew there (the next move's pit, button or cube decision): drop it. */
function dropDoubleClicks(event) {
  if (event.detail > 1 && event.target.closest?.("#board, #actions, #analysis")) {
    event.stopPropagation();
    event.preventDefault();
  }
}

function wire() {
  document.addEventListener("click", dropDoubleClicks, true);
  $("setup-form").addEventListener("submit", newGame);
  $("again").addEventListener("click", () => newGame());
  $("play").addEventListener("click", () => {
    state.playing = true;
    clearMessage();
    renderStatus();
    schedule();
  });
  $("pause").addEventListener("click", () => {
    state.playing = false;
    clearTimer();
    renderStatus();
    renderControls();
  });
  $("step").addEventListener("click", () => {
    state.playing = false;
    agentTurn();
  });
  $("speed").addEventListener("change", () => {
    if (state.timer !== null) schedule();
  });
  $("resign").addEventListener("click", resign);
  $("analyse").addEventListener("click", () => analyse());
  $("analyse-auto").addEventListener("change", () => {
    if ($("analyse-auto").checked && state.view && !state.agentBusy) analyse();
  });
  $("sowing").addEventListener("change", () => {
    if (state.view) state.animatedMoves = state.view.moves.length;
  });
}

async function init() {
  state.analysisHint = [...$("analysis").childNodes].map((node) => node.cloneNode(true));
  wire();
  try {
    state.games = await request("GET", "/api/games");
  } catch (err) {
    showError(`Cannot load the games: ${err.message}`);
    return;
  }
  buildSetup();
  await rejoin();
  document.body.dataset.ready = "1";
  updateBusy();
}

/** The game named in the page's address (#game=ID, set when a game starts), after a reload. */
async function rejoin() {
  const named = location.hash.match(/^#game=([\w-]+)$/);
  if (!named) return;
  try {
    const view = await request("GET", `/api/sessions/${named[1]}`);
    $("game-select").value = view.game;
    $("game-select").dispatchEvent(new Event("change")); // the form's options for that game
    startGame(view);
    showInfo("Back in this page's game.");
  } catch (err) {
    history.replaceState(null, "", location.pathname);
    showInfo(`The game of this page's address is gone (${err.message}): start a new one.`);
  }
}

// for the console and the tests: the game as the page last saw it
window.spieltisch = {
  get view() {
    return state.view;
  },
  get playing() {
    return state.playing;
  },
  turnState: () => backgammon.turnState(),
};

init();
