// Building the page's elements: h("td", {class: "num"}, "12"). Text is always set as text,
// never as HTML, so no figure or name from the API can inject markup.

export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith("on")) element.addEventListener(name.slice(2), value);
    else if (name === "dataset") Object.assign(element.dataset, value);
    else element.setAttribute(name, value === true ? "" : String(value));
  }
  append(element, children);
  return element;
}

export function svg(tag, attributes = {}, ...children) {
  const element = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value));
  append(element, children);
  return element;
}

function append(element, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

export function errorBox(error) {
  return h("p", {class: "error", role: "alert"}, error.message || String(error));
}

// A table whose columns sort when their header is pressed. `columns`: [{key, label, num,
// value(row) for sorting, cell(row) for display}]; `rows` are plain objects.
export function sortableTable(columns, rows, {sortKey, descending = false, caption, rowClass} = {}) {
  let key = sortKey ?? columns[0].key;
  let down = descending;
  const table = h("table", {class: "grid"});
  if (caption) table.append(h("caption", {class: "muted"}, caption));
  const head = h("thead");
  const body = h("tbody");
  table.append(head, body);
  const draw = () => {
    const column = columns.find((c) => c.key === key);
    const value = column.value ?? ((row) => row[column.key]);
    const sorted = [...rows].sort((a, b) => compare(value(a), value(b)) * (down ? -1 : 1));
    head.replaceChildren(h("tr", {}, columns.map((c) => h("th", {
      "data-key": c.key,
      class: c.num ? "num" : null,
      scope: "col",
      "aria-sort": c.key === key ? (down ? "descending" : "ascending") : "none",
    }, h("button", {type: "button", class: "sort", onclick: () => {
      down = c.key === key ? !down : false;
      key = c.key;
      draw();
      head.querySelector(`th[data-key="${c.key}"] button`).focus();
    }}, c.label, c.key === key ? h("span", {class: "arrow", "aria-hidden": "true"}, down ? " ▼" : " ▲") : null)))));
    body.replaceChildren(...sorted.map((row) => h("tr", {class: rowClass ? rowClass(row) : null},
      columns.map((c) => h("td", {class: c.num ? "num" : null, dataset: {column: c.key}},
        c.cell ? c.cell(row) : row[c.key] ?? "")))));
  };
  draw();
  return table;
}

function compare(a, b) {
  if (a === b) return 0;
  if (a === null || a === undefined) return 1;
  if (b === null || b === undefined) return -1;
  return typeof a === "number" && typeof b === "number" ? a - b : String(a).localeCompare(String(b));
}
