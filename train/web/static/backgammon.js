// Backgammon in the standard layout from seat 0's side: seat 0 (light checkers) moves 24 -> 1,
// its home board (points 1-6) at the bottom right, seat 1 (dark) moves 1 -> 24. Points are
// numbered as seat 0 numbers them (the API's "from"/"to" use the same numbers).
//
// A person plays a roll checker by checker: click a checker (a point or the bar), then where it
// goes (a point, or the off tray). Each checker move is previewed by the server
// (POST /preview: the board after the moves so far and the legal next ones); Undo takes the last
// one back; once the roll is used up, Confirm sends the whole roll (POST /turn).
// Hooks: <g class="point" data-point="1..24">, <g data-point="bar">, <g data-point="off"
// data-seat="s">, classes "movable" (a checker that can move), "selected", "target";
// <g id="bg-cube" data-value data-owner>, <g class="die" data-value data-used>;
// buttons #undo, #confirm and one per cube/pass action (data-action).

import { el, onActivate, svgRoot, text } from "./svg.js";

const PT = 50; // point width
const CUBE_W = 56;
const BAR_W = 48;
const LEFT0 = CUBE_W; // left half starts here
const BAR_X = LEFT0 + 6 * PT;
const RIGHT0 = BAR_X + BAR_W;
const BOARD_END = RIGHT0 + 6 * PT;
const TRAY_X = BOARD_END + 12;
const TRAY_W = 60;
const WIDTH = TRAY_X + TRAY_W + 8;
const TOP = 26;
const BOTTOM = 474;
const LEN = 190; // point length
const HEIGHT = 500;
const CR = 22; // checker radius
const STACK = 37;

/** The checker move in progress (one person's roll): reset whenever the game moves on. */
let turn = { key: null, partial: [], preview: null, selected: null, pending: false };

function pointX(p) {
  // left edge of point p (1..24)
  if (p <= 6) return RIGHT0 + (6 - p) * PT;
  if (p <= 12) return LEFT0 + (12 - p) * PT;
  if (p <= 18) return LEFT0 + (p - 13) * PT;
  return RIGHT0 + (p - 19) * PT;
}

function checker(cx, cy, seat, extra = {}) {
  return el("circle", { cx, cy, r: CR, class: `checker seat${seat}`, ...extra });
}

/** The turn in progress as the tests and the page see it. */
export function turnState() {
  return {
    partial: [...turn.partial],
    complete: !!(turn.preview && turn.preview.complete),
    legal: turn.preview ? turn.preview.legal : null, // null: the session's own legal moves
    selected: turn.selected,
    pending: turn.pending,
  };
}

export function render(host, view, ctx) {
  const key = `${view.id}:${view.moves.length}:${view.to_move}:${view.status}`;
  if (key !== turn.key) turn = { key, partial: [], preview: null, selected: null, pending: false };
  const board = turn.preview ? turn.preview.board : view.board;
  const legal = ctx.interactive ? (turn.preview ? turn.preview.legal : view.legal) : [];
  const checkerMoves = legal.filter((m) => m.from !== undefined && m.from !== null);
  const otherMoves = turn.partial.length ? [] : legal.filter((m) => m.from === undefined || m.from === null);
  const sources = new Set(checkerMoves.map((m) => String(m.from)));
  const targets = new Set(
    checkerMoves.filter((m) => turn.selected !== null && String(m.from) === turn.selected).map((m) => String(m.to)),
  );
  const mover = view.board.turn ?? view.to_move;

  const svg = svgRoot(WIDTH, HEIGHT, { id: "backgammon-board", class: "backgammon" });
  svg.append(el("rect", { x: LEFT0 - 6, y: TOP - 8, width: BOARD_END - LEFT0 + 12, height: BOTTOM - TOP + 16, rx: 8, class: "frame" }));
  svg.append(el("rect", { x: LEFT0, y: TOP, width: 6 * PT, height: BOTTOM - TOP, class: "felt" }));
  svg.append(el("rect", { x: RIGHT0, y: TOP, width: 6 * PT, height: BOTTOM - TOP, class: "felt" }));

  // the points a person can use now take keyboard focus (Enter or Space acts as a click)
  const usable = (name) => sources.has(name) || targets.has(name) || turn.selected === name;
  const focusable = (name, label) => (usable(name) ? { tabindex: 0, role: "button", "aria-label": label } : {});
  const pointClass = (name) => {
    const c = [];
    if (sources.has(name)) c.push("movable");
    if (turn.selected === name) c.push("selected");
    if (targets.has(name)) c.push("target");
    return c.join(" ");
  };

  // points
  for (let p = 1; p <= 24; p++) {
    const x0 = pointX(p);
    const top = p >= 13;
    const edge = top ? TOP : BOTTOM;
    const tip = top ? TOP + LEN : BOTTOM - LEN;
    const count = board.points[p - 1];
    const g = el("g", {
      class: `point ${pointClass(String(p))}`.trim(),
      "data-point": p,
      "data-count": count,
      ...focusable(String(p), `point ${p}, ${Math.abs(count)} checker${Math.abs(count) === 1 ? "" : "s"}`),
    });
    g.append(el("rect", { x: x0, y: top ? TOP : BOTTOM - LEN, width: PT, height: LEN, class: "hit" }));
    g.append(el("polygon", {
      points: `${x0 + 2},${edge} ${x0 + PT - 2},${edge} ${x0 + PT / 2},${tip}`,
      class: `tri ${p % 2 ? "odd" : "even"}`,
    }));
    const n = Math.abs(count);
    const seat = count > 0 ? 0 : 1;
    for (let k = 0; k < Math.min(n, 5); k++) {
      const cy = top ? TOP + CR + 1 + k * STACK : BOTTOM - CR - 1 - k * STACK;
      g.append(checker(x0 + PT / 2, cy, seat));
    }
    if (n > 5) {
      const cy = top ? TOP + CR + 1 + 4 * STACK : BOTTOM - CR - 1 - 4 * STACK;
      g.append(text(x0 + PT / 2, cy + 5, n, { class: `stack-count seat${seat}`, "text-anchor": "middle" }));
    }
    svg.append(g);
    svg.append(text(x0 + PT / 2, top ? TOP - 12 : BOTTOM + 20, p, { class: "point-label", "text-anchor": "middle" }));
  }

  // the bar: seat 0's checkers in its upper half, seat 1's in the lower half
  const bar = el("g", { class: `bar ${pointClass("bar")}`.trim(), "data-point": "bar", "data-count": board.bar.join(","), ...focusable("bar", "the bar") });
  bar.append(el("rect", { x: BAR_X, y: TOP - 8, width: BAR_W, height: BOTTOM - TOP + 16, class: "bar-wood" }));
  bar.append(el("rect", { x: BAR_X, y: TOP - 8, width: BAR_W, height: BOTTOM - TOP + 16, class: "hit" }));
  for (const seat of [0, 1]) {
    const n = board.bar[seat];
    for (let k = 0; k < Math.min(n, 4); k++) {
      const cy = seat === 0 ? 200 - k * STACK : 300 + k * STACK;
      bar.append(checker(BAR_X + BAR_W / 2, cy, seat));
    }
    if (n > 1) {
      const cy = seat === 0 ? 200 - Math.min(n - 1, 3) * STACK : 300 + Math.min(n - 1, 3) * STACK;
      bar.append(text(BAR_X + BAR_W / 2, cy + 5, n, { class: `stack-count seat${seat}`, "text-anchor": "middle" }));
    }
  }
  svg.append(bar);

  // borne-off trays: seat 0 bottom right, seat 1 top right
  for (const seat of [0, 1]) {
    const y0 = seat === 0 ? BOTTOM - LEN : TOP;
    const n = board.off[seat];
    const own = seat === mover;
    const g = el("g", { class: `tray ${own ? pointClass("off") : ""}`.trim(), "data-point": "off", "data-seat": seat, "data-count": n, ...(own ? focusable("off", "bear off") : {}) });
    g.append(el("rect", { x: TRAY_X, y: y0, width: TRAY_W, height: LEN, rx: 6, class: "tray-box" }));
    g.append(el("rect", { x: TRAY_X, y: y0, width: TRAY_W, height: LEN, rx: 6, class: "hit" }));
    for (let k = 0; k < n; k++) {
      const y = seat === 0 ? BOTTOM - 6 - (k + 1) * 11 : TOP + 6 + k * 11;
      g.append(el("rect", { x: TRAY_X + 6, y, width: TRAY_W - 12, height: 9, rx: 3, class: `slab seat${seat}` }));
    }
    g.append(text(TRAY_X + TRAY_W / 2, seat === 0 ? BOTTOM + 20 : TOP - 12, `off ${n}`, { class: "tray-label", "text-anchor": "middle" }));
    svg.append(g);
  }
  // pip counts beside the trays
  svg.append(text(TRAY_X + TRAY_W / 2, HEIGHT / 2 - 2, `pips ${board.pips[1]}`, { class: "pips", "text-anchor": "middle", "data-pips": 1 }));
  svg.append(text(TRAY_X + TRAY_W / 2, HEIGHT / 2 + 14, `pips ${board.pips[0]}`, { class: "pips", "text-anchor": "middle", "data-pips": 0 }));

  // the cube
  if (board.cube && board.cube.enabled) {
    const owner = board.cube.owner;
    const cy = owner === 0 ? BOTTOM - 40 : owner === 1 ? TOP + 40 : HEIGHT / 2;
    const g = el("g", { id: "bg-cube", "data-value": board.cube.value, "data-owner": owner ?? "" });
    g.append(el("rect", { x: 8, y: cy - 20, width: 40, height: 40, rx: 6, class: "cube" }));
    g.append(text(28, cy + 6, board.cube.value === 1 ? 64 : board.cube.value, { class: "cube-value", "text-anchor": "middle" }));
    g.append(el("title", {}, owner === null || owner === undefined ? "cube in the middle (value 1)" : `cube owned by seat ${owner}, value ${board.cube.value}`));
    svg.append(g);
  }

  // dice, on the mover's half (seat 0: right, seat 1: left); during a person's roll the dice of
  // the roll, the used ones faded
  const dice = turn.preview ? view.board : board;
  const diceLeft = turn.preview ? (turn.preview.complete ? [] : turn.preview.board.dice) : board.dice;
  if (dice.phase === "move" || (dice.dice && dice.dice.length)) {
    const rolled = dice.rolled && dice.rolled.length ? dice.rolled : dice.dice;
    const faces = rolled.length === 2 && rolled[0] === rolled[1] ? [rolled[0], rolled[0], rolled[0], rolled[0]] : [...rolled];
    const left = [...diceLeft];
    const used = faces.map((f) => {
      const i = left.indexOf(f);
      if (i >= 0) { left.splice(i, 1); return false; }
      return true;
    });
    const centre = mover === 1 ? LEFT0 + 3 * PT : RIGHT0 + 3 * PT;
    const size = 36;
    const gap = 10;
    const total = faces.length * size + (faces.length - 1) * gap;
    faces.forEach((f, i) => {
      svg.append(die(centre - total / 2 + i * (size + gap), HEIGHT / 2 - size / 2, size, f, used[i], mover));
    });
  }

  onActivate(svg, "[data-point]", (target) => {
    // both trays are "off": only the mover's own bears off (the other one played 4/off too)
    if (!(target.dataset.point === "off" && Number(target.dataset.seat) !== mover)) {
      click(String(target.dataset.point), ctx, checkerMoves);
    }
  });
  host.replaceChildren(svg);

  // buttons: cube / pass actions, Undo, Confirm
  const buttons = otherMoves.map((m) => ({ label: m.label, action: m.action, primary: m.label !== "drop", onClick: () => ctx.play([m.action]) }));
  if (ctx.interactive && (turn.partial.length || checkerMoves.length)) {
    buttons.push({ id: "undo", label: "↶ Undo", disabled: !turn.partial.length || turn.pending, onClick: () => undo(ctx) });
    buttons.push({
      id: "confirm",
      label: "✓ Confirm",
      primary: true,
      disabled: !(turn.preview && turn.preview.complete) || turn.pending,
      onClick: () => ctx.play([...turn.partial]),
    });
  }
  ctx.setActions(buttons);
  if (!ctx.interactive) ctx.setHint("");
  else if (turn.preview && turn.preview.complete) ctx.setHint(`Roll played (${movesText(turn.partial, view, turn)}): press Confirm, or Undo.`);
  else if (checkerMoves.length && turn.selected !== null) ctx.setHint(`From ${turn.selected}: click a highlighted destination${targets.has("off") ? " (or the tray to bear off)" : ""}.`);
  else if (checkerMoves.length) ctx.setHint(`Your roll ${(board.rolled || []).join("-")}: click a checker to move, then where it goes.`);
  else if (otherMoves.length) ctx.setHint(`Your decision: ${otherMoves.map((m) => m.label).join(" / ")}.`);
  else ctx.setHint("");
}

function movesText(actions, view, t) {
  return t.labels ? t.labels.join(" ") : `${actions.length} move${actions.length === 1 ? "" : "s"}`;
}

function die(x, y, size, value, used, seat) {
  const g = el("g", { class: `die seat${seat}${used ? " used" : ""}`, "data-value": value, "data-used": used ? 1 : 0 });
  g.append(el("rect", { x, y, width: size, height: size, rx: 7, class: "die-face" }));
  const pips = {
    1: [[0.5, 0.5]],
    2: [[0.27, 0.27], [0.73, 0.73]],
    3: [[0.27, 0.27], [0.5, 0.5], [0.73, 0.73]],
    4: [[0.27, 0.27], [0.73, 0.27], [0.27, 0.73], [0.73, 0.73]],
    5: [[0.27, 0.27], [0.73, 0.27], [0.5, 0.5], [0.27, 0.73], [0.73, 0.73]],
    6: [[0.27, 0.25], [0.73, 0.25], [0.27, 0.5], [0.73, 0.5], [0.27, 0.75], [0.73, 0.75]],
  }[value] || [];
  for (const [px, py] of pips) g.append(el("circle", { cx: x + px * size, cy: y + py * size, r: size * 0.09, class: "die-pip" }));
  return g;
}

async function click(name, ctx, checkerMoves) {
  if (turn.pending || !ctx.interactive) return;
  if (turn.selected !== null) {
    const move = checkerMoves.find((m) => String(m.from) === turn.selected && String(m.to) === name);
    if (move) return apply(move, ctx);
  }
  turn.selected = checkerMoves.some((m) => String(m.from) === name) ? name : null;
  ctx.redraw();
}

async function apply(move, ctx) {
  turn.partial.push(move.action);
  turn.labels = [...(turn.labels || []), move.label];
  turn.selected = null;
  await refresh(ctx);
}

async function undo(ctx) {
  if (!turn.partial.length || turn.pending) return;
  turn.partial.pop();
  turn.labels = (turn.labels || []).slice(0, turn.partial.length);
  turn.selected = null;
  await refresh(ctx);
}

/** Ask the server for the board after the moves so far (none: the session's own board). */
async function refresh(ctx) {
  const key = turn.key;
  if (!turn.partial.length) {
    turn.preview = null;
    ctx.redraw();
    return;
  }
  turn.pending = true;
  ctx.redraw();
  try {
    const preview = await ctx.api("POST", "preview", { actions: [...turn.partial] });
    if (turn.key === key) turn.preview = preview;
  } catch (err) {
    if (turn.key === key) {
      turn.partial.pop();
      turn.labels = (turn.labels || []).slice(0, turn.partial.length);
    }
    ctx.showError(err.message);
  } finally {
    if (turn.key === key) turn.pending = false;
    ctx.redraw();
  }
}
