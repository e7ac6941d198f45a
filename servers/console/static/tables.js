// Tables: every registered table with its partitions, rows, bytes, last collection and
// staleness, which statistics engines are served, and its Hive database; search and sort.
// One request: GET /tables?summary=true.

import {call} from "./api.js";
import {h, sortableTable} from "./dom.js";
import {bytes, count, since, time} from "./format.js";

export async function tablesPage(main, route) {
  const answer = await call("/tables", {params: [["summary", "true"]]});
  const tables = answer.tables.map(flatten);
  const search = h("input", {id: "table-search", type: "search", placeholder: "name or database",
    value: route.params.get("q") ?? ""});
  const holder = h("div", {class: "scroll"});
  const draw = () => {
    const words = search.value.trim().toLowerCase().split(/\s+/).filter(Boolean);
    const shown = tables.filter((t) => words.every((w) => `${t.name} ${t.database}`.toLowerCase().includes(w)));
    holder.replaceChildren(shown.length === 0
      ? h("p", {class: "muted"}, tables.length === 0
        ? "No table is registered yet: `statlas table register NAME --path DIR`."
        : "No table matches.")
      : sortableTable(COLUMNS, shown, {caption: `${shown.length} of ${tables.length} tables`}));
  };
  search.addEventListener("input", () => {
    draw();
    const params = new URLSearchParams(search.value ? {q: search.value} : {});
    history.replaceState(null, "", `#/tables${params.size ? `?${params}` : ""}`);
  });
  draw();
  main.replaceChildren(
    h("h1", {}, "Tables"),
    h("div", {class: "toolbar"}, h("div", {}, h("label", {for: "table-search"}, "Search tables"), search)),
    holder,
  );
}

function flatten(table) {
  const summary = table.summary ?? {};
  return {...summary, name: table.name, format: table.format, partitions: table.partitions,
    keys: table.partition_keys.map((k) => k.name).join(", ")};
}

const COLUMNS = [
  {key: "name", label: "Table", cell: (t) => h("a", {href: `#/table/${encodeURIComponent(t.name)}`}, t.name)},
  {key: "database", label: "Database"},
  {key: "keys", label: "Partition keys"},
  {key: "partitions", label: "Partitions", num: true, cell: (t) => count(t.partitions)},
  {key: "rows", label: "Rows", num: true, cell: (t) => count(t.rows)},
  {key: "bytes", label: "Bytes", num: true, cell: (t) => h("span", {title: `${count(t.bytes)} bytes`}, bytes(t.bytes))},
  {key: "files", label: "Files", num: true, cell: (t) => count(t.files)},
  {key: "last_collection", label: "Last collection",
    cell: (t) => h("span", {title: time(t.last_collection)}, since(t.last_collection))},
  {key: "stale_partitions", label: "Stale partitions", num: true, cell: staleCell},
  {key: "statistics_served", label: "Statistics served to engines"},
];

function staleCell(t) {
  const stale = t.stale_partitions;
  if (stale === undefined || stale === null) return "–";
  return h("span", {class: `badge ${stale > 0 ? "stale" : "fresh"}`,
    title: "partitions added or changed since their statistics were collected"}, count(stale));
}
