// The console's frame: the address (#/tables, #/table/NAME, #/runs, #/plans) picks the
// page; a request the daemon refuses for want of its token opens the token dialog.

import {call, whenTokenWanted} from "./api.js";
import {errorBox, h} from "./dom.js";
import {plansPage} from "./plans.js";
import {runsPage} from "./runs.js";
import {tablePage} from "./table.js";
import {tablesPage} from "./tables.js";

const PAGES = {tables: tablesPage, table: tablePage, runs: runsPage, plans: plansPage};
const TITLES = {tables: "Tables", table: "Table", runs: "Runs and schedules", plans: "Plans"};
let shown = 0; // the latest page asked for: an older one finishing late is not drawn

function route() {
  const hash = window.location.hash.replace(/^#\/?/, "");
  const [path, query = ""] = hash.split("?", 2);
  const [page, ...rest] = path.split("/");
  const name = PAGES[page] ? page : "tables";
  return {page: name, rest: decodeURIComponent(rest.join("/")), params: new URLSearchParams(query)};
}

async function render() {
  const current = route();
  const ticket = ++shown;
  const main = document.getElementById("main");
  for (const link of document.querySelectorAll("nav a[data-page]")) {
    const here = link.dataset.page === current.page || (current.page === "table" && link.dataset.page === "tables");
    if (here) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  document.title = `${current.rest || TITLES[current.page]} · statlas`;
  // each page draws into a view of its own: a page left before its requests finish
  // draws into a view no longer shown
  const view = h("div", {class: "view"});
  main.replaceChildren(view);
  main.setAttribute("aria-busy", "true");
  try {
    await PAGES[current.page](view, current);
  } catch (error) {
    view.replaceChildren(h("h1", {}, current.rest || TITLES[current.page]), errorBox(error));
  }
  if (ticket !== shown) return;
  main.setAttribute("aria-busy", "false");
  main.dataset.page = current.page;
  performance.mark("statlas:drawn", {detail: current.page}); // benchmarks/console.py reads it
}

function askForToken(why) {
  const dialog = document.getElementById("token-dialog");
  const input = document.getElementById("token-input");
  if (why) document.getElementById("token-why").textContent = why;
  input.value = "";
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => {
      resolve(dialog.returnValue === "send" && input.value ? input.value : null);
    }, {once: true});
    dialog.showModal();
    input.focus();
  });
}

async function showHealth() {
  const status = document.getElementById("daemon-status");
  try {
    const health = await call("/health");
    status.textContent = `daemon ${health.status}, database ${health.database}`;
  } catch (error) {
    status.textContent = `daemon unreachable: ${error.message}`;
  }
}

whenTokenWanted(askForToken);
window.addEventListener("hashchange", render);
showHealth();
render();
