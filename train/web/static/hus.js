// Hus (4 x 8): seat 0's two rows at the bottom (its outer row, actions 0..7, at the very bottom,
// its inner row, actions 8..15, above it; columns from its left = the page's left), seat 1's at
// the top mirrored (outer row at the very top, its own left is the page's right).
// Hooks: <g class="pit" data-seat="s" data-pit="a" data-count="n"> with a = the seat's action;
// legal pits get class "legal" and data-action.

import { el, onActivate, stones, svgRoot, text } from "./svg.js";

const STEP = 74;
const R = 29;
const LEFT = 40;
const TOP = 40;

/** Page column and row (0 = top) of action `a` of `seat`. */
export function place(seat, a) {
  const col = a % 8;
  const outer = a < 8;
  if (seat === 0) return { col, row: outer ? 3 : 2 };
  return { col: 7 - col, row: outer ? 0 : 1 };
}

export function render(host, view, ctx) {
  const sow = ctx.sowing; // {sides, pit, kind, hand, mover} while a move is shown step by step
  const sides = sow ? sow.sides : view.board.sides;
  const width = LEFT + 8 * STEP + 20;
  const height = TOP + 4 * STEP + 40;
  const svg = svgRoot(width, height, { id: "hus-board", class: "hus" });
  svg.append(el("rect", { x: 4, y: 4, width: width - 8, height: height - 8, rx: 24, class: "wood" }));
  const mid = TOP + 2 * STEP;
  svg.append(el("line", { x1: 20, x2: width - 20, y1: mid, y2: mid, class: "divider" }));
  svg.append(text(14, TOP + STEP, "seat 1", { class: "side-label", transform: `rotate(-90 14 ${TOP + STEP})`, "text-anchor": "middle" }));
  svg.append(text(14, mid + STEP, "seat 0", { class: "side-label", transform: `rotate(-90 14 ${mid + STEP})`, "text-anchor": "middle" }));

  const legal = new Map((ctx.interactive && !sow ? view.legal : []).map((m) => [m.action, m]));
  const last = !sow && view.moves.length ? view.moves[view.moves.length - 1] : null;
  const active = new Set();
  const captured = new Set();
  if (sow && sow.pit !== null && sow.pit !== undefined) {
    active.add(`${sow.mover}:${sow.pit}`);
    if (sow.kind === "capture" && sow.pit >= 8) {
      // the opponent's two pits in the same page column as the mover's inner-row pit
      const { col } = place(sow.mover, sow.pit);
      const other = 1 - sow.mover;
      for (let a = 0; a < 16; a++) if (place(other, a).col === col) captured.add(`${other}:${a}`);
    }
  }

  for (const seat of [0, 1]) {
    sides[seat].forEach((count, a) => {
      const { col, row } = place(seat, a);
      const cx = LEFT + STEP * (col + 0.5);
      const cy = TOP + STEP * (row + 0.5) + (row >= 2 ? 6 : -6);
      const move = seat === view.to_move ? legal.get(a) : undefined;
      const key = `${seat}:${a}`;
      const classes = ["pit"];
      if (move) classes.push("legal");
      if (last && last.seat === seat && last.action === a) classes.push("last");
      if (active.has(key)) classes.push(sow.kind === "pickup" ? "sow-pickup" : "sow-active");
      if (captured.has(key)) classes.push("sow-capture");
      const label = `${a < 8 ? 1 : 2}${a % 8}`;
      const g = el("g", {
        class: classes.join(" "),
        "data-seat": seat,
        "data-pit": a,
        "data-count": count,
        "data-action": move ? move.action : null,
        tabindex: move ? 0 : null,
        role: move ? "button" : null,
        "aria-label": move ? `play pit ${label}, ${count} stone${count === 1 ? "" : "s"}` : null,
      });
      g.append(el("title", {}, `seat ${seat}, pit ${label}: ${count} stone${count === 1 ? "" : "s"}`));
      g.append(el("circle", { cx, cy, r: R, class: "hole" }));
      g.append(...stones(cx, cy, R, count, 20));
      g.append(el("circle", { cx: cx + R * 0.72, cy: cy - R * 0.72, r: 11, class: "badge" }));
      g.append(text(cx + R * 0.72, cy - R * 0.72 + 4, count, { class: "badge-count", "text-anchor": "middle" }));
      g.append(text(cx, row >= 2 ? cy + R + 11 : cy - R - 3, label, { class: "pit-label tiny", "text-anchor": "middle" }));
      svg.append(g);
    });
  }
  onActivate(svg, ".pit.legal", (pit) => ctx.play([Number(pit.dataset.action)]));
  host.replaceChildren(svg);
  if (!sow) ctx.setHint(ctx.interactive ? "Your move: click a highlighted pit (2 or more stones) on your two rows." : "");
}

/** The board "sides" (two lists of 16 in action order) of a sowing step, whatever shape the server
 * sends: {sides}, {board: {sides}}, {board: [32 ring counts]} or a bare array of 32. */
export function stepSides(step) {
  if (!step) return null;
  if (Array.isArray(step.sides) && step.sides.length === 2) return step.sides;
  const b = step.board ?? step;
  if (b && Array.isArray(b.sides)) return b.sides;
  const raw = Array.isArray(b) ? b : null;
  if (raw && raw.length === 32) {
    // the engine's ring layout: seat p's ring is raw[16p .. 16p+15]; action a < 8 is ring 15 - a,
    // action a >= 8 is ring a - 8
    return [0, 1].map((p) => {
      const ring = raw.slice(16 * p, 16 * p + 16);
      return Array.from({ length: 16 }, (_, a) => (a < 8 ? ring[15 - a] : ring[a - 8]));
    });
  }
  return null;
}
