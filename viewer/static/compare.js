// The comparison page (/compare?a=<key>&b=<key>): two judge runs of one trajectory side by
// side: verdicts, then transcripts; step links open the first run's page at that step.
"use strict";

async function side(key, box, name) {
  const data = await getJSON("/api/run/" + encodeURIComponent(key));
  box.append(el("div", { class: "panel", id: "verdict-" + name },
    el("h2", {}, el("a", { href: "/run/" + encodeURIComponent(key) }, `${data.row.config} · run ${data.row.run}`)),
    verdictFacts(data.row, data.verdict),
    data.verdict && data.verdict.reasoning ? el("pre", {}, data.verdict.reasoning) : null));
  box.append(el("div", { class: "panel", id: "transcript-" + name }, el("h2", {}, "Transcript"),
    renderTranscript(data.transcript, n => `/run/${encodeURIComponent(key)}#step-${n}`)));
  return data;
}

async function start() {
  const params = new URLSearchParams(location.search);
  const [a, b] = [params.get("a"), params.get("b")];
  if (!a || !b) throw new Error("give two runs: /compare?a=<key>&b=<key>");
  const [first, second] = await Promise.all([side(a, document.getElementById("side-a"), "a"), side(b, document.getElementById("side-b"), "b")]);
  const same = first.row.trajectory_id === second.row.trajectory_id;
  document.getElementById("title").textContent = same ? `Comparison · ${first.row.trajectory_id}` : "Comparison of two trajectories";
  const task = first.trajectory && first.trajectory.task;
  if (task) document.getElementById("task").append(el("div", { class: "panel" }, el("h2", {}, `Task ${task.id}`), el("pre", {}, task.instruction),
    el("div", { class: "facts" }, fact("label", pill(first.row.label_now)), same ? null : fact("note", "the two runs judged different trajectories"))));
  document.body.dataset.loaded = "1";
}

start().catch(error => document.querySelector("main").prepend(el("div", { class: "warning" }, String(error))));
