// A histogram drawn as SVG. Buckets [bounds[i], bounds[i+1]) hold counts[i] rows. Where the
// bounds are numbers (or dates) each bar spans its bucket's width and its height is the
// bucket's density (rows per unit), so an equi-depth histogram's narrow, full buckets stand
// tall, as the distribution does; other bounds get bars of equal width, height the count.
// The figures are also given as a table (for reading them exactly, and for screen readers).

import {h, svg} from "./dom.js";
import {number, value as show} from "./format.js";

const WIDTH = 400;
const HEIGHT = 150;
const BASE = 130;

export function histogram(figures, label) {
  const {bounds, counts} = figures;
  const positions = bounds.map(position);
  const scaled = positions.every((p) => p !== null) && positions[positions.length - 1] > positions[0];
  const span = scaled ? positions[positions.length - 1] - positions[0] : counts.length;
  const x = (i) => 4 + (WIDTH - 8) * (scaled ? (positions[i] - positions[0]) / span : i / counts.length);
  const heights = counts.map((c, i) => {
    const width = scaled ? positions[i + 1] - positions[i] : 1;
    return width > 0 ? c / width : c;
  });
  const tallest = Math.max(...heights, 0) || 1;
  const chart = svg("svg", {class: "histogram", viewBox: `0 0 ${WIDTH} ${HEIGHT}`, role: "img",
    "aria-label": label, preserveAspectRatio: "none"});
  chart.append(svg("line", {class: "axis", x1: 0, x2: WIDTH, y1: BASE, y2: BASE}));
  counts.forEach((c, i) => {
    const left = x(i);
    const barWidth = Math.max(1, x(i + 1) - left - (counts.length > 60 ? 0 : 1));
    const height = (BASE - 4) * (heights[i] / tallest);
    const bar = svg("rect", {class: "bar", x: left, y: BASE - height, width: barWidth,
      height: Math.max(height, c > 0 ? 1 : 0), "data-count": c});
    bar.append(svg("title", {}, `${bucketText(bounds, i)}: ${number(c)} rows`));
    chart.append(bar);
  });
  chart.append(svg("text", {x: 2, y: HEIGHT - 4}, show(bounds[0])));
  chart.append(svg("text", {x: WIDTH - 2, y: HEIGHT - 4, "text-anchor": "end"},
    show(bounds[bounds.length - 1])));
  return h("figure", {class: "chart"}, chart, bucketTable(figures));
}

function bucketTable({bounds, counts}) {
  return h("details", {}, h("summary", {}, `${counts.length} buckets`),
    h("table", {class: "mini buckets"},
      h("thead", {}, h("tr", {}, h("th", {scope: "col"}, "bucket"), h("th", {scope: "col", class: "num"}, "rows"))),
      h("tbody", {}, counts.map((c, i) => h("tr", {},
        h("td", {}, bucketText(bounds, i)), h("td", {class: "num", "data-count": c}, number(c)))))));
}

function bucketText(bounds, i) {
  const close = i === bounds.length - 2 ? "]" : ")";
  return `[${show(bounds[i])}, ${show(bounds[i + 1])}${close}`;
}

function position(bound) {
  if (typeof bound === "number") return bound;
  if (typeof bound === "string" && /^\d{4}-\d\d-\d\d/.test(bound)) {
    const time = Date.parse(bound.length === 10 ? `${bound}T00:00:00Z` : bound.replace(" ", "T"));
    return Number.isNaN(time) ? null : time;
  }
  return null;
}
