// HiLo: every seat's 2 x 6 layout (top row slots 0-5 = T1..T6, bottom row 6-11 = B1..B6, columns
// from the owner's left), the draw pile, the discard pile and the card in hand. Only what the API
// sent is drawn: a face-down card (null) is a card back with no value on it.
// Hooks: <g class="card" data-seat="s" data-slot="i" data-face="up|down" data-code="Ki-LR">
// (data-code only on face-up cards); #hilo-draw, #hilo-discard, #hilo-held; a card or pile that
// one legal action names gets class "legal" and data-action. Every legal action is also a button.

import { el, svgRoot, text } from "./svg.js";

const CW = 56; // card width
const CH = 78;
const GAP = 6;

const KINDS = {
  Re: ["Resident", "resident"],
  Ki: ["King", "person"],
  Ba: ["Bard", "person"],
  Dk: ["Dragon keeper", "keeper"],
  Wk: ["Wolf keeper", "keeper"],
  Uk: ["Unicorn keeper", "keeper"],
  Dr: ["Dragon", "animal"],
  Wo: ["Wolf", "animal"],
  Un: ["Unicorn", "animal"],
  Ph: ["Phoenix", "phoenix"],
  Wz: ["Wizard", "wizard"],
};

/** A face code ("Ki-LR", "Ph$", "Re-T$") as {kind, halves, coin}. */
export function parseCode(code) {
  const m = /^([A-Za-z]{2})(?:-([LRTB]+))?(\$)?$/.exec(code || "");
  if (!m) return { kind: code, halves: "", coin: false };
  return { kind: m[1], halves: m[2] || "", coin: !!m[3] };
}

const slotLabel = (slot) => `${slot < 6 ? "T" : "B"}${(slot % 6) + 1}`;
const slotOf = (label) => (label[0] === "T" ? 0 : 6) + Number(label.slice(1)) - 1;

/** A card at (x, y): face up when `code` is a string, else its back. */
export function card(x, y, code, attrs = {}, scale = 1) {
  const w = CW * scale;
  const h = CH * scale;
  const up = typeof code === "string";
  const g = el("g", { class: `card ${up ? "up" : "back"}`, "data-face": up ? "up" : "down", "data-code": up ? code : null, ...attrs });
  if (!up) {
    g.append(el("rect", { x, y, width: w, height: h, rx: 6 * scale, class: "card-back" }));
    g.append(el("rect", { x: x + 5 * scale, y: y + 5 * scale, width: w - 10 * scale, height: h - 10 * scale, rx: 4 * scale, class: "card-back-inner" }));
    return g;
  }
  const face = parseCode(code);
  const [name, family] = KINDS[face.kind] || [face.kind, "resident"];
  g.classList.add(`kind-${family}`);
  g.append(el("rect", { x, y, width: w, height: h, rx: 6 * scale, class: "card-face" }));
  g.append(el("title", {}, `${name}${face.halves ? `, half coins ${face.halves.split("").join(" ")}` : ""}${face.coin ? ", whole coin" : ""} (${code})`));
  // half coins on the edges
  const half = 9 * scale;
  const edges = { L: [x, y + h / 2, 90, 270], R: [x + w, y + h / 2, 270, 450], T: [x + w / 2, y, 180, 360], B: [x + w / 2, y + h, 0, 180] };
  for (const letter of face.halves) {
    const [cx, cy] = edges[letter];
    // a half disc bulging into the card
    const d = {
      L: `M ${cx} ${cy - half} A ${half} ${half} 0 0 1 ${cx} ${cy + half} Z`,
      R: `M ${cx} ${cy - half} A ${half} ${half} 0 0 0 ${cx} ${cy + half} Z`,
      T: `M ${cx - half} ${cy} A ${half} ${half} 0 0 0 ${cx + half} ${cy} Z`,
      B: `M ${cx - half} ${cy} A ${half} ${half} 0 0 1 ${cx + half} ${cy} Z`,
    }[letter];
    g.append(el("path", { d, class: "coin" }));
  }
  g.append(text(x + w / 2, y + h * 0.47, face.kind, { class: "card-code", "text-anchor": "middle", "font-size": 20 * scale }));
  const words = name.split(" ");
  words.forEach((word, i) => {
    g.append(text(x + w / 2, y + h * 0.66 + i * 10 * scale, word, { class: "card-name", "text-anchor": "middle", "font-size": 9 * scale }));
  });
  if (face.coin) g.append(el("circle", { cx: x + w - 11 * scale, cy: y + 11 * scale, r: 6.5 * scale, class: "coin whole" }));
  return g;
}

/** Which (seat, slot) or pile each legal action names; a spot named by one action only is
 * clickable. */
function clickable(view) {
  const bySpot = new Map();
  const add = (spot, move) => bySpot.set(spot, [...(bySpot.get(spot) || []), move]);
  for (const move of view.legal) {
    const label = move.label;
    let m;
    if (label === "take") add("discard", move);
    else if (label === "draw") add("draw", move);
    else if ((m = /^(swap|discard|reveal|own) ([TB][1-6])$/.exec(label))) add(`${view.to_move}:${slotOf(m[2])}`, move);
    else if ((m = /^seat (\d+) ([TB][1-6])$/.exec(label))) add(`${m[1]}:${slotOf(m[2])}`, move);
  }
  const unique = new Map();
  for (const [spot, moves] of bySpot) if (moves.length === 1) unique.set(spot, moves[0]);
  return unique;
}

export function render(host, view, ctx) {
  const b = view.board;
  const n = b.num_players || b.layouts.length;
  const main = b.viewer ?? 0; // the seat drawn large at the bottom
  const others = [];
  for (let k = 1; k < n; k++) others.push((main + k) % n);
  const spots = ctx.interactive ? clickable(view) : new Map();

  const small = n > 2 ? 0.72 : 1;
  const gridW = (s) => 6 * (CW * s + GAP) - GAP;
  const gridH = (s) => 2 * (CH * s + GAP) - GAP;
  const width = Math.max(640, others.length * (gridW(small) + 40) + 20);
  const topH = gridH(small) + 34;
  const midY = topH + 18;
  const midH = CH + 40;
  const bottomY = midY + midH + 18;
  const height = bottomY + gridH(1) + 44;
  const svg = svgRoot(width, height, { id: "hilo-board", class: "hilo", "data-players": n });
  svg.append(el("rect", { x: 2, y: 2, width: width - 4, height: height - 4, rx: 18, class: "table-felt" }));

  const drawGrid = (seat, x0, y0, s) => {
    const seatInfo = view.seats[seat] || {};
    const current = view.status === "playing" && view.to_move === seat;
    const g = el("g", { class: `layout${current ? " current" : ""}`, "data-layout": seat });
    const w = gridW(s);
    g.append(el("rect", { x: x0 - 8, y: y0 - 24, width: w + 16, height: gridH(s) + 32, rx: 10, class: "layout-frame" }));
    const up = b.layouts[seat].filter((c) => c !== null).length;
    const coins = b.coins ? `  ·  ${b.coins[seat]} coins` : "";
    const who = seat === b.viewer ? "you" : seatInfo.agent || "";
    g.append(text(x0, y0 - 8, `seat ${seat} (${who}) · ${up}/12 face up${coins}`, { class: "layout-label" }));
    b.layouts[seat].forEach((code, slot) => {
      const x = x0 + (slot % 6) * (CW * s + GAP);
      const y = y0 + Math.floor(slot / 6) * (CH * s + GAP);
      const move = spots.get(`${seat}:${slot}`);
      const c = card(x, y, code, { "data-seat": seat, "data-slot": slot, "data-label": slotLabel(slot), "data-action": move ? move.action : null }, s);
      if (move) c.classList.add("legal");
      if (b.wizard_slot === slot && seat === view.to_move) c.classList.add("chosen");
      g.append(c);
    });
    svg.append(g);
  };

  // other seats along the top, the main seat at the bottom
  const totalTop = others.length * gridW(small) + (others.length - 1) * 40;
  others.forEach((seat, i) => drawGrid(seat, (width - totalTop) / 2 + i * (gridW(small) + 40), 30, small));
  drawGrid(main, (width - gridW(1)) / 2, bottomY + 24, 1);

  // the middle: draw pile, discard pile, the card in hand
  const cx = width / 2;
  const pileY = midY + 18;
  const draw = el("g", { id: "hilo-draw", class: "pile", "data-count": b.draw_size });
  const drawMove = spots.get("draw");
  if (drawMove) { draw.classList.add("legal"); draw.setAttribute("data-action", drawMove.action); }
  if (b.draw_size > 1) draw.append(el("rect", { x: cx - 190 + 4, y: pileY + 4, width: CW, height: CH, rx: 6, class: "card-back shadow" }));
  if (b.draw_size) draw.append(card(cx - 190, pileY, null));
  else draw.append(el("rect", { x: cx - 190, y: pileY, width: CW, height: CH, rx: 6, class: "empty-pile" }));
  draw.append(text(cx - 190 + CW / 2, pileY - 6, `draw ${b.draw_size}`, { class: "pile-label", "text-anchor": "middle" }));
  svg.append(draw);

  const top = b.discard.length ? b.discard[b.discard.length - 1] : null;
  const discard = el("g", { id: "hilo-discard", class: "pile", "data-count": b.discard.length });
  const takeMove = spots.get("discard");
  if (takeMove) { discard.classList.add("legal"); discard.setAttribute("data-action", takeMove.action); }
  if (top) discard.append(card(cx - 100, pileY, top));
  else discard.append(el("rect", { x: cx - 100, y: pileY, width: CW, height: CH, rx: 6, class: "empty-pile" }));
  discard.append(text(cx - 100 + CW / 2, pileY - 6, `discard ${b.discard.length}`, { class: "pile-label", "text-anchor": "middle" }));
  svg.append(discard);

  const heldG = el("g", { id: "hilo-held", "data-from": b.held_from ?? "", "data-hidden": b.held_hidden ? 1 : 0 });
  if (b.held_from) {
    heldG.append(card(cx + 10, pileY, b.held_hidden ? null : b.held, { "data-held": 1 }));
    heldG.append(text(cx + 10 + CW + 10, pileY + 20, `in hand of seat ${b.current_player}`, { class: "pile-label" }));
    heldG.append(text(cx + 10 + CW + 10, pileY + 36, `(${b.held_from === "draw" ? "drawn" : "taken from the discard"})`, { class: "pile-note" }));
  }
  svg.append(heldG);
  const phase = { setup: "choosing starting cards", turn: "take or draw", taken: "place the taken card", drawn: "place or discard the drawn card", phoenix: "phoenix: reveal a card", wizard: "wizard: choose your card", wizard2: "wizard: choose a card to take", end: "game over" }[b.phase] || b.phase;
  svg.append(text(cx, pileY + CH + 18, `phase: ${phase}${b.final_round && b.final_turns_left ? ` · final round, ${b.final_turns_left} turns left` : ""}`, { class: "pile-note", "text-anchor": "middle", "data-phase": b.phase }));

  svg.addEventListener("click", (event) => {
    const spot = event.target.closest(".legal[data-action]");
    if (spot) ctx.play([Number(spot.dataset.action)]);
  });
  host.replaceChildren(svg);

  // one row of buttons per verb ("swap T1 .. B6"), the others ("take", "draw") on their own
  const buttons = (ctx.interactive ? view.legal : []).map((m) => {
    const slot = /^(.*) ([TB][1-6])$/.exec(m.label);
    return { label: m.label, action: m.action, group: slot ? slot[1] : null, short: slot ? slot[2] : m.label, onClick: () => ctx.play([m.action]) };
  });
  ctx.setActions(buttons);
  ctx.setHint(ctx.interactive ? "Your move: a button below, or a highlighted card or pile." : "");
}
