// Small helpers for drawing the boards as inline SVG (no canvas: every pit, point and card is an
// element with data-* attributes that the page and the tests find and click).

export const SVG_NS = "http://www.w3.org/2000/svg";

/** An SVG element: el("circle", {cx: 1, r: 2, class: "pit"}, child, "text", ...). */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

/** A text element. */
export function text(x, y, content, attrs = {}) {
  return el("text", { x, y, ...attrs }, String(content));
}

/** The <svg> root with a viewBox; it scales to its container's width. */
export function svgRoot(width, height, attrs = {}) {
  return el("svg", {
    viewBox: `0 0 ${width} ${height}`,
    width: "100%",
    preserveAspectRatio: "xMidYMid meet",
    // a group, not an image: a screen reader then reaches the pits and points that play
    // (role "button", each with its label) instead of reading the board as one picture
    role: "group",
    "aria-label": "the board",
    ...attrs,
  });
}

/** Stones in a pit (circle of radius r at cx, cy): up to `limit` small dots on a sunflower
 * spiral; the count itself is drawn by the caller as a number. */
export function stones(cx, cy, r, count, limit = 24) {
  const shown = Math.min(count, limit);
  const dots = [];
  if (shown <= 0) return dots;
  const size = shown <= 4 ? r * 0.26 : shown <= 9 ? r * 0.2 : shown <= 16 ? r * 0.16 : r * 0.13;
  const spread = shown === 1 ? 0 : r - size - 3;
  const golden = Math.PI * (3 - Math.sqrt(5));
  for (let k = 0; k < shown; k++) {
    const rad = spread * Math.sqrt((k + 0.5) / shown);
    const angle = k * golden + 0.6;
    const hue = [0, 1, 2][k % 3];
    dots.push(el("circle", {
      cx: (cx + rad * Math.cos(angle)).toFixed(1),
      cy: (cy + rad * Math.sin(angle)).toFixed(1),
      r: size.toFixed(1),
      class: `stone stone-${hue}`,
    }));
  }
  return dots;
}

/** Call `fn(element)` when an element matching `selector` inside `svg` is clicked, or focused
 * and Enter or Space is pressed (so the board plays by keyboard as by mouse). */
export function onActivate(svg, selector, fn) {
  svg.addEventListener("click", (event) => {
    const target = event.target.closest(selector);
    if (target) fn(target);
  });
  svg.addEventListener("keydown", (event) => {
    const target = event.target.closest?.(selector);
    if (target && (event.key === "Enter" || event.key === " ")) {
      event.preventDefault(); // Space would scroll the page
      fn(target);
    }
  });
}

/** Replace the contents of `host` with `node`. */
export function mount(host, node) {
  host.replaceChildren(node);
  return node;
}
