// Runs and schedules: collection runs with status, duration, rows, partitions scanned and
// the error of a failed one (GET /runs); the schedules with their next run (GET
// /schedules); this daemon's part in running them (GET /scheduler: whether it leads) and
// every daemon of the metastore, which one leads and which fell silent (GET /daemons).

import {ApiError, call} from "./api.js";
import {errorBox, h, sortableTable} from "./dom.js";
import {count, duration, time} from "./format.js";

export async function runsPage(main, route) {
  const table = route.params.get("table");
  const params = [["limit", "200"]];
  if (table) params.push(["table", table]);
  const [runs, schedules, scheduler, daemons] = await Promise.all([
    call("/runs", {params}),
    optional(call("/schedules")),
    optional(call("/scheduler")),
    optional(call("/daemons")),
  ]);
  main.replaceChildren(
    h("h1", {}, table ? `Runs of ${table}` : "Runs and schedules"),
    h("section", {"aria-labelledby": "scheduler-title"}, h("h2", {id: "scheduler-title"}, "Scheduler"),
      schedulerFacts(scheduler)),
    h("section", {"aria-labelledby": "daemons-title"}, h("h2", {id: "daemons-title"}, "Daemons"),
      daemonsTable(daemons, scheduler)),
    h("section", {"aria-labelledby": "schedules-title"}, h("h2", {id: "schedules-title"}, "Schedules"),
      schedulesTable(schedules)),
    h("section", {"aria-labelledby": "runs-title"}, h("h2", {id: "runs-title"}, "Collection runs"),
      runs.runs.length ? h("div", {class: "scroll", id: "runs"}, sortableTable(RUN_COLUMNS, runs.runs,
        {sortKey: "started", descending: true, rowClass: (r) => r.status, caption: `the latest ${runs.runs.length}`}))
        : h("p", {class: "muted"}, "No collection has run yet.")),
  );
}

async function optional(request) {
  // /schedules and /scheduler are the daemon's: an API served without it has neither
  try {
    return await request;
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return null;
    return error;
  }
}

function schedulerFacts(scheduler) {
  if (scheduler === null) return h("p", {class: "muted"}, "This server runs no scheduler (not a daemon).");
  if (scheduler instanceof Error) return errorBox(scheduler);
  const role = scheduler.leader ? "leader: runs the schedules" : "standby: another daemon on this metastore leads";
  return h("dl", {class: "facts", id: "scheduler"},
    h("dt", {}, "This daemon"), h("dd", {}, scheduler.node),
    h("dt", {}, "Role"), h("dd", {"data-figure": "leader"}, h("span", {class: `badge ${scheduler.leader ? "succeeded" : "running"}`}, role)),
    h("dt", {}, "Leading since"), h("dd", {}, time(scheduler.leader_since)),
    h("dt", {}, "Running now"), h("dd", {}, scheduler.running.length ? scheduler.running.join(", ") : "nothing"));
}

function daemonsTable(daemons, scheduler) {
  if (daemons === null) return h("p", {class: "muted"}, "This server lists no daemons.");
  if (daemons instanceof Error) return errorBox(daemons);
  if (!daemons.daemons.length) return h("p", {class: "muted"}, "No daemon has served this metastore in the last day.");
  const me = scheduler && !(scheduler instanceof Error) ? scheduler.node : null;
  return h("div", {class: "scroll", id: "daemons"}, sortableTable([
    {key: "node", label: "Daemon", cell: (d) => (d.node === me ? `${d.node} (this one)` : d.node)},
    {key: "state", label: "State", cell: (d) => h("span", {class: `badge ${STATE_BADGE[d.state]}`}, d.state)},
    {key: "leader", label: "Role", value: (d) => (d.leader ? 0 : 1),
      cell: (d) => (d.leader ? "leader" : d.state === "serving" ? "standby" : "")},
    {key: "leader_since", label: "Leading since", cell: (d) => (d.leader ? time(d.leader_since) : "")},
    {key: "url", label: "HTTP", cell: (d) => d.url},
    {key: "thrift_port", label: "Thrift port", num: true, cell: (d) => d.thrift_port ?? "off"},
    {key: "started", label: "Started", cell: (d) => time(d.started)},
    {key: "heartbeat", label: "Last heartbeat", cell: (d) => time(d.heartbeat)},
    {key: "version", label: "Version"},
  ], daemons.daemons, {sortKey: "leader", rowClass: (d) => d.state,
    caption: `heartbeats every ${daemons.heartbeat_seconds} s; silent after ${daemons.silent_after_seconds} s without one`}));
}

const STATE_BADGE = {serving: "succeeded", silent: "failed", stopped: "running"};

function schedulesTable(schedules) {
  if (schedules === null) return h("p", {class: "muted"}, "No schedules are served here.");
  if (schedules instanceof Error) return errorBox(schedules);
  if (!schedules.length) return h("p", {class: "muted"}, "No schedule: `statlas schedule add TABLE --every 1h`.");
  return h("div", {id: "schedules"}, sortableTable([
    {key: "table", label: "Table", cell: (s) => h("a", {href: `#/table/${encodeURIComponent(s.table)}`}, s.table)},
    {key: "when", label: "When", value: (s) => s.cron ?? s.every, cell: (s) => s.cron ? `cron ${s.cron}` : `every ${s.every}`},
    {key: "next_run", label: "Next run", cell: (s) => s.next_run ? time(s.next_run) : "paused"},
  ], schedules, {sortKey: "next_run"}));
}

const RUN_COLUMNS = [
  {key: "id", label: "Run", num: true},
  {key: "table", label: "Table", cell: (r) => h("a", {href: `#/table/${encodeURIComponent(r.table)}`}, r.table)},
  {key: "status", label: "Status", cell: (r) => h("span", {class: `badge ${r.status}`}, r.status)},
  {key: "started", label: "Started", cell: (r) => time(r.started)},
  {key: "duration", label: "Duration", num: true,
    value: (r) => (r.finished ? Date.parse(r.finished) - Date.parse(r.started) : null),
    cell: (r) => (r.finished ? duration(r.started, r.finished) : "running")},
  {key: "rows", label: "Rows", num: true, cell: (r) => count(r.rows)},
  {key: "partitions_scanned", label: "Scanned", num: true, cell: (r) => count(r.partitions_scanned)},
  {key: "partitions_skipped", label: "Unchanged", num: true, cell: (r) => count(r.partitions_skipped)},
  {key: "partitions_removed", label: "Removed", num: true, cell: (r) => count(r.partitions_removed)},
  {key: "error", label: "Error", cell: (r) => (r.error ? h("span", {class: "error-text"}, r.error) : "")},
];
