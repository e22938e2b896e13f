// The run page (/run/<key>) and the trajectory page (/trajectory/<id>): the task, the
// trajectory step by step, the replay report, the judge transcript and verdict, and the
// label-correction form.
"use strict";

function actionSummary(action) {
  if (!action) return "";
  if (action.type === "tool_call") return action.name;
  if (action.type === "computer_13" || action.type === "android") return action.action_type;
  if (action.type === "pyautogui") return "pyautogui";
  return action.type;
}

function renderTask(task) {
  if (!task) return el("div", { class: "panel" }, el("h2", {}, "Task"), el("p", { class: "muted" }, "The task file was not found."));
  return el("div", { class: "panel", id: "task" }, el("h2", {}, `Task ${task.id}`),
    el("div", { class: "facts" }, fact("domain", task.domain), fact("subdomain", task.subdomain)),
    el("pre", {}, task.instruction));
}

function renderSteps(trajectory) {
  const box = el("div", { class: "panel", id: "trajectory" }, el("h2", {}, `Trajectory ${trajectory.id}`),
    el("div", { class: "facts" }, fact("agent", trajectory.agent), fact("model", trajectory.model || "–"),
      fact("steps", trajectory.steps.length), fact("stop", trajectory.stop_reason),
      fact("label", pill(trajectory.label ? trajectory.label.value : null)),
      trajectory.label ? fact("source", trajectory.label.source) : null));
  const statuses = {};
  for (const step of (trajectory.fidelity ? trajectory.fidelity.steps : [])) statuses[step.index] = step;
  for (const step of trajectory.steps) {
    const fidelity = statuses[step.index];
    const status = fidelity ? fidelity.status : null;
    const node = el("section", { class: "step" + (status ? " " + status : ""), id: "step-" + step.index },
      el("h3", {}, `Step ${step.index} · ${actionSummary(step.action)}`,
        step.is_error ? el("span", { class: "status failed" }, "error") : null,
        status ? el("span", { class: "status " + status, title: "replay" }, "replay: " + status) : null));
    if (step.reasoning) node.append(el("div", { class: "muted" }, "reasoning"), el("pre", { class: "reasoning" }, step.reasoning));
    node.append(el("div", { class: "muted" }, "action"), el("pre", { class: "action" }, pretty(step.action)));
    const observation = step.observation || {};
    if (observation.url) node.append(el("div", { class: "muted" }, "url ", el("code", {}, observation.url)));
    if (observation.text) node.append(el("div", { class: "muted" }, "observation"), el("pre", { class: "observation" }, observation.text));
    if (step.screenshot_url) node.append(zoomable(el("img", { class: "shot", loading: "lazy", src: step.screenshot_url, alt: `screenshot after step ${step.index}` })));
    if (observation.accessibility_tree) node.append(el("details", { class: "tree" },
      el("summary", {}, `accessibility tree (${observation.accessibility_tree.length} characters)`), el("pre", {}, observation.accessibility_tree)));
    if (fidelity && fidelity.diff) node.append(el("details", { open: true }, el("summary", {}, "replay diff (recorded − / replayed +)"), el("pre", {}, fidelity.diff)));
    if (fidelity && fidelity.message) node.append(el("div", { class: "warning" }, fidelity.message));
    box.append(node);
  }
  if (trajectory.final_response) box.append(el("h3", {}, "Final response"), el("pre", { id: "final-response" }, trajectory.final_response));
  if (trajectory.items.length) {
    box.append(el("h3", {}, "Claims"), el("table", { id: "claims" }, el("tbody", {}, ...trajectory.items.map(item =>
      el("tr", {}, el("td", {}, item.id), el("td", {}, item.text), el("td", {}, pill(item.label)))))));
  }
  return box;
}

function renderFidelity(report) {
  const box = el("div", { class: "panel", id: "fidelity" }, el("h2", {}, "Replay fidelity"));
  if (!report) return box.append(el("p", { class: "muted" }, "No replay report for this trajectory (open the viewer with --replay FOLDER to add one).")), box;
  box.append(el("div", { class: "facts" }, fact("verdict", report.verdict), fact("backend", report.backend),
    fact("diverged steps", report.steps.filter(s => s.status === "diverged" || s.status === "failed").map(s => s.index).join(", ") || "none"),
    fact("divergence", report.divergence || "–"), fact("time", seconds(report.seconds))));
  const rows = report.steps.map(step => el("tr", { class: step.status === "diverged" || step.status === "failed" ? "wrong" : "" },
    el("td", {}, el("a", { href: "#step-" + step.index }, step.index)), el("td", {}, step.tool),
    el("td", {}, el("span", { class: "status " + step.status }, step.status)), el("td", {}, step.effect || ""), el("td", {}, step.effect_reason || step.message || "")));
  box.append(el("table", { id: "fidelity-steps" }, el("thead", {}, el("tr", {}, ...["Step", "Tool", "Status", "Effect", "Why"].map(h => el("th", {}, h)))), el("tbody", {}, ...rows)));
  if (report.verifier) box.append(el("p", {}, `Verifier on the replayed state: ${report.verifier.replayed.passed ? "PASS" : "FAIL"}. ${report.verifier.explanation}`));
  for (const problem of report.problems || []) box.append(el("div", { class: "warning" }, problem));
  return box;
}

function renderCorrection(trajectory, current, itemId) {
  const box = el("div", { class: "panel", id: "correction" }, el("h2", {}, "Label review"));
  for (const c of trajectory.corrections) {
    box.append(el("div", { class: "notice" }, `Corrected${c.item_id ? " (claim " + c.item_id + ")" : ""}: ${c.previous || "none"} → ${c.label}` +
      (c.note ? ` — ${c.note}` : "") + (c.reviewer ? ` (${c.reviewer})` : "")));
  }
  const subject = el("select", { name: "item_id", id: "correction-item" }, el("option", { value: "" }, "the whole trajectory"),
    ...trajectory.items.map(item => el("option", { value: item.id, selected: item.id === itemId }, "claim " + item.id)));
  const label = el("select", { name: "label", id: "correction-label" },
    ...["PASS", "FAIL"].map(v => el("option", { value: v, selected: v !== current }, v)));
  const note = el("textarea", { name: "note", id: "correction-note", rows: 2, placeholder: "why the label is wrong" });
  const reviewer = el("input", { name: "reviewer", id: "correction-reviewer", placeholder: "your name (optional)" });
  const status = el("div", { id: "correction-status" });
  const form = el("form", { class: "correction", id: "correction-form", onsubmit: async event => {
    event.preventDefault();
    try {
      const saved = await getJSON("/api/corrections", { method: "POST", headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ trajectory_id: trajectory.id, item_id: subject.value || null, label: label.value, note: note.value, reviewer: reviewer.value }) });
      status.replaceChildren(el("div", { class: "notice" }, `Saved: ${saved.correction.previous || "none"} → ${saved.correction.label}, written to ${saved.written}`));
    } catch (error) {
      status.replaceChildren(el("div", { class: "warning" }, String(error)));
    }
  } },
    el("div", {}, `Current label: `, pill(current), ". A correction is appended to a separate file; the dataset is not changed."),
    el("div", { class: "row" }, "Mark", subject, "as", label), note, reviewer,
    el("div", {}, el("button", { type: "submit", class: "primary", id: "correction-submit" }, "Record correction")), status);
  box.append(form);
  return box;
}

function flashStep(index) {
  const target = document.getElementById("step-" + index);
  if (!target) return;
  document.querySelectorAll(".step.flash").forEach(node => node.classList.remove("flash"));
  target.classList.add("flash");
  target.scrollIntoView({ block: "start" });
}

async function start() {
  const parts = location.pathname.split("/");
  const isRun = parts[1] === "run";
  const id = decodeURIComponent(parts.slice(2).join("/"));
  const left = document.getElementById("left");
  const right = document.getElementById("right");
  let trajectory;
  let trajectoryError = "The trajectory is not available.";
  let current;
  let itemId = null;
  if (isRun) {
    const data = await getJSON("/api/run/" + encodeURIComponent(id));
    trajectory = data.trajectory;
    if (data.trajectory_error) trajectoryError = "The trajectory is not available: " + data.trajectory_error;
    current = data.row.label_now;
    itemId = data.row.item_id;
    document.getElementById("title").textContent = `${data.row.trajectory_id}${itemId ? " #" + itemId : ""} · ${data.row.config} · run ${data.row.run}`;
    document.title = data.row.trajectory_id + " · agentjudge view";
    const verdict = el("div", { class: "panel", id: "verdict-panel" }, el("h2", {}, data.row.wrong ? "Verdict (wrong)" : "Verdict"),
      verdictFacts(data.row, data.verdict));
    if (data.verdict && data.verdict.reasoning) verdict.append(el("pre", { id: "judge-reasoning" }, data.verdict.reasoning));
    if (data.verdict && data.verdict.error) verdict.append(el("div", { class: "warning" }, data.verdict.error));
    if (data.siblings.length) {
      verdict.append(el("div", { class: "muted" }, "Other judge runs of this trajectory — compare with: "),
        el("ul", { id: "siblings" }, ...data.siblings.map(s => el("li", {},
          el("a", { href: `/compare?a=${encodeURIComponent(data.row.key)}&b=${encodeURIComponent(s.key)}` }, `${s.config} run ${s.run}`), " ", pill(s.verdict)))));
    }
    if (data.has_log) verdict.append(el("a", { href: `/logs/${encodeURIComponent(data.row.key)}.jsonl?raw=1` }, "raw transcript (JSON lines)"));
    document.getElementById("verdict").append(verdict);
    right.append(el("div", { class: "panel", id: "transcript" }, el("h2", {}, "Judge transcript"), renderTranscript(data.transcript, n => "#step-" + n)));
  } else {
    trajectory = await getJSON("/api/trajectory/" + encodeURIComponent(id));
    current = trajectory.label ? trajectory.label.value : null;
    document.getElementById("title").textContent = trajectory.id;
    document.title = trajectory.id + " · agentjudge view";
    right.append(el("div", { class: "panel", id: "runs-of" }, el("h2", {}, "Judge runs"),
      trajectory.runs.length ? el("ul", {}, ...trajectory.runs.map(r => el("li", {}, el("a", { href: "/run/" + encodeURIComponent(r.key) }, `${r.config} run ${r.run}`), " ", pill(r.verdict))))
        : el("p", { class: "muted" }, "No judge runs of this trajectory here.")));
  }
  if (!trajectory) {
    left.append(el("div", { class: "warning", id: "trajectory-error" }, trajectoryError));
  } else {
    left.append(renderTask(trajectory.task), renderSteps(trajectory));
    right.append(renderFidelity(trajectory.fidelity), renderCorrection(trajectory, current, itemId));
  }
  document.addEventListener("click", event => {
    const link = event.target.closest("a.step-link");
    if (link) flashStep(link.dataset.step);
  });
  document.body.dataset.loaded = "1";
  if (location.hash.startsWith("#step-")) flashStep(location.hash.slice(6));
}

start().catch(error => document.querySelector("main").prepend(el("div", { class: "warning" }, String(error))));
