// Kalaha: seat 0's pits along the bottom (left to right), seat 1's along the top (right to left,
// so play runs counter-clockwise), seat 0's store on the right, seat 1's on the left.
// Hooks: <g class="pit" data-seat="s" data-pit="i" data-count="n">, legal pits also get
// class "legal" and data-action; stores are <g class="store" data-store="s">.

import { el, onActivate, stones, svgRoot, text } from "./svg.js";

const STEP = 78; // distance between pit centres
const R = 31; // pit radius

export function render(host, view, ctx) {
  const board = view.board;
  const n = board.sides[0].length;
  const width = (n + 2) * STEP + 20;
  const height = 300;
  const svg = svgRoot(width, height, { id: "kalaha-board", class: "kalaha", "data-pits": n });
  svg.append(el("rect", { x: 4, y: 4, width: width - 8, height: height - 8, rx: 40, class: "wood" }));

  const legal = new Map((ctx.interactive ? view.legal : []).map((m) => [m.action, m]));
  const last = view.moves.length ? view.moves[view.moves.length - 1] : null;
  const pitX = (seat, i) => 10 + STEP * (1.5 + (seat === 0 ? i : n - 1 - i));
  const rowY = [200, 92];

  for (const seat of [0, 1]) {
    board.sides[seat].forEach((count, i) => {
      const cx = pitX(seat, i);
      const cy = rowY[seat];
      const move = seat === view.to_move ? legal.get(i) : undefined;
      const isLast = last && last.seat === seat && last.action === i;
      const g = el("g", {
        class: `pit${move ? " legal" : ""}${isLast ? " last" : ""}`,
        "data-seat": seat,
        "data-pit": i,
        "data-count": count,
        "data-action": move ? move.action : null,
        tabindex: move ? 0 : null,
        role: move ? "button" : null,
        "aria-label": move ? `play pit ${i}, ${count} stone${count === 1 ? "" : "s"}` : null,
      });
      g.append(el("title", {}, `seat ${seat}, pit ${i}: ${count} stone${count === 1 ? "" : "s"}`));
      g.append(el("circle", { cx, cy, r: R, class: "hole" }));
      g.append(...stones(cx, cy, R, count));
      // the count outside the pit, the pit's number (its action) on the inner side
      const outer = seat === 0 ? cy + R + 20 : cy - R - 9;
      g.append(text(cx, outer, count, { class: "count", "text-anchor": "middle" }));
      const inner = seat === 0 ? cy - R - 5 : cy + R + 14;
      g.append(text(cx, inner, i, { class: "pit-label", "text-anchor": "middle" }));
      svg.append(g);
    });
  }

  // stores: seat 1 on the left, seat 0 on the right
  const storeX = [10 + STEP * (n + 1.5), 10 + STEP * 0.5];
  for (const seat of [0, 1]) {
    const cx = storeX[seat];
    const count = board.stores[seat];
    const g = el("g", { class: "store", "data-store": seat, "data-count": count });
    g.append(el("rect", { x: cx - 31, y: 66, width: 62, height: 160, rx: 31, class: "hole" }));
    g.append(...stones(cx, seat === 0 ? 175 : 117, 27, count, 30));
    g.append(text(cx, seat === 0 ? 112 : 202, count, { class: "store-count", "text-anchor": "middle" }));
    g.append(text(cx, seat === 0 ? 246 : 54, `store ${seat}`, { class: "pit-label", "text-anchor": "middle" }));
    svg.append(g);
  }
  svg.append(text(width / 2, 30, "seat 1", { class: "side-label", "text-anchor": "middle" }));
  svg.append(text(width / 2, 284, "seat 0", { class: "side-label", "text-anchor": "middle" }));

  onActivate(svg, ".pit.legal", (pit) => ctx.play([Number(pit.dataset.action)]));
  host.replaceChildren(svg);
  ctx.setHint(ctx.interactive ? "Your move: click one of the highlighted pits." : "");
}
