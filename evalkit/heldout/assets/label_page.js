// evalkit blind labeling page. Offline, no framework. Every string from the data is
// written with textContent (never innerHTML), so markup in a conversation stays text.
(function () {
  "use strict";
  const data = JSON.parse(document.getElementById("evalkit-data").textContent);
  const bins = data.bins;
  const dims = data.dimensions;
  const cases = data.cases;
  const has = (obj, key) => Object.prototype.hasOwnProperty.call(obj, key);

  // --- state, autosaved in localStorage under a key naming the held-out set and template
  const state = { labels: {}, notes: {}, labeler: "", index: 0 };
  let storageError = "";
  let active = 0; // index into dims
  let downloadUrl = null;

  function restore() {
    let raw = null;
    try {
      raw = window.localStorage.getItem(data.storage_key);
    } catch (err) {
      storageError = "Autosave is not available in this browser: " + err;
      return;
    }
    if (!raw) return;
    let saved;
    try {
      saved = JSON.parse(raw);
    } catch (err) {
      return;
    }
    if (!saved || typeof saved !== "object") return;
    const labels = saved.labels && typeof saved.labels === "object" ? saved.labels : {};
    const notes = saved.notes && typeof saved.notes === "object" ? saved.notes : {};
    for (const c of cases) {
      const got = has(labels, c.case_id) ? labels[c.case_id] : null;
      if (got && typeof got === "object") {
        for (const d of dims) {
          if (c.applies[d.name] && has(got, d.name) && bins.indexOf(got[d.name]) >= 0) {
            slot(c)[d.name] = got[d.name];
          }
        }
      }
      if (has(notes, c.case_id) && typeof notes[c.case_id] === "string") {
        state.notes[c.case_id] = notes[c.case_id];
      }
    }
    if (typeof saved.labeler === "string") state.labeler = saved.labeler;
    if (Number.isInteger(saved.index) && saved.index >= 0 && saved.index < cases.length) {
      state.index = saved.index;
    }
  }

  function save() {
    try {
      window.localStorage.setItem(data.storage_key, JSON.stringify(state));
    } catch (err) {
      storageError = "Autosave failed: " + err;
    }
  }

  function slot(c) {
    if (!has(state.labels, c.case_id)) state.labels[c.case_id] = {};
    return state.labels[c.case_id];
  }

  function labelOf(c, dim) {
    const got = has(state.labels, c.case_id) ? state.labels[c.case_id] : {};
    return has(got, dim) ? got[dim] : "";
  }

  function applicable(c) {
    return dims.map((d, i) => i).filter((i) => c.applies[dims[i].name]);
  }

  function missingSlots() {
    const out = [];
    cases.forEach((c, i) => {
      for (const d of dims) {
        if (c.applies[d.name] && !labelOf(c, d.name)) out.push({ index: i, dim: d.name });
      }
    });
    return out;
  }

  // --- the page skeleton (static text only)
  function el(tag, attrs, text) {
    const node = document.createElement(tag);
    for (const key of Object.keys(attrs || {})) node.setAttribute(key, attrs[key]);
    if (text !== undefined) node.textContent = text;
    return node;
  }

  const ui = {};
  function build() {
    const header = el("header");
    header.appendChild(el("h1", {}, "Blind held-out labeling"));
    const bar = el("div", { class: "bar" });
    ui.position = el("span", { id: "position" });
    ui.caseId = el("code", { id: "case-id" });
    ui.progress = el("progress", { id: "progress", max: "1", value: "0" });
    ui.progressText = el("span", { id: "progress-text" });
    bar.append(ui.position, ui.caseId, ui.progress, ui.progressText);
    header.appendChild(bar);
    ui.storage = el("div", { class: "warning", id: "storage" });
    header.appendChild(ui.storage);

    const help = el("details", { id: "help" });
    help.appendChild(el("summary", {}, "Keyboard shortcuts and how to hand in"));
    help.appendChild(
      el(
        "pre",
        { class: "keys" },
        [
          "1.." + bins.length + "       pick a bin for the highlighted dimension (" +
            bins.map((b, i) => i + 1 + " " + b).join(", ") + "), then move to the next one",
          "Tab / ↓     next dimension        Shift+Tab / ↑   previous dimension",
          "n / →       next case             p / ←           previous case",
          "u           next case with an empty slot",
          "c           write a note on this case (Esc to leave the note)",
          "l           enter your name as labeler (Enter or Esc to leave)",
          "x           export the filled sheet (needs every slot and your name)",
          "",
          "Labels are saved in this browser as you go (key " + data.storage_key.slice(0, 40) +
            "...), so closing or reloading the page keeps them.",
          "Export gives labels.csv: put it in the catalogue's heldout/ folder, commit it, then",
          "run `evalkit heldout seal <catalogue>/heldout/labels.csv` before any judge run.",
        ].join("\n")
      )
    );
    const intro = el("details", { id: "guide-intro" });
    intro.appendChild(el("summary", {}, "Labeling guide: how to read a conversation, bins, locale numbers"));
    intro.appendChild(el("pre", {}, data.guide_intro));
    header.append(help, intro);
    document.body.appendChild(header);

    const main = el("main");
    ui.chat = el("section", { class: "chat", id: "chat", "aria-label": "conversation" });
    const panel = el("section", { id: "panel", "aria-label": "labels" });
    ui.dims = el("div", { id: "dims" });
    ui.guide = el("div", { class: "guide", id: "guide" });
    const noteLabel = el("label", { for: "note" }, "Note (optional; name the rule you applied when unsure)");
    ui.note = el("textarea", { id: "note" });
    panel.append(ui.dims, ui.guide, noteLabel, ui.note);
    main.append(ui.chat, panel);
    document.body.appendChild(main);

    const footer = el("footer");
    const nameLabel = el("label", { for: "labeler" }, "Labeler (your name, required): ");
    ui.labeler = el("input", { id: "labeler", type: "text", autocomplete: "name" });
    ui.exportButton = el("button", { id: "export", type: "button" }, "Export labels.csv (x)");
    ui.status = el("p", { class: "status", id: "status", role: "status" });
    ui.download = el("a", { id: "download", hidden: "" }, "Download labels.csv again");
    ui.csv = el("textarea", { id: "csv", readonly: "", hidden: "", "aria-label": "exported CSV" });
    footer.append(nameLabel, ui.labeler, document.createTextNode(" "), ui.exportButton);
    footer.append(ui.status, ui.download, ui.csv);
    document.body.appendChild(footer);

    ui.note.addEventListener("input", () => {
      state.notes[cases[state.index].case_id] = ui.note.value;
      save();
    });
    ui.labeler.addEventListener("input", () => {
      state.labeler = ui.labeler.value;
      save();
    });
    ui.exportButton.addEventListener("click", exportSheet);
    document.addEventListener("keydown", onKey);
  }

  // --- drawing the current case
  function render() {
    const c = cases[state.index];
    ui.position.textContent = "Case " + (state.index + 1) + " of " + cases.length;
    ui.caseId.textContent = c.case_id;
    const missing = missingSlots();
    const total = cases.reduce((n, k) => n + applicable(k).length, 0);
    const done = total - missing.length;
    const open = new Set(missing.map((m) => m.index));
    ui.progress.max = Math.max(total, 1);
    ui.progress.value = done;
    ui.progressText.textContent =
      done + " of " + total + " slots labelled, " + (cases.length - open.size) + " of " +
      cases.length + " cases complete";
    ui.storage.textContent = storageError;

    ui.chat.replaceChildren();
    c.turns.forEach((turn, i) => {
      const last = i === c.turns.length - 1;
      const bubble = el("div", { class: "bubble " + turn.role + (last ? " target" : "") });
      const who = (turn.role === "user" ? "USER" : "AGENT") + " [" + i + "]";
      bubble.appendChild(el("span", { class: "who" }, last ? who + " : the reply to label" : who));
      bubble.appendChild(el("span", { class: "text" }, turn.text));
      ui.chat.appendChild(bubble);
    });
    if (c.sources.length) {
      const box = el("div", { class: "sources" });
      box.appendChild(el("strong", {}, "Sources the agent was given"));
      for (const s of c.sources) {
        box.appendChild(el("div", { class: "source" }, "[source " + s.id + "] " + s.title + ": " + s.text));
      }
      ui.chat.appendChild(box);
    }

    ui.dims.replaceChildren();
    dims.forEach((d, i) => {
      const box = el("div", { class: "dim" + (i === active ? " active" : ""), "data-dim": d.name });
      box.appendChild(el("h2", {}, d.name));
      if (!c.applies[d.name]) {
        box.appendChild(el("span", { class: "na" }, data.not_applicable + ": no source is shown"));
      } else {
        const chosen = labelOf(c, d.name);
        bins.forEach((b, k) => {
          const button = el("button", {
            class: "bin",
            type: "button",
            "data-bin": b,
            "aria-pressed": chosen === b ? "true" : "false",
          }, k + 1 + " " + b);
          button.addEventListener("click", (event) => {
            event.stopPropagation();
            choose(i, b);
          });
          box.appendChild(button);
        });
      }
      box.addEventListener("click", () => {
        if (c.applies[d.name] && active !== i) {
          active = i;
          render();
        }
      });
      ui.dims.appendChild(box);
    });
    const d = dims[active];
    ui.guide.replaceChildren(el("h3", {}, "Guide: " + d.heading), el("div", {}, d.guide));
    ui.note.value = has(state.notes, c.case_id) ? state.notes[c.case_id] : "";
    if (document.activeElement !== ui.labeler) ui.labeler.value = state.labeler;
  }

  // --- actions
  function firstOpen(c) {
    const idx = applicable(c);
    const open = idx.filter((i) => !labelOf(c, dims[i].name));
    return open.length ? open[0] : idx.length ? idx[0] : 0;
  }

  function goTo(index) {
    if (index < 0 || index >= cases.length) return;
    state.index = index;
    active = firstOpen(cases[index]);
    save();
    render();
  }

  function moveDim(step) {
    const idx = applicable(cases[state.index]);
    if (!idx.length) return;
    const at = idx.indexOf(active);
    active = idx[(Math.max(at, 0) + step + idx.length) % idx.length];
    render();
  }

  function choose(dimIndex, bin) {
    const c = cases[state.index];
    if (!c.applies[dims[dimIndex].name]) return;
    slot(c)[dims[dimIndex].name] = bin;
    const idx = applicable(c);
    const next = idx.filter((i) => i > dimIndex);
    active = next.length ? next[0] : dimIndex;
    save();
    render();
  }

  function csvField(value) {
    return '"' + String(value).replace(/"/g, '""') + '"';
  }

  function sheet(labeler) {
    const lines = [data.columns.map(csvField).join(",")];
    for (const c of cases) {
      const row = data.columns.map((col) => {
        if (col === "case_id") return c.case_id;
        if (col === "conversation") return c.conversation;
        if (col === "labeler") return labeler;
        if (col === "note") return has(state.notes, c.case_id) ? state.notes[c.case_id].trim() : "";
        return c.applies[col] ? labelOf(c, col) : data.not_applicable;
      });
      lines.push(row.map(csvField).join(","));
    }
    return lines.join("\r\n") + "\r\n";
  }

  function say(text, ok) {
    ui.status.textContent = text;
    ui.status.className = "status " + (ok ? "good" : "bad");
  }

  function exportSheet() {
    const labeler = state.labeler.trim();
    if (!labeler) {
      say("Enter your name as labeler first (press l): the sheet needs one on every row.", false);
      ui.labeler.focus();
      return;
    }
    const missing = missingSlots();
    if (missing.length) {
      const first = missing[0];
      say(
        missing.length + " slot(s) still empty, first: case " + (first.index + 1) + " (" +
          cases[first.index].case_id + "), " + first.dim + ". Press u to go there.",
        false
      );
      return;
    }
    const text = sheet(labeler);
    if (downloadUrl) URL.revokeObjectURL(downloadUrl);
    downloadUrl = URL.createObjectURL(new Blob(["\ufeff" + text], { type: "text/csv;charset=utf-8" }));
    ui.download.href = downloadUrl;
    ui.download.download = "labels.csv";
    ui.download.hidden = false;
    ui.csv.value = text;
    ui.csv.hidden = false;
    say("Exported " + cases.length + " cases as labels.csv (also below, to copy).", true);
    ui.download.click();
  }

  function onKey(event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const target = event.target;
    const tag = target && target.tagName;
    if (tag === "INPUT" || tag === "TEXTAREA") {
      if (event.key === "Escape" || (event.key === "Enter" && tag === "INPUT")) {
        target.blur();
        event.preventDefault();
        render();
      }
      return;
    }
    const key = event.key;
    const digit = /^[1-9]$/.test(key) ? Number(key) : 0;
    let handled = true;
    if (digit && digit <= bins.length) choose(active, bins[digit - 1]);
    else if (key === "Tab") moveDim(event.shiftKey ? -1 : 1);
    else if (key === "ArrowDown") moveDim(1);
    else if (key === "ArrowUp") moveDim(-1);
    else if (key === "n" || key === "ArrowRight") goTo(state.index + 1);
    else if (key === "p" || key === "ArrowLeft") goTo(state.index - 1);
    else if (key === "u") {
      const open = missingSlots().map((m) => m.index);
      const later = open.filter((i) => i > state.index);
      if (open.length) goTo(later.length ? later[0] : open[0]);
    } else if (key === "c") ui.note.focus();
    else if (key === "l") ui.labeler.focus();
    else if (key === "x") exportSheet();
    else handled = false;
    if (handled) event.preventDefault();
  }

  restore();
  build();
  active = firstOpen(cases[state.index]);
  render();
  document.body.setAttribute("data-ready", "true");
})();
