// The visible page as uiautomator-shaped nodes, in device pixels (evaluated by WebDevice.hierarchy).
(() => {
  const ratio = window.devicePixelRatio;
  const width = window.innerWidth, height = window.innerHeight;
  const app = location.hostname.split(".")[0];
  const pkg = document.documentElement.dataset.package || ("com.agentjudge." + app);
  const nodes = [];
  const active = document.activeElement;
  const clickable = el => el.matches("button, a[href], input, select, textarea, label, [role=button], [role=switch], [role=tab], [onclick], [data-clickable]")
    || getComputedStyle(el).cursor === "pointer";
  const classOf = el => {
    const tag = el.tagName.toLowerCase();
    const type = (el.getAttribute("type") || "").toLowerCase();
    if (el.getAttribute("role") === "switch") return "android.widget.Switch";
    if (tag === "input" && type === "checkbox") return "android.widget.CheckBox";
    if (tag === "input" && type === "radio") return "android.widget.RadioButton";
    if (tag === "textarea" || (tag === "input" && !["button", "submit", "checkbox", "radio", "range"].includes(type))) return "android.widget.EditText";
    if (tag === "select") return "android.widget.Spinner";
    if (tag === "img") return "android.widget.ImageView";
    if (tag === "button" || tag === "a" || (tag === "input" && (type === "button" || type === "submit")) || el.getAttribute("role") === "button") return "android.widget.Button";
    return null;
  };
  const ownText = el => Array.from(el.childNodes).filter(n => n.nodeType === 3).map(n => n.textContent.trim()).filter(Boolean).join(" ");
  const scrollable = el => {
    const style = getComputedStyle(el);
    return /(auto|scroll)/.test(style.overflowY + style.overflowX) && (el.scrollHeight > el.clientHeight + 1 || el.scrollWidth > el.clientWidth + 1);
  };
  const clip = r => [Math.max(0, r.left), Math.max(0, r.top), Math.min(width, r.right), Math.min(height, r.bottom)];
  const walk = (el, depth) => {
    const style = getComputedStyle(el);
    if (style.display === "none" || style.visibility === "hidden" || el.getAttribute("aria-hidden") === "true") return;
    const box = clip(el.getBoundingClientRect());
    if (box[2] <= box[0] || box[3] <= box[1]) return;
    const known = classOf(el);
    const tag = el.tagName.toLowerCase();
    const isInput = tag === "input" || tag === "textarea";
    const leaf = known !== null && tag !== "label";
    const type = (el.getAttribute("type") || "").toLowerCase();
    const checkable = el.getAttribute("role") === "switch" || type === "checkbox" || type === "radio";
    const checked = checkable && (el.checked === true || el.getAttribute("aria-checked") === "true");
    let text = leaf ? (isInput ? (type === "checkbox" || type === "radio" ? "" : el.value) : (tag === "select" ? (el.selectedOptions[0] || {}).text || "" : el.innerText.trim())) : ownText(el);
    const scrolls = scrollable(el);
    let cls = known || (scrolls ? "android.widget.ScrollView" : (text ? "android.widget.TextView" : "android.view.ViewGroup"));
    nodes.push({
      depth, cls, text: (text || "").replace(/\s+/g, " ").slice(0, 500),
      rid: el.id ? pkg + ":id/" + el.id : "",
      desc: el.getAttribute("aria-label") || el.getAttribute("alt") || "",
      hint: el.getAttribute("placeholder") || "",
      pkg,
      box: box.map(v => Math.round(v * ratio)),
      flags: {
        checkable, checked,
        clickable: clickable(el) && !checkable ? true : checkable,
        enabled: !el.disabled,
        focusable: isInput || tag === "select" || tag === "button" || tag === "a",
        focused: el === active,
        scrollable: scrolls,
        "long-clickable": el.hasAttribute("data-long-press"),
        password: type === "password",
        selected: el.getAttribute("aria-selected") === "true",
      },
    });
    if (leaf) return;
    for (const child of el.children) walk(child, depth + 1);
  };
  const root = document.scrollingElement || document.documentElement;
  nodes.push({depth: 1, cls: "android.widget.FrameLayout", text: "", rid: "", desc: "", hint: "", pkg,
    box: [0, 0, Math.round(width * ratio), Math.round(height * ratio)],
    flags: {enabled: true, scrollable: root.scrollHeight > height + 1}});
  if (document.body) walk(document.body, 2);
  return nodes;
})
