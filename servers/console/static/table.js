// A table: its columns' statistics (nulls, NDV and its source, min/max, lengths, the
// histogram drawn, most common values), for the whole table or for the partitions a
// selection picks (per-key IN lists and a condition on keys: the merged statistics of
// exactly those partitions), and its partitions, paged from the server.
//
// Requests: GET /tables/{name}; POST /tables/{name}/statistics {in, where, buckets};
// GET /tables/{name}/partitions/page?offset&limit&in&where. The page's state lives in the
// address (#/table/NAME?in.dt=...&where=...&buckets=...&kind=...&offset=...&limit=...).

import {call} from "./api.js";
import {histogram} from "./chart.js";
import {errorBox, h} from "./dom.js";
import {bytes, count, number, time, value as show} from "./format.js";

const PAGE_SIZES = [25, 50, 100, 250];
const KINDS = {equi_depth: "equi-depth", equi_width: "equi-width"};

export async function tablePage(main, route) {
  const name = route.rest;
  const state = stateOf(route.params);
  // the three requests at once: the statistics and the first page need only the name and
  // the selection, not the table's description
  const described = call(`/tables/${encodeURIComponent(name)}`);
  const firstStatistics = askStatistics(name, state);
  const firstPage = askPartitions(name, state);
  for (const pending of [firstStatistics, firstPage]) pending.catch(() => null);
  const table = await described;
  const statistics = h("section", {id: "statistics", "aria-labelledby": "statistics-title"});
  const partitions = h("section", {id: "partitions", "aria-labelledby": "partitions-title"});
  const remember = () => history.replaceState(null, "", `#/table/${encodeURIComponent(table.name)}?${paramsOf(state)}`);
  const loadStatistics = (answer = askStatistics(table.name, state)) =>
    showStatistics(statistics, table, state, answer);
  const loadPartitions = (answer = askPartitions(table.name, state)) =>
    showPartitions(partitions, table, state, answer, () => {
      remember();
      loadPartitions();
    });
  main.replaceChildren(
    h("h1", {}, table.name),
    facts(table),
    selectionForm(table, state, () => {
      state.offset = 0;
      remember();
      loadStatistics();
      loadPartitions();
    }),
    statistics,
    partitions,
  );
  await Promise.all([loadStatistics(firstStatistics), loadPartitions(firstPage)]);
}

function stateOf(params) {
  const lists = {};
  for (const [name, text] of params) {
    if (name.startsWith("in.") && text) lists[name.slice(3)] = text;
  }
  const positive = (text, fallback) => {
    const n = Number.parseInt(text ?? "", 10);
    return Number.isFinite(n) && n > 0 ? n : fallback;
  };
  return {
    lists,
    where: params.get("where") ?? "",
    buckets: positive(params.get("buckets"), 16),
    kind: KINDS[params.get("kind")] ? params.get("kind") : "equi_depth",
    offset: Math.max(0, Number.parseInt(params.get("offset") ?? "0", 10) || 0),
    limit: positive(params.get("limit"), 50),
  };
}

function askStatistics(name, state) {
  const body = {buckets: state.buckets};
  if (Object.keys(state.lists).length) {
    body.in = Object.fromEntries(Object.entries(state.lists).map(([k, t]) => [k, values(t)]));
  }
  if (state.where) body.where = state.where;
  return call(`/tables/${encodeURIComponent(name)}/statistics`, {method: "POST", body});
}

function askPartitions(name, state) {
  const params = [["offset", state.offset], ["limit", state.limit]];
  for (const [key, text] of Object.entries(state.lists)) params.push(["in", `${key}=${values(text).join(",")}`]);
  if (state.where) params.push(["where", state.where]);
  return call(`/tables/${encodeURIComponent(name)}/partitions/page`, {params});
}

function paramsOf(state) {
  const params = new URLSearchParams();
  for (const [key, text] of Object.entries(state.lists)) params.set(`in.${key}`, text);
  if (state.where) params.set("where", state.where);
  params.set("buckets", state.buckets);
  params.set("kind", state.kind);
  if (state.offset) params.set("offset", state.offset);
  if (state.limit !== 50) params.set("limit", state.limit);
  return params;
}

function values(text) {
  return text.split(",").map((v) => v.trim()).filter((v) => v.length > 0);
}

function selected(state) {
  return Object.keys(state.lists).length > 0 || state.where.trim() !== "";
}

function facts(table) {
  const keys = table.partition_keys.map((k) => `${k.name} ${k.type}`).join(", ") || "none";
  const rows = [
    ["Location", table.location],
    ["Format", table.format],
    ["Partition keys", keys],
    ["Partitions", count(table.partitions)],
  ];
  if (table.bucketing) {
    rows.push(["Bucketing", `${table.bucketing.num_buckets} buckets by ${table.bucketing.columns.join(", ")}`]);
  }
  return h("dl", {class: "facts"}, rows.map(([term, text]) => [h("dt", {}, term), h("dd", {}, text)]));
}

function selectionForm(table, state, apply) {
  const inputs = table.partition_keys.map((key) => {
    const id = `in-${key.name}`;
    return h("div", {}, h("label", {for: id}, `${key.name} in (comma-separated)`),
      h("input", {id, name: key.name, class: "in-list", "data-key": key.name, size: 22,
        value: state.lists[key.name] ?? "", placeholder: key.type}));
  });
  const where = h("input", {id: "where", size: 40, value: state.where,
    placeholder: table.partition_keys.length ? `${table.partition_keys[0].name} BETWEEN … AND …` : ""});
  const buckets = h("input", {id: "buckets", type: "number", min: 1, max: 10000, value: state.buckets, class: "narrow"});
  const kind = h("select", {id: "kind"}, Object.entries(KINDS).map(([k, label]) =>
    h("option", {value: k, selected: k === state.kind}, label)));
  const form = h("form", {class: "toolbar", id: "selection", "aria-label": "Partition selection"},
    table.partition_keys.length ? inputs : null,
    table.partition_keys.length ? h("div", {}, h("label", {for: "where"}, "where (condition on keys)"), where) : null,
    h("div", {}, h("label", {for: "buckets"}, "Buckets"), buckets),
    h("div", {}, h("label", {for: "kind"}, "Histogram"), kind),
    h("button", {type: "submit"}, "Apply"),
    h("button", {type: "button", class: "secondary", onclick: () => {
      for (const input of form.querySelectorAll("input.in-list")) input.value = "";
      where.value = "";
      form.requestSubmit();
    }}, "Whole table"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    state.lists = {};
    for (const input of form.querySelectorAll("input.in-list")) {
      if (input.value.trim()) state.lists[input.dataset.key] = input.value.trim();
    }
    state.where = where.value.trim();
    state.buckets = Math.min(10000, Math.max(1, Number.parseInt(buckets.value, 10) || 16));
    state.kind = kind.value;
    apply();
  });
  return form;
}

async function showStatistics(section, table, state, answer) {
  section.setAttribute("aria-busy", "true");
  const title = h("h2", {id: "statistics-title"}, "Columns");
  section.replaceChildren(title, h("p", {class: "loading"}, "Merging statistics…"));
  try {
    const stats = await answer;
    const what = selected(state) ? "the selected partitions" : "the whole table";
    section.replaceChildren(title,
      h("p", {class: "summary-line", id: "statistics-summary"},
        `Merged statistics of ${what}: `,
        h("strong", {"data-figure": "partitions"}, count(stats.partitions)), " partitions with statistics, ",
        h("strong", {"data-figure": "row_count"}, count(stats.row_count)), " rows. ",
        h("span", {class: "muted"}, `Served to engines: ${stats.served_to_engines ?? "none"}.`)),
      columnsTable(table, stats),
      h("h2", {}, `Distributions (${KINDS[state.kind]}, ${state.buckets} buckets)`),
      h("div", {class: "cards"}, Object.entries(stats.columns).map(([name, column]) =>
        columnCard(name, column, state.kind))));
  } catch (error) {
    section.replaceChildren(title, errorBox(error));
  } finally {
    section.removeAttribute("aria-busy");
  }
}

function columnsTable(table, stats) {
  const header = ["Column", "Type", "Nulls", "NDV", "NDV source", "Min", "Max", "Avg length", "Max length", "Collected in"];
  const numeric = new Set(["Nulls", "NDV", "Avg length", "Max length"]);
  return h("div", {class: "scroll"}, h("table", {class: "grid", id: "columns"},
    h("thead", {}, h("tr", {}, header.map((t) => h("th", {scope: "col", class: numeric.has(t) ? "num" : null}, t)))),
    h("tbody", {}, Object.entries(stats.columns).map(([name, c]) => h("tr", {"data-column": name},
      h("th", {scope: "row"}, h("a", {href: `#column-${name}`}, name)),
      h("td", {}, c.type),
      h("td", {class: "num", "data-figure": "null_count"}, count(c.null_count)),
      h("td", {class: "num", "data-figure": "ndv"}, count(c.ndv)),
      h("td", {}, c.ndv_source ?? "–"),
      h("td", {"data-figure": "min"}, c.min === null ? "–" : show(c.min)),
      h("td", {"data-figure": "max"}, c.max === null ? "–" : show(c.max)),
      h("td", {class: "num", "data-figure": "avg_len"}, c.avg_len === null ? "–" : number(c.avg_len)),
      h("td", {class: "num", "data-figure": "max_len"}, c.max_len === null ? "–" : count(c.max_len)),
      h("td", {}, `${count(c.collected_partitions)} of ${count(c.collected_partitions + c.absent_partitions)} partitions`))))));
}

function columnCard(name, column, kind) {
  const figures = column[kind] ?? column.uniform;
  const chart = figures && figures.counts.length
    ? histogram(figures, `${KINDS[kind]} histogram of ${name}`)
    : h("p", {class: "muted"}, column.mcv.length ? "No histogram: the most common values hold the distribution." : "No histogram.");
  const common = column.mcv.length ? h("details", {open: !figures}, h("summary", {}, `${column.mcv.length} most common values`),
    h("table", {class: "mini mcv"}, h("tbody", {}, column.mcv.map(([v, c]) => h("tr", {},
      h("td", {}, show(v)), h("td", {class: "num", "data-count": c}, count(c))))))) : null;
  return h("article", {class: "card", id: `column-${name}`, "data-column": name, "aria-label": `column ${name}`},
    h("h3", {}, name, " ", h("span", {class: "muted"}, column.type)),
    h("div", {class: "sub"}, `NDV ${count(column.ndv)} (${column.ndv_source ?? "unknown"}), nulls ${count(column.null_count)}`),
    chart, common);
}

async function showPartitions(section, table, state, asked, page) {
  const title = h("h2", {id: "partitions-title"}, "Partitions");
  if (!table.partition_keys.length) {
    section.replaceChildren(title, h("p", {class: "muted"}, "Not partitioned."));
    return;
  }
  section.setAttribute("aria-busy", "true");
  try {
    const answer = await asked;
    const first = answer.partitions.length ? answer.offset + 1 : 0;
    const last = answer.offset + answer.partitions.length;
    const size = h("select", {id: "page-size", onchange: () => {
      state.limit = Number(size.value);
      state.offset = 0;
      page();
    }}, PAGE_SIZES.map((n) => h("option", {value: n, selected: n === state.limit}, n)));
    const pager = h("div", {class: "pager"},
      h("button", {type: "button", class: "secondary", id: "previous-page", disabled: answer.offset === 0,
        onclick: () => { state.offset = Math.max(0, state.offset - state.limit); page(); }}, "← Previous"),
      h("span", {id: "page-position"}, `${count(first)}–${count(last)} of ${count(answer.total)}`),
      h("button", {type: "button", class: "secondary", id: "next-page", disabled: last >= answer.total,
        onclick: () => { state.offset += state.limit; page(); }}, "Next →"),
      h("label", {for: "page-size", class: "inline"}, "Per page"), size);
    const keys = answer.keys;
    section.replaceChildren(title, pager, h("div", {class: "scroll"}, h("table", {class: "grid", id: "partition-list"},
      h("thead", {}, h("tr", {},
        keys.map((k) => h("th", {scope: "col"}, k)),
        ["Rows", "Files", "Bytes"].map((t) => h("th", {scope: "col", class: "num"}, t)),
        ["Modified", "Statistics of", "State"].map((t) => h("th", {scope: "col"}, t)))),
      h("tbody", {}, answer.partitions.map((p) => h("tr", {"data-name": p.name},
        keys.map((k, i) => h("td", {}, show(Array.isArray(p.values) ? p.values[i] : p.values[k]))),
        h("td", {class: "num", "data-figure": "rows"}, count(p.rows)),
        h("td", {class: "num", "data-figure": "files"}, count(p.files)),
        h("td", {class: "num", "data-figure": "bytes", title: `${count(p.bytes)} bytes`}, bytes(p.bytes)),
        h("td", {}, time(p.modified)),
        h("td", {}, time(p.collected)),
        h("td", {}, h("span", {class: `badge ${p.stale ? "stale" : "fresh"}`}, p.rows === null ? "not collected" : p.stale ? "stale" : "current"))))))));
  } catch (error) {
    section.replaceChildren(title, errorBox(error));
  } finally {
    section.removeAttribute("aria-busy");
  }
}
