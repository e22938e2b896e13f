// The table page: filters, sorting and pages of judge runs (or of a dataset's trajectories),
// asked from /api/runs; the page's state lives in its query string.
"use strict";

const FILTER_NAMES = ["mode", "turns", "model", "domain", "subdomain", "label", "verdict", "tag"];
const PAGE = 100;
const JUDGE_COLUMNS = [
  ["", null], ["trajectory_id", "Trajectory"], ["config", "Configuration"], ["run", "Run"],
  ["domain", "Domain"], ["subdomain", "Subdomain"], ["label", "Label"], ["verdict", "Verdict"],
  ["confidence", "Conf."], ["tag", "Error tag"], ["tokens", "Tokens"], ["cost_usd", "Cost"], ["seconds", "Time"],
];
const DATASET_COLUMNS = [
  ["trajectory_id", "Trajectory"], ["task_id", "Task"], ["domain", "Domain"], ["subdomain", "Subdomain"],
  ["agent", "Agent"], ["label", "Label"], ["steps", "Steps"],
];
let info = null;
const state = new URLSearchParams(location.search);
const selected = new Set();

function columns() { return info.kind === "results" ? JUDGE_COLUMNS : DATASET_COLUMNS; }

function setState(name, value) {
  if (value === "" || value === null || value === false) state.delete(name); else state.set(name, value);
  if (name !== "offset") state.delete("offset");
  history.replaceState(null, "", "?" + state.toString());
  load();
}

function buildFilters() {
  const form = document.getElementById("filters");
  form.replaceChildren();
  const names = info.kind === "results" ? FILTER_NAMES : ["domain", "subdomain", "label"];
  for (const name of names) {
    const select = el("select", { id: "filter-" + name, name, onchange: e => setState(name, e.target.value) },
      el("option", { value: "" }, "all"),
      ...(info.choices[name] || []).map(v => el("option", { value: v, selected: state.get(name) === v }, v)));
    form.append(el("label", {}, name, select));
  }
  if (info.kind === "results") {
    for (const [name, text] of [["wrong", "wrong verdicts only"], ["invalid", "invalid only"]]) {
      form.append(el("label", { class: "check" }, el("input", {
        type: "checkbox", id: "only-" + name, checked: state.get(name) === "1",
        onchange: e => setState(name, e.target.checked ? "1" : ""),
      }), text));
    }
  }
  form.append(el("label", {}, "search", el("input", {
    id: "search", type: "search", value: state.get("q") || "", placeholder: "trajectory, task or key",
    onchange: e => setState("q", e.target.value),
  })));
  if (info.kind === "results") {
    form.append(el("button", { type: "button", id: "compare", onclick: () => {
      const [a, b] = [...selected];
      if (a && b) location.href = `/compare?a=${encodeURIComponent(a)}&b=${encodeURIComponent(b)}`;
    } }, "compare 2 selected"));
  }
}

function header() {
  const row = el("tr");
  const sort = state.get("sort") || "key";
  const desc = state.get("desc") === "1";
  for (const [name, text] of columns()) {
    if (text === null) { row.append(el("th", {}, "")); continue; }
    const th = el("th", { "data-sort": name, class: name === sort ? "sorted" + (desc ? " desc" : "") : "",
      onclick: () => {
        if (name === sort && !desc) state.set("desc", "1"); else state.delete("desc");
        setState("sort", name);
      } }, text);
    row.append(th);
  }
  document.querySelector("#runs thead").replaceChildren(row);
}

function cell(row, name) {
  switch (name) {
    case "": return el("td", {}, el("input", { type: "checkbox", class: "pick", checked: selected.has(row.key), onchange: e => {
      if (e.target.checked) selected.add(row.key); else selected.delete(row.key);
    } }));
    case "trajectory_id": {
      const href = row.kind === "judge" ? "/run/" + encodeURIComponent(row.key) : "/trajectory/" + encodeURIComponent(row.trajectory_id);
      return el("td", {}, el("a", { href, class: "run-link" }, row.trajectory_id + (row.item_id ? " #" + row.item_id : "")));
    }
    case "label": return el("td", {}, pill(row.label), row.corrected ? el("span", { class: "corrected", title: "corrected by review" }, " corrected") : null);
    case "verdict": return el("td", {}, pill(row.verdict));
    case "tag": return el("td", { class: "tag" }, row.tag || "");
    case "cost_usd": return el("td", { class: "num" }, money(row.cost_usd));
    case "seconds": return el("td", { class: "num" }, seconds(row.seconds));
    case "tokens": case "steps": case "run": return el("td", { class: "num" }, row[name]);
    case "confidence": return el("td", { class: "num" }, row.confidence === null ? "–" : row.confidence);
    case "config": return el("td", {}, row.config, row.scripted ? el("span", { class: "muted" }, " (scripted)") : null);
    default: return el("td", {}, row[name] === null ? "–" : row[name]);
  }
}

function pager(total, offset, complete) {
  const from = total ? offset + 1 : 0;
  const to = Math.min(offset + PAGE, total);
  const more = complete ? "" : " so far (indexing…)";
  for (const id of ["pager", "pager-top"]) {
    document.getElementById(id).replaceChildren(
      el("button", { type: "button", class: "prev", disabled: offset <= 0, onclick: () => setState("offset", String(Math.max(0, offset - PAGE))) }, "‹ previous"),
      el("span", { class: "count" }, `rows ${from}–${to} of ${total}${more}`),
      el("button", { type: "button", class: "next", disabled: to >= total, onclick: () => setState("offset", String(offset + PAGE)) }, "next ›"));
  }
}

async function load() {
  const params = new URLSearchParams(state);
  params.set("limit", String(PAGE));
  const data = await getJSON("/api/runs?" + params.toString());
  header();
  const body = document.querySelector("#runs tbody");
  body.replaceChildren(...data.rows.map(row => el("tr", { class: row.wrong ? "wrong" : "", "data-key": row.key },
    ...columns().map(([name]) => cell(row, name)))));
  pager(data.total, data.offset, data.complete);
  document.body.dataset.loaded = "1";
  if (!data.complete) {
    // The index is still being read: ask again, and refresh the filter menus once it is done.
    clearTimeout(refresh);
    refresh = setTimeout(async () => {
      await load();
      if (info.complete === false && document.body.dataset.complete === "1") await readInfo();
    }, 300);
  } else {
    document.body.dataset.complete = "1";
  }
}

let refresh = null;

async function readInfo() {
  info = await getJSON("/api/info");
  document.getElementById("meta").textContent = `${info.rows} ${info.kind === "results" ? "judge runs" : "trajectories"}` +
    (info.complete ? "" : " so far") +
    ` · ${info.corrections} label correction(s) in ${info.corrections_file}` + (info.replay ? ` · replay: ${info.replay}` : "");
  buildFilters();
}

async function start() {
  await readInfo();
  document.title = info.title + " · agentjudge view";
  document.getElementById("title").textContent = info.title;
  document.getElementById("report-link").hidden = !info.has_report;
  if (info.problems.length) document.getElementById("problems").append(el("div", { class: "warning" }, info.problems.join("\n")));
  await load();
}

start().catch(error => document.querySelector("main").prepend(el("div", { class: "warning" }, String(error))));
