// Plans: SQL in, the estimated physical plan out as a tree (per node the rows, where the
// figure comes from and how precise it is, the join algorithm and the shuffles), the
// plan's totals and the query as Spark SQL with join hints; a second query, or the same
// at another estimation level, side by side. One POST /explain per side.

import {call} from "./api.js";
import {errorBox, h} from "./dom.js";
import {count, number, rows as showRows} from "./format.js";

const LEVELS = ["sketch", "sketch-independent", "histogram", "basic"];
const EXAMPLE = "SELECT COUNT(*) FROM sales WHERE dt >= '2024-03-01'";

export async function plansPage(main, route) {
  const sides = ["a", "b"].map((side) => ({
    side,
    sql: route.params.get(`sql.${side}`) ?? (side === "a" ? "" : ""),
    level: route.params.get(`level.${side}`) ?? "sketch",
  }));
  const compare = h("input", {type: "checkbox", id: "compare", checked: route.params.has("sql.b") || route.params.has("level.b")});
  const editors = sides.map((s) => editor(s));
  const results = h("div", {class: "split", id: "plan-results", "aria-live": "polite"});
  const layout = () => {
    editors[1].hidden = !compare.checked;
    for (const holder of [editorsRow, results]) holder.classList.toggle("two", compare.checked);
  };
  const editorsRow = h("div", {class: "split"}, editors);
  compare.addEventListener("change", layout);
  const form = h("form", {id: "plan-form", "aria-label": "Queries to plan"},
    editorsRow,
    h("div", {class: "toolbar"},
      h("div", {class: "check"}, compare,
        h("label", {for: "compare"}, "Compare with a second query or level")),
      h("button", {type: "submit", id: "explain"}, "Plan")));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const chosen = compare.checked ? sides : sides.slice(0, 1);
    for (const s of chosen) {
      s.sql = form.querySelector(`#sql-${s.side}`).value;
      s.level = form.querySelector(`#level-${s.side}`).value;
    }
    if (compare.checked && !sides[1].sql.trim()) sides[1].sql = sides[0].sql;
    const params = new URLSearchParams();
    for (const s of chosen) {
      params.set(`sql.${s.side}`, s.sql);
      params.set(`level.${s.side}`, s.level);
    }
    history.replaceState(null, "", `#/plans?${params}`);
    await show(results, chosen);
  });
  layout();
  main.replaceChildren(h("h1", {}, "Plans"), form, results);
  if (sides[0].sql.trim()) await show(results, compare.checked ? sides : sides.slice(0, 1));
}

function editor(s) {
  return h("div", {class: "query", "data-side": s.side},
    h("label", {for: `sql-${s.side}`}, s.side === "a" ? "Query" : "Second query (empty: the same query)"),
    h("textarea", {id: `sql-${s.side}`, spellcheck: "false", placeholder: EXAMPLE}, s.sql),
    h("div", {}, h("label", {for: `level-${s.side}`}, "Estimation level"),
      h("select", {id: `level-${s.side}`}, LEVELS.map((l) => h("option", {value: l, selected: l === s.level}, l)))));
}

async function show(results, sides) {
  results.setAttribute("aria-busy", "true");
  results.replaceChildren(...sides.map(() => h("p", {class: "loading"}, "Planning…")));
  const answers = await Promise.all(sides.map((s) =>
    call("/explain", {method: "POST", body: {sql: s.sql, level: s.level, emit: "spark"}}).catch((e) => e)));
  results.replaceChildren(...answers.map((answer, i) => h("section", {class: "plan", "data-side": sides[i].side,
    "aria-label": `plan ${sides[i].side === "a" ? "of the query" : "of the second query"}`},
    answer instanceof Error ? errorBox(answer) : plan(answer))));
  results.removeAttribute("aria-busy");
}

function plan(answer) {
  return h("div", {},
    h("p", {class: "summary-line"},
      h("strong", {"data-figure": "rows"}, showRows(answer.plan.rows)), " rows estimated at level ",
      h("strong", {"data-figure": "level"}, answer.level), "; ",
      `jobs ${answer.jobs.before} → ${answer.jobs.after}, shuffles ${answer.shuffles.before} → ${answer.shuffles.after} `,
      "(before → after shuffle elimination); cost ", h("span", {"data-figure": "cost"}, number(answer.cost.total))),
    h("ul", {class: "plan-tree", role: "tree", "aria-label": "plan"}, node(answer.plan)),
    answer.spark_sql ? [h("h3", {}, "As Spark SQL, with join hints"), h("pre", {class: "sql", id: "spark-sql"}, answer.spark_sql)] : null);
}

function node(n) {
  const inputs = (n.inputs ?? []).map((input, i) => {
    const parts = [];
    if (input.shuffle) parts.push(input.removed ? `shuffle removed (${input.removed})` : input.shuffle);
    if (input.broadcast) parts.push("broadcast");
    return parts.length ? h("div", {class: "input"}, `input ${i + 1}: ${parts.join(", ")}`) : null;
  });
  return h("li", {role: "treeitem", "aria-expanded": n.children.length ? "true" : null},
    h("div", {class: `node precision-${n.precision ?? "unknown"}`, "data-op": n.op},
      h("span", {class: "op"}, n.op), n.algorithm ? h("span", {class: "algorithm"}, ` ${n.algorithm}`) : null,
      n.streamed ? h("span", {class: "muted"}, ` (streams the ${n.streamed} side)`) : null,
      n.detail ? h("div", {class: "detail"}, n.detail) : null,
      h("div", {class: "figures"},
        "rows ", h("span", {"data-figure": "rows"}, showRows(n.rows)),
        n.source ? [" · ", h("span", {"data-figure": "source"}, n.source)] : null,
        n.precision ? [" · ", h("span", {"data-figure": "precision"}, n.precision)] : null,
        ` · ${count(n.size)} bytes · job ${n.job}`),
      n.reason ? h("div", {class: "figures"}, n.reason) : null,
      n.skew_values ? h("div", {class: "figures"}, `skewed keys: ${n.skew_values.join(", ")}`) : null,
      inputs),
    n.children.length ? h("ul", {role: "group"}, n.children.map(node)) : null);
}
