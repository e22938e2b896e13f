// Shared helpers of the viewer's pages: building elements, fetching JSON, rendering a
// transcript and a verdict. Plain browser JavaScript, no libraries.
"use strict";

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "class") node.className = value;
    else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

async function getJSON(url, options) {
  const response = await fetch(url, options);
  const body = await response.json();
  if (!response.ok) throw new Error(body.error || response.statusText);
  return body;
}

function pill(value) {
  return el("span", { class: "pill " + (value || "none") }, value || "–");
}

function money(value) {
  return value === null || value === undefined ? "–" : "$" + Number(value).toFixed(4);
}

function seconds(value) {
  return value === null || value === undefined ? "–" : Number(value).toFixed(2) + " s";
}

function pretty(value) {
  if (value === null || value === undefined) return "";
  return typeof value === "string" ? value : JSON.stringify(value, null, 2);
}

function zoomable(img) {
  img.addEventListener("click", () => {
    const overlay = el("div", { class: "zoom", onclick: () => overlay.remove() },
      el("img", { src: img.src, alt: img.alt || "" }));
    document.body.append(overlay);
  });
  return img;
}

function fact(name, value) {
  return el("div", {}, el("span", {}, name), value);
}

function verdictFacts(row, verdict) {
  const v = verdict || {};
  return el("div", { class: "facts" },
    fact("verdict", pill(row.verdict)),
    fact("label", pill(row.label_now)),
    row.label_now !== row.label ? fact("recorded label", pill(row.label)) : null,
    fact("confidence", v.confidence === null || v.confidence === undefined ? "–" : v.confidence),
    fact("tokens", `${v.tokens_in || 0} in / ${v.tokens_out || 0} out`),
    fact("cost", money(v.cost_usd)),
    fact("time", seconds(v.wall_time_seconds)),
    fact("model calls", v.turns_used || 0),
    fact("tool calls", (v.tool_calls || []).length),
    fact("stop", v.stop_reason || "–"),
    row.scripted ? fact("note", "scripted model: a dry run, not a judge result") : null);
}

// A transcript: each log event; VIEW_TRAJECTORY_STEP calls link to the step (stepHref(n)).
function renderTranscript(entries, stepHref) {
  const box = el("div", { class: "transcript" });
  if (!entries.length) box.append(el("p", { class: "muted" }, "No transcript for this run."));
  for (const entry of entries) {
    if (entry.event === "start") {
      box.append(el("div", { class: "entry" }, el("div", { class: "who" }, "start"),
        `${entry.mode} judge, model ${entry.model}; tools: ${(entry.tools || []).join(", ") || "none"}`));
    } else if (entry.event === "message" || entry.event === "model_call") {
      const role = entry.role || "message";
      const who = entry.event === "model_call"
        ? `model call ${entry.turn} · ${seconds(entry.seconds)}${entry.cached ? " · cached" : ""}`
        : role;
      const node = el("div", { class: "entry " + role }, el("div", { class: "who" }, who));
      if (entry.reasoning) node.append(el("details", {}, el("summary", {}, "reasoning"), el("pre", {}, entry.reasoning)));
      for (const block of entry.content || []) {
        if (block.type === "image") node.append(zoomable(el("img", { src: block.url, loading: "lazy", alt: "image in the transcript" })));
        else if (role === "system" || (role === "user" && block.text.length > 1500)) {
          node.append(el("details", {}, el("summary", {}, `${role} text (${block.text.length} characters)`), el("pre", {}, block.text)));
        } else node.append(el("pre", {}, block.text));
      }
      for (const call of entry.tool_calls || []) {
        node.append(el("div", { class: "muted" }, "asks for ", el("code", {}, call.name), " ", el("code", {}, JSON.stringify(call.arguments || {}))));
      }
      box.append(node);
    } else if (entry.event === "tool_call") {
      const node = el("div", { class: "entry tool" + (entry.is_error ? " error" : "") },
        el("div", { class: "who" }, `tool call · turn ${entry.turn}${entry.seconds != null ? " · " + seconds(entry.seconds) : ""}${entry.is_error ? " · error" : ""}`),
        el("code", {}, entry.name), " ", el("code", {}, JSON.stringify(entry.arguments || {})));
      if (entry.step) {
        node.append(" ", el("a", { class: "step-link", href: stepHref(entry.step), "data-step": entry.step }, `→ step ${entry.step}`));
      }
      if (entry.result) node.append(el("pre", {}, entry.result));
      box.append(node);
    } else if (entry.event === "limit") {
      box.append(el("div", { class: "entry" }, el("div", { class: "who" }, "limit"), `${entry.reason}: ${entry.detail || ""}`));
    }
  }
  return box;
}
