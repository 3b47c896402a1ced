// The clicked cell, drawn in the browser (data from attnviz.plots.cursor.cursor_data).
// A click on any Explore heatmap outlines that cell on every map of the view and writes its
// weight and score here at once, then sends the cell to the server as a trigger; the server's
// fragment rerun answers with the math panel. The figures never change on a click, so they are
// not re-sent or redrawn, and they need no invisible click layer of their own. The numbers are the
// maps' own (their z and customdata, or a local window's hover text), formatted as the hover does.

const HOOKS = new WeakMap(); // plotly graph div -> the cursor state its listeners serve (hooked once)
const OUTSIDE = "−∞ (outside the local window)";
const HOVER_NUMBERS = /weight: ([^<]*)<br>score: ([^<]*)$/; // a local window's map writes them in its text

// the hover's own formatter (%{z:.3f} goes through the figure's d3 locale); toFixed where there is none
function formatter(gd) {
  const locale = gd._fullLayout && gd._fullLayout._d3locale;
  if (locale && typeof locale.numberFormat === "function") return locale.numberFormat(".3f");
  return (v) => v.toFixed(3).replace(/^-(0\.0+)$/, "$1");
}

function entry(matrix, t, s) {
  const row = matrix && matrix[t];
  return row ? row[s] : undefined;
}

// the weight and score of cell (t, s) as the chart's hover shows them; null before the chart is drawn
function cellNumbers(gd, values, t, s) {
  const trace = ((gd && gd._fullData) || []).find((tr) => tr.type === "heatmap");
  if (!trace) return null;
  if (trace.customdata) {
    const shown = entry(trace.z, t, s);
    const other = entry(trace.customdata, t, s);
    if (typeof shown !== "number" || typeof other !== "number") return null;
    const [weight, score] = values === "scores" ? [other, shown] : [shown, other];
    const f = formatter(gd);
    return { weight: f(weight), score: Number.isFinite(score) ? f(score) : OUTSIDE };
  }
  const found = HOVER_NUMBERS.exec(entry(trace.text, t, s) || "");
  return found ? { weight: found[1], score: found[2] } : null;
}

// a cell on the longer of two translations has no row in the shorter one's map
function inPanel(panel, t, s) {
  return t < panel.target.length && s < panel.source.length;
}

function chartDiv(key) {
  return document.querySelector(`.st-key-${CSS.escape(key)} .js-plotly-plot`);
}

function outline(gd, cell, color, panel) {
  const layout = gd._fullLayout;
  const host = gd.querySelector(".svg-container");
  if (!layout || !layout.xaxis || !layout.yaxis || !host) return;
  let box = host.querySelector(":scope > .attnviz-cell");
  if (!box) {
    box = document.createElement("div");
    box.className = "attnviz-cell";
    box.style.cssText = "position:absolute;pointer-events:none;box-sizing:border-box;z-index:5;";
    host.appendChild(box);
  }
  const [t, s] = cell;
  const xa = layout.xaxis;
  const ya = layout.yaxis;
  const px = (ax, v) => ax._offset + ax.l2p(v);
  const x = [px(xa, s - 0.5), px(xa, s + 0.5)].sort((a, b) => a - b);
  const y = [px(ya, t - 0.5), px(ya, t + 0.5)].sort((a, b) => a - b);
  // clip to the plot area: a zoomed-in map may have the cell partly or wholly outside it
  const left = Math.max(x[0], xa._offset);
  const right = Math.min(x[1], xa._offset + xa._length);
  const top = Math.max(y[0], ya._offset);
  const bottom = Math.min(y[1], ya._offset + ya._length);
  const visible = inPanel(panel, t, s) && right - left >= 2 && bottom - top >= 2;
  box.style.display = visible ? "block" : "none";
  if (!visible) return;
  Object.assign(box.style, {
    left: `${left}px`,
    top: `${top}px`,
    width: `${right - left}px`,
    height: `${bottom - top}px`,
    border: `3px solid ${color}`,
  });
}

function readoutText(data, cell) {
  const [t, s] = cell;
  return data.panels
    .map((p, i) => {
      const who = data.panels.length > 1 ? `${p.name}: ` : "";
      if (!inPanel(p, t, s)) return `${who}no step t=${t} (${p.target.length} steps)`;
      const numbers = cellNumbers(chartDiv(data.charts[i]), data.values, t, s);
      const tail = numbers ? `, weight ${numbers.weight}, score ${numbers.score}` : "";
      // each word isolated (FSI…PDI): a right-to-left word keeps its place in the line, as common.quoted does
      return `${who}t=${t} “\u2068${p.target[t]}\u2069” ← s=${s} “\u2068${p.source[s]}\u2069”${tail}`;
    })
    .join("\n"); // one line a panel (white-space: pre-line)
}

const STATES = new Map(); // component key -> what its latest render said: {data, cell, readout, render}

function show(state, cell) {
  state.cell = cell;
  state.data.charts.forEach((key, i) => {
    const gd = chartDiv(key);
    if (gd) outline(gd, cell, state.data.color, state.data.panels[i]);
  });
  if (state.readout) state.readout.textContent = readoutText(state.data, cell);
}

// hook each chart once; the listeners read the state object, so they always see the latest render
function hook(state) {
  if (state.root && !state.root.isConnected) {
    // this cursor is off the page (Streamlit drew a new one): a re-plot it still hears hooks nothing
    unhook(state, () => true);
    if (STATES.get(state.key) === state) STATES.delete(state.key);
    return;
  }
  // charts Streamlit has taken off the page, and charts re-plotted in place (hooked again below)
  unhook(state, (gd, click) => !gd.isConnected || !listening(gd, click));
  state.data.charts.forEach((key, i) => {
    const gd = chartDiv(key);
    if (!gd || typeof gd.on !== "function" || !gd._fullLayout || HOOKS.get(gd) === state) return;
    const click = (event) => {
      if (HOOKS.get(gd) !== state) return;
      const point = (event.points || []).find((p) => Number.isInteger(p.x) && Number.isInteger(p.y));
      if (point) {
        state.pending = { cell: [point.y, point.x], at: Date.now() };
        show(state, state.pending.cell);
        state.setTriggerValue("cell", state.pending.cell); // the server answers with the math panel
      }
    };
    gd.on("plotly_click", click);
    const redraw = () => {
      const index = state.data.charts.indexOf(key);
      if (HOOKS.get(gd) !== state || index < 0) return;
      outline(gd, state.cell, state.data.color, state.data.panels[index]);
      // the numbers are the chart's: a figure drawn after this render (an Enter) brings its own
      if (state.readout) state.readout.textContent = readoutText(state.data, state.cell);
    };
    gd.on("plotly_afterplot", redraw);
    gd.on("plotly_relayout", redraw);
    HOOKS.set(gd, state);
    const listeners = [
      ["plotly_click", click],
      ["plotly_afterplot", redraw],
      ["plotly_relayout", redraw],
    ];
    // Plotly.newPlot (as after a beam change) re-plots the div in place and drops every listener:
    // its new children say so, and the chart is hooked again
    const observer = new MutationObserver(() => {
      hook(state);
      setTimeout(() => hook(state), 250); // a re-plot still under way has no listeners to add to yet
    });
    observer.observe(gd, { childList: true });
    state.hooked.push({ gd, listeners, observer });
    outline(gd, state.cell, state.data.color, state.data.panels[i]);
    if (state.readout) state.readout.textContent = readoutText(state.data, state.cell); // its numbers now read
  });
}

// whether ``click`` still listens on the chart (Plotly.purge and newPlot drop every listener)
function listening(gd, click) {
  const emitter = gd._ev;
  return !!(emitter && typeof emitter.listeners === "function" && emitter.listeners("plotly_click").includes(click));
}

// undo the hooks of the charts ``which(gd, its click listener)`` picks: a listener left on a chart
// Streamlit has unmounted keeps that chart, and with it the whole tab it was drawn in, alive in the
// browser's memory
function unhook(state, which) {
  const kept = [];
  for (const entry of state.hooked) {
    const { gd, listeners, observer } = entry;
    if (!which(gd, listeners[0][1])) {
      kept.push(entry);
      continue;
    }
    observer.disconnect();
    for (const [event, listener] of listeners) if (gd.removeListener) gd.removeListener(event, listener);
    if (HOOKS.get(gd) === state) HOOKS.delete(gd);
    const box = gd.querySelector(".svg-container > .attnviz-cell");
    if (box) box.remove();
  }
  state.hooked = kept;
}

export default function ({ data, parentElement, key, setTriggerValue }) {
  const state = STATES.get(key) || { hooked: [] };
  STATES.set(key, state);
  state.data = data;
  state.setTriggerValue = setTriggerValue;
  state.key = key;
  state.root = parentElement;
  state.readout = parentElement.querySelector(".attnviz-readout");
  if (state.readout) state.readout.style.setProperty("--cell", data.color);
  const render = (state.render || 0) + 1;
  state.render = render;
  // an answer to an earlier click must not move the outline back from a newer one still on its way
  const pending = state.pending;
  const same = pending && pending.cell[0] === data.cell[0] && pending.cell[1] === data.cell[1];
  const waiting = pending && !same && Date.now() - pending.at < 2000;
  if (!waiting) state.pending = null;
  show(state, waiting ? pending.cell : data.cell);
  hook(state);
  // the charts mount and re-plot on their own schedule: look for new ones for 3 s
  let tries = 0;
  const timer = setInterval(() => {
    if (state.render !== render || ++tries > 20) clearInterval(timer);
    else hook(state);
  }, 150);
  return () => {
    clearInterval(timer);
    unhook(state, (gd) => !gd.isConnected); // charts still on the page keep their hooks for the next render
    if (state.render === render) {
      state.readout = null; // the element of this mount: the next one brings its own
      state.setTriggerValue = () => {};
    }
  };
}
