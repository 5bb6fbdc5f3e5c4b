// Globe Race: the page of `tbench globe`. Reads window.GLOBE_DATA (rows prepared by throughput_bench.globe)
// and window.GLOBE_LAND (Natural Earth 1:110m land, TopoJSON). Makes no network request.
'use strict';

const DATA = window.GLOBE_DATA || null;
const LAND_KM2 = DATA ? DATA.land_km2 : 148.94e6;
const MODE_NAMES = { inference: 'inference', training: 'training', serving: 'served (tbench latency)', mapping: 'mapped end to end (tbench map)' };
const UNIT = { inference: 'img/s', training: 'samples/s', serving: 'img/s', mapping: 'tiles/s' };

// ---------- numbers (the figures the browser test checks against Python) ----------
const patchKm2 = (size, gsd) => Math.pow(size * gsd, 2) / 1e6;
function rates(row, gsd) {
  // km²/s and days to map the land, with the 95% CI carried over from img/s (no CI: null ends).
  // A mapping row (tbench map) measured km²/s on its raster, tiles overlapping: at another GSD each tile covers (gsd / its GSD)² as much
  const m = row.km2s != null, f = m ? Math.pow(gsd / row.gsd_m, 2) : patchKm2(row.input_size, gsd);
  const k = m ? row.km2s * f : row.img_s * f;
  const lo = m ? (row.km2s_lo == null ? null : row.km2s_lo * f) : row.ci_lo == null ? null : row.ci_lo * f;
  const hi = m ? (row.km2s_hi == null ? null : row.km2s_hi * f) : row.ci_hi == null ? null : row.ci_hi * f;
  const days = v => (v == null ? null : v > 0 ? LAND_KM2 / v / 86400 : Infinity);
  return { km2s: k, km2s_lo: lo, km2s_hi: hi, days: days(k), days_lo: days(hi), days_hi: days(lo) };
}
function fmt(v, digits = 3) {
  if (v == null) return '–';
  if (!isFinite(v)) return '∞';
  if (v === 0) return '0';
  const mag = Math.floor(Math.log10(Math.abs(v)));
  const dec = Math.max(0, digits - 1 - mag);
  return v.toLocaleString('en-US', { minimumFractionDigits: dec, maximumFractionDigits: dec });
}
function ci(lo, hi, digits = 3) { return lo == null || hi == null ? 'no CI' : `95% CI ${fmt(lo, digits)}–${fmt(hi, digits)}`; }
function duration(s) {
  if (!isFinite(s)) return '∞';
  const d = Math.floor(s / 86400), h = Math.floor((s % 86400) / 3600), m = Math.floor((s % 3600) / 60), sec = Math.floor(s % 60);
  return d ? `${d} d ${h} h ${m} min` : h ? `${h} h ${m} min ${sec} s` : `${m} min ${sec} s`;
}
// a time to map the land as a reader would say it: "4 min 16 s", "31 h 5 min", "12.3 days" (never "0.00297 days")
function timeToMap(days) {
  if (days == null) return '–';
  return !isFinite(days) ? '∞' : days < 2 ? duration(days * 86400) : `${fmt(days)} days`;
}
// the ± of a row: its half-width, and as a share of the figure; "no CI" (the seed tool's rows carry none)
function plusMinus(r) {
  if (r.ci == null) return r.ci_lo == null ? 'no CI' : 'open';
  return `${fmt(r.ci)} (${fmt(100 * r.ci / r.img_s, 2)}%)`;
}
const uniq = xs => [...new Set(xs)];
const el = (id) => document.getElementById(id);
// Every string from a results file is text, never markup: pages are built from nodes, strings become text nodes.
// h('dd', {class: 'x', dataset: {key: 'k'}}, 'text', h('small', {}, '...')) -> an element
function h(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v == null || v === false) continue;
    if (k === 'dataset') Object.assign(e.dataset, v); else e.setAttribute(k, v);
  }
  for (const k of kids.flat(Infinity)) if (k != null && k !== false) e.append(k instanceof Node ? k : String(k));  // nested lists of kids, at any depth
  return e;
}
function options(select, items, keep) {
  // items: [[value, text]]; keeps the current value when it is still offered
  const cur = keep ?? select.value;
  select.replaceChildren();
  for (const [v, t] of items) { const o = document.createElement('option'); o.value = v; o.textContent = t; select.appendChild(o); }
  if (items.some(([v]) => v === cur)) select.value = cur;
}

// ---------- the rows ----------
const ROWS = DATA ? DATA.rows : [];
const devices = () => uniq(ROWS.map(r => r.device)).sort((a, b) => {  // GPUs first, then by name
  const cpu = d => ROWS.find(r => r.device === d).device_type === 'cpu';
  return cpu(a) - cpu(b) || a.localeCompare(b);
});
const modes = () => ['inference', 'training', 'serving', 'mapping'].filter(m => ROWS.some(r => r.mode === m));
const deviceLabel = d => { const r = ROWS.find(x => x.device === d); return `${d} (${r.device_type === 'cpu' ? 'CPU' : r.device_type.toUpperCase()})`; };
const shown = r => r.native || !el('native-only').checked;
function best(device, mode, precision = '') {
  // the fastest variant per model (label: a model at one input shape) on a device, in a mode (at one precision, if named)
  const out = new Map();
  for (const r of ROWS) if (r.device === device && r.mode === mode && r.img_s > 0 && shown(r) && (!precision || r.precision === precision))
    if (!out.has(r.label) || out.get(r.label).img_s < r.img_s) out.set(r.label, r);
  return [...out.values()].sort((a, b) => b.img_s - a.img_s);
}
// a model's name, with its input where other shapes of it are on show
const nameOf = r => r.display + (r.label !== r.model && !(r.native && el('native-only').checked) ? ' @ ' + r.input : '');
// one colour per precision, as in tbench report's charts (fp32 blue, fp16 orange, bf16 green, amp red); compiled: darker
const PRECISION_COLOURS = { fp32: '#4c72b0', fp16: '#dd8452', bf16: '#55a868', amp: '#c44e52' };
const variantColour = v => { const c = d3.color(PRECISION_COLOURS[v.split(' ')[0]] || '#888'); return (v.includes('compile') ? c.darker(0.8) : c).formatHex(); };
const variantOrder = v => Object.keys(PRECISION_COLOURS).indexOf(v.split(' ')[0]) * 10 + (v.includes('compile') ? 1 : 0);
const rowText = r => `${nameOf(r)} — ${fmt(r.img_s)} ${UNIT[r.mode]} at ${r.input}`;  // the input as tbench writes it: 3x224px

// ---------- notes: say what is missing instead of drawing nothing ----------
function showNotes() {
  const box = el('notes');
  const notes = [];
  if (!DATA) notes.push('No data: this page needs data.js next to it. Build the page with: tbench globe RESULTS -o DIR');
  else if (!ROWS.length) notes.push('The results hold no measured rows: nothing to race.');
  if (!window.GLOBE_LAND || !window.d3 || !window.topojson) notes.push('The land geometry or a library did not load (land.js, vendor/): the globes cannot be drawn.');
  if (DATA) notes.push(...DATA.notes);
  box.replaceChildren(...notes.map(n => h('p', {}, n)));
}

// ---------- the globe ----------
let CELLS = null, CELL_WEIGHT = 0;
function landCells(step = 2) {
  // 2° cells whose centre is on land, ordered west to east (north to south within a column), weighted by area.
  // Land is found by drawing it once on a small equirectangular canvas and reading the pixel under each centre
  // (d3.geoContains per cell takes seconds; this takes milliseconds).
  const land = topojson.feature(GLOBE_LAND, GLOBE_LAND.objects.land);
  const W = 1440, H = 720, canvas = document.createElement('canvas');
  canvas.width = W; canvas.height = H;
  const ctx = canvas.getContext('2d', { willReadFrequently: true });
  const proj = d3.geoEquirectangular().scale(W / (2 * Math.PI)).translate([W / 2, H / 2]);
  ctx.beginPath(); d3.geoPath(proj, ctx)(land); ctx.fillStyle = '#000'; ctx.fill();
  const px = ctx.getImageData(0, 0, W, H).data;
  const cells = [];
  for (let lon = -180 + step / 2; lon < 180; lon += step)
    for (let lat = 90 - step / 2; lat > -90; lat -= step) {
      const [x, y] = proj([lon, lat]);
      if (px[(Math.min(H - 1, Math.floor(y)) * W + Math.min(W - 1, Math.floor(x))) * 4 + 3] > 127) {
        const w = Math.cos(lat * Math.PI / 180), e = step / 2;
        // clockwise, as d3-geo wants an exterior ring (the other way round is the whole sphere minus the cell)
        cells.push({ lon, lat, w, poly: [[lon - e, lat - e], [lon - e, lat + e], [lon + e, lat + e], [lon + e, lat - e], [lon - e, lat - e]] });
      }
    }
  let acc = 0;
  for (const c of cells) { acc += c.w; c.cum = acc; }
  CELL_WEIGHT = acc;
  return { land, cells };
}
class Globe {
  constructor(canvas, colour) {
    this.canvas = canvas; this.ctx = canvas.getContext('2d'); this.colour = colour;
    const ratio = window.devicePixelRatio || 1, size = canvas.width;
    canvas.width = size * ratio; canvas.height = size * ratio; this.ctx.scale(ratio, ratio); this.size = size;
    this.projection = d3.geoOrthographic().fitExtent([[6, 6], [size - 6, size - 6]], { type: 'Sphere' }).clipAngle(90);
    this.path = d3.geoPath(this.projection, this.ctx);
    this.lon = 20;
  }
  draw(fraction) {
    // fraction of the land covered: the first cells (west to east) whose cumulative area fits
    const { ctx, path } = this, n = coveredCells(fraction);
    const front = n ? CELLS.cells[n - 1].lon : -180;
    this.lon += ((-front + 30) - this.lon) * 0.08;  // turn to follow the swath
    this.projection.rotate([this.lon, -15]);
    ctx.clearRect(0, 0, this.size, this.size);
    ctx.beginPath(); path({ type: 'Sphere' }); ctx.fillStyle = '#dce9f5'; ctx.fill();
    ctx.beginPath(); path(d3.geoGraticule10()); ctx.strokeStyle = 'rgba(80,100,130,0.15)'; ctx.lineWidth = 0.5; ctx.stroke();
    ctx.beginPath(); path(CELLS.land); ctx.fillStyle = '#c9c2b0'; ctx.fill();
    if (n) {
      ctx.beginPath(); path({ type: 'MultiPolygon', coordinates: CELLS.cells.slice(0, n).map(c => [c.poly]) });
      ctx.fillStyle = this.colour; ctx.fill();
    }
    ctx.beginPath(); path({ type: 'Sphere' }); ctx.strokeStyle = '#7d8ea6'; ctx.lineWidth = 1; ctx.stroke();
  }
}
function coveredCells(fraction) {
  if (fraction <= 0) return 0;
  const target = Math.min(1, fraction) * CELL_WEIGHT, cells = CELLS.cells;
  let lo = 0, hi = cells.length;  // first index whose cumulative weight exceeds the target
  while (lo < hi) { const mid = (lo + hi) >> 1; if (cells[mid].cum <= target) lo = mid + 1; else hi = mid; }
  return fraction >= 1 ? cells.length : lo;
}

// ---------- the race ----------
const COLOURS = ['#d9534f', '#2e7dd7'];
const race = { elapsed: 0, running: false, last: null, lanes: [null, null], globes: [] };
function speed() { return Math.round(Math.pow(10, +el('race-speed').value)); }
function laneRow(i) {
  const lane = el(`lane-${i}`), dev = lane.querySelector('.pick-device').value, label = lane.querySelector('.pick-model').value;
  return best(dev, el('race-mode').value, el('race-precision').value).find(r => r.label === label) || null;
}
function fillRacePickers() {
  const kind = el('race-kind').value, mode = el('race-mode').value, prec = el('race-precision').value;
  options(el('race-precision'), [['', 'the fastest of each']].concat(uniq(ROWS.filter(r => r.mode === mode && r.img_s > 0).map(r => r.precision))
    .sort((a, b) => variantOrder(a) - variantOrder(b)).map(p => [p, p])), prec);
  const P = el('race-precision').value, devs = devices().filter(d => best(d, mode, P).length);
  const lanes = [0, 1].map(i => el(`lane-${i}`));
  for (const [i, lane] of lanes.entries()) {
    const dsel = lane.querySelector('.pick-device'), cur = dsel.value, first = lanes[0].querySelector('.pick-device').value;
    // a lane keeps the device picked for it; in a race of devices, lane 1 starts on one other than lane 0's
    let want = devs.includes(cur) ? cur : undefined;
    if (kind === 'devices' && (!want || (i === 1 && want === first))) want = i === 1 ? (devs.find(d => d !== first) ?? devs[0]) : devs[0];
    options(dsel, devs.map(d => [d, deviceLabel(d)]), want);
    if (kind === 'models' && i === 1) dsel.value = lanes[0].querySelector('.pick-device').value;
    dsel.disabled = kind === 'models' && i === 1;
  }
  if (kind === 'devices') {
    // one model, offered where both devices measured it
    const a = best(lanes[0].querySelector('.pick-device').value, mode, P), b = new Set(best(lanes[1].querySelector('.pick-device').value, mode, P).map(r => r.label));
    const both = a.filter(r => b.has(r.label));
    for (const [i, lane] of lanes.entries()) {
      const msel = lane.querySelector('.pick-model');
      options(msel, both.map(r => [r.label, nameOf(r)]), i === 1 ? lanes[0].querySelector('.pick-model').value : undefined);
      msel.disabled = i === 1;
    }
  } else {
    for (const [i, lane] of lanes.entries()) {
      const g = +el('race-gsd').value, rows = best(lane.querySelector('.pick-device').value, mode, P).sort((x, y) => rates(y, g).km2s - rates(x, g).km2s);  // by ground covered
      const msel = lane.querySelector('.pick-model');
      const prev = msel.value;
      options(msel, rows.map(r => [r.label, rowText(r)]));
      if (!rows.some(r => r.label === prev) && rows.length) {  // lane 1 starts on the best model other than lane 0's
        const other = i === 1 ? rows.find(r => r.model !== laneRow(0)?.model) : null;
        msel.value = (other || rows[Math.min(i, rows.length - 1)]).label;
      }
      msel.disabled = false;
    }
  }
  resetRace();
  // a pace at which the faster lane finishes in about half a minute (1x to 10,000x)
  const gsd = +el('race-gsd').value, finish = Math.min(...race.lanes.filter(Boolean).map(r => rates(r, gsd).days * 86400));
  if (isFinite(finish)) { el('race-speed').value = Math.log10(Math.min(1e4, Math.max(1, finish / 30))).toFixed(2); renderRace(); }
}
function laneStats(i) {
  const r = race.lanes[i], gsd = +el('race-gsd').value;
  if (!r) return null;
  const q = rates(r, gsd), covered = Math.min(LAND_KM2, q.km2s * race.elapsed);
  return Object.assign({ label: r.label, device: r.device, variant: r.variant, mode: r.mode, img_s: r.img_s, input_size: r.input_size,
                         covered_km2: covered, fraction: covered / LAND_KM2, finished: covered >= LAND_KM2 }, q);
}
function renderLane(i) {
  const s = laneStats(i), dl = el(`lane-${i}`).querySelector('.stats');
  if (!s) { dl.replaceChildren(h('dt', {}, 'no model'), h('dd', {}, 'nothing measured to race here')); return; }
  const r = race.lanes[i];
  const item = (k, v, key, val, extra = {}) => [h('dt', {}, k), h('dd', { dataset: key ? Object.assign({ key, value: val }, extra) : undefined }, v)];
  dl.replaceChildren(...[
    item('model', [r.display, ' ', h('small', {}, `(${r.variant}, batch ${r.batch}, ${r.input})`)]),
    item('device', [r.device, r.contended ? [' ', h('small', {}, '⚠ contended')] : null]),
    item('measured', [`${fmt(r.img_s)} ${UNIT[r.mode]} `, h('small', {}, `(${ci(r.ci_lo, r.ci_hi)})`),
                      r.mode !== 'inference' ? [' ', h('b', {}, MODE_NAMES[r.mode])] : null], 'img_s', r.img_s),
    item(r.mode === 'mapping' ? 'km² per tile (new ground, overlap counted)' : 'km² per image', `${fmt(s.km2s / r.img_s)}`),
    item('coverage rate', [h('span', { class: 'big' }, `${fmt(s.km2s)} km²/s`), ' ', h('small', {}, `(${ci(s.km2s_lo, s.km2s_hi)})`)],
         'km2s', s.km2s, { lo: s.km2s_lo, hi: s.km2s_hi }),
    // energy where the device's counter gave it: images per joule and land per kWh (nothing estimated elsewhere)
    r.jpi > 0 ? item('energy', `${fmt(1 / r.jpi)} img/J · ${fmt(s.km2s / r.img_s / r.jpi * 3.6e6)} km²/kWh`, 'energy', 1 / r.jpi) : [],
    item('finishes in', [h('span', { class: 'big' }, timeToMap(s.days)), ' ',
                         h('small', {}, s.days_lo == null || s.days_hi == null ? '(no CI)' : `(95% CI ${timeToMap(s.days_lo)} – ${timeToMap(s.days_hi)})`)],
         'days', s.days, { lo: s.days_lo, hi: s.days_hi }),
    item('covered', [`${fmt(100 * s.fraction)}% · ${fmt(s.covered_km2)} km²`, s.finished ? [' · ', h('b', {}, 'finished')] : null], 'fraction', s.fraction),
  ].flat());
}
function renderTrack() {
  // both lanes on one track: the share of the land each has covered, the finish line at 100%, and who leads by how much
  const st = [0, 1].map(laneStats), track = el('race-track');
  track.replaceChildren(...st.map((s, i) => s ? h('div', { class: 'track-row' },
      h('span', { class: 'track-name' }, race.lanes[i].display, ' ', h('small', {}, `(${race.lanes[i].device})`)),
      h('span', { class: 'track-bar', dataset: { lane: String(i), fraction: String(s.fraction) } },
        h('span', { class: 'track-fill', style: `width:${(100 * s.fraction).toFixed(2)}%;background:${COLOURS[i]}` })),
      h('span', { class: 'track-pct' }, s.finished ? 'finished' : `${fmt(100 * s.fraction)}%`)) : null));
  const [a, b] = st;
  let lead = '';
  if (a && b && a.km2s > 0 && b.km2s > 0) {
    const [w, l] = a.km2s >= b.km2s ? [0, 1] : [1, 0], ratio = st[w].km2s / st[l].km2s;
    const overlap = st[w].km2s_lo != null && st[l].km2s_hi != null && st[w].km2s_lo <= st[l].km2s_hi;
    lead = ratio < 1.0005 ? 'Level: both cover land at the same rate.' :
      `${race.lanes[w].display} (${race.lanes[w].device}) finishes ${fmt(ratio)}× sooner` + (overlap ? ' — but their 95% intervals overlap: not a clear win.'
        : st[w].km2s_lo == null || st[l].km2s_hi == null ? ' (a lane without a 95% interval: how sure this is cannot be said).' : ', beyond both 95% intervals.');
  }
  el('race-lead').textContent = lead;
}
function renderRace() {
  renderTrack();
  for (const i of [0, 1]) {
    renderLane(i);
    const s = laneStats(i);
    if (race.globes[i]) race.globes[i].draw(s ? s.fraction : 0);
  }
  el('race-clock').textContent = `simulated time ${duration(race.elapsed)} · ${speed().toLocaleString('en-US')}× real time`;
  el('race-speed-text').textContent = `${speed().toLocaleString('en-US')}×`;
  el('race-start').textContent = race.running ? 'Pause' : race.elapsed > 0 ? 'Resume' : 'Start';
}
function resetRace() {
  race.elapsed = 0; race.running = false;
  race.lanes = [0, 1].map(laneRow);
  const empty = el('race-empty');
  if (!race.lanes[0] && !race.lanes[1]) {
    empty.hidden = false;
    empty.textContent = ROWS.length ? `No ${MODE_NAMES[el('race-mode').value]} rows on this device: pick another mode or device.` : 'Nothing to race: the results hold no measured rows (see the note above).';
  } else empty.hidden = true;
  renderRace();
}
function advance(simSeconds) {
  race.elapsed += simSeconds;
  const done = [0, 1].every(i => { const s = laneStats(i); return !s || s.finished; });
  if (done) race.running = false;
  renderRace();
}
function tick(t) {
  if (race.running) {
    if (race.last != null) advance(((t - race.last) / 1000) * speed());
    race.last = t;
  } else race.last = null;
  requestAnimationFrame(tick);
}

// ---------- explore ----------
// one colour per kind of model (Okabe-Ito, told apart with colour-blindness too): 15 family colours could not be
const KIND_COLOURS = { 'CNN': '#0072B2', 'ViT': '#E69F00', 'hybrid': '#009E73', 'geo encoder': '#CC79A7', 'other': '#777777' };
const kindColour = k => KIND_COLOURS[k] || KIND_COLOURS.other;
// a chart is drawn at the width it has (on a phone its text stays 10-11 px instead of a 900 px drawing scaled to 4 px)
const chartWidth = box => Math.max(300, Math.min(900, (box.clientWidth || 900) - 2));
function placeLabels(items, W, H) {
  // items: {x, y, text}; greedy, in order: right of the point, left, above, below; a label that fits nowhere is left out (its point keeps a tooltip)
  const boxes = [], out = [];
  const hits = b => boxes.some(o => b.x0 < o.x1 && o.x0 < b.x1 && b.y0 < o.y1 && o.y0 < b.y1);
  for (const it of items) boxes.push({ x0: it.x - 5, x1: it.x + 5, y0: it.y - 5, y1: it.y + 5 });  // points are obstacles too
  for (const it of items) {
    const w = 5.6 * it.text.length + 4, hgt = 12;
    for (const [dx, dy, anchor] of [[8, 4, 'start'], [-8, 4, 'end'], [0, -9, 'middle'], [0, 16, 'middle']]) {
      const x0 = anchor === 'start' ? it.x + dx : anchor === 'end' ? it.x + dx - w : it.x - w / 2, y0 = it.y + dy - 10;
      const b = { x0, x1: x0 + w, y0, y1: y0 + hgt };
      if (b.x0 < 0 || b.x1 > W || b.y0 < 0 || b.y1 > H || hits(b)) continue;
      boxes.push(b); out.push(Object.assign({ lx: it.x + dx, ly: it.y + dy, anchor }, it)); break;
    }
  }
  return out;
}
function fillSelect(id, items, keep) { options(el(id), items, keep); }
function renderExplore() {
  const box = el('ex-chart'), empty = el('ex-empty'), kind = el('ex-kind').value;
  const dev = el('ex-device').value, mode = el('ex-mode').value, gsd = +el('ex-gsd').value;
  el('ex-x').disabled = el('ex-y').disabled = kind !== 'scatter';
  box.replaceChildren();
  const rows = best(dev, mode);
  if (!rows.length) { empty.hidden = false; empty.textContent = `No ${MODE_NAMES[mode]} rows on ${dev}.`; return; }
  empty.hidden = true;
  if (kind === 'scatter') scatter(box, rows, el('ex-x').value, el('ex-y').value, gsd, mode);
  else speedup(box, dev, mode);
}
function scatter(box, rows, xk, yk, gsd, mode) {
  const yv = r => (yk === 'km2s' ? rates(r, gsd).km2s : r.img_s);
  const ylo = r => (r.ci_lo == null ? null : yk === 'km2s' ? rates(r, gsd).km2s_lo : r.ci_lo);
  const yhi = r => (r.ci_hi == null ? null : yk === 'km2s' ? rates(r, gsd).km2s_hi : r.ci_hi);
  const pts = rows.filter(r => r[xk] > 0 && yv(r) > 0);
  const missing = rows.length - pts.length;
  const kinds = Object.keys(KIND_COLOURS).filter(k => pts.some(r => (r.kind || 'other') === k));
  const W = chartWidth(box), narrow = W < 640, legendH = narrow ? 18 * Math.ceil(kinds.length / 2) + 8 : 0;
  const H = narrow ? Math.round(W * 0.9) + legendH : 560, m = { l: narrow ? 52 : 70, r: narrow ? 12 : 190, t: 26, b: 50 + legendH };
  const svg = d3.select(box).append('svg').attr('viewBox', `0 0 ${W} ${H}`).attr('width', W).attr('height', H);
  if (!pts.length) { svg.append('text').attr('x', 20).attr('y', 40).text(`No row has ${el('ex-x').selectedOptions[0].text}.`); return; }
  const x = d3.scaleLog().domain(d3.extent(pts, r => r[xk])).nice().range([m.l, W - m.r]);
  const lows = pts.map(r => ylo(r) ?? yv(r)).filter(v => v > 0), highs = pts.map(r => yhi(r) ?? yv(r));
  const y = d3.scaleLog().domain([d3.min(lows), d3.max(highs)]).nice().range([H - m.b, m.t]);
  const colour = kindColour, ticks = narrow ? 4 : 8;
  svg.append('g').attr('class', 'axis').attr('transform', `translate(0,${H - m.b})`).call(d3.axisBottom(x).ticks(ticks, '~s'));
  svg.append('g').attr('class', 'axis').attr('transform', `translate(${m.l},0)`).call(d3.axisLeft(y).ticks(ticks, '~s'));
  svg.append('text').attr('x', (m.l + W - m.r) / 2).attr('y', H - m.b + 38).attr('text-anchor', 'middle').text(el('ex-x').selectedOptions[0].text + ' (log)');
  svg.append('text').attr('transform', `translate(16,${(H - m.b + m.t) / 2}) rotate(-90)`).attr('text-anchor', 'middle')
    .text((yk === 'km2s' ? `km²/s at ${gsd} m GSD` : UNIT[mode]) + ' (log; bars: 95% CI)');
  const g = svg.append('g').attr('class', 'points');
  for (const r of pts) {
    const cx = x(r[xk]), c = colour(r.kind || 'other');
    if (ylo(r) != null && yhi(r) != null) g.append('line').attr('x1', cx).attr('x2', cx).attr('y1', y(Math.max(ylo(r), y.domain()[0]))).attr('y2', y(yhi(r))).attr('stroke', c).attr('stroke-width', 1.5);
    g.append('circle').attr('cx', cx).attr('cy', y(yv(r))).attr('r', 5).attr('fill', c).attr('stroke', '#fff')
      .append('title').text(`${r.display} (${r.family}, ${r.variant}): ${fmt(yv(r))} ${yk === 'km2s' ? 'km²/s' : UNIT[mode]}, ${fmt(r[xk])} ${xk}`);
  }
  const labels = placeLabels(pts.map(r => ({ x: x(r[xk]), y: y(yv(r)), text: r.display })).sort((a, b) => a.y - b.y), narrow ? W : W - m.r + 150, H - m.b);
  for (const L of labels) g.append('text').attr('x', L.lx).attr('y', L.ly).attr('text-anchor', L.anchor).attr('font-size', 10).attr('fill', '#334').text(L.text);
  if (labels.length < pts.length) svg.append('text').attr('x', W - m.r).attr('y', m.t - 6).attr('text-anchor', 'end').attr('font-size', 10).attr('fill', '#667')
    .text(`${pts.length - labels.length} label(s) left out where they would overlap: ${narrow ? 'tap' : 'hover'} a point`);
  // the legend: right of the plot, or under it on a narrow screen (two columns)
  const lg = svg.append('g').attr('class', 'legend').attr('transform', narrow ? `translate(${m.l},${H - legendH + 6})` : `translate(${W - m.r + 20},${m.t})`);
  kinds.forEach((k, i) => {
    const [lx, ly] = narrow ? [(i % 2) * (W - m.l) / 2, Math.floor(i / 2) * 18] : [0, i * 18];
    lg.append('circle').attr('cx', lx).attr('cy', ly).attr('r', 5).attr('fill', colour(k));
    lg.append('text').attr('x', lx + 10).attr('y', ly + 4).text(k);
  });
  if (missing) svg.append('text').attr('x', m.l).attr('y', H - 28).attr('font-size', 11).attr('fill', '#a33').text(`${missing} model(s) without this measure are not shown`);
}
function speedup(box, dev, mode) {
  // each variant over fp32 eager of the same model (and input), same device and mode
  const rows = ROWS.filter(r => r.device === dev && r.mode === mode && r.img_s > 0 && shown(r));
  const base = new Map(rows.filter(r => r.precision === 'fp32' && r.compile_mode === 'none' && !r.channels_last).map(r => [r.label + '|' + r.optimizer, r]));
  const bars = [];
  for (const r of rows) {
    const b = base.get(r.label + '|' + r.optimizer);
    if (!b || r === b) continue;
    const lo = r.ci_lo != null && b.ci_hi != null ? r.ci_lo / b.ci_hi : null, hi = r.ci_hi != null && b.ci_lo != null ? r.ci_hi / b.ci_lo : null;
    bars.push({ model: nameOf(r), variant: r.variant, v: r.img_s / b.img_s, lo, hi });
  }
  if (!bars.length) { box.replaceChildren(h('p', { class: 'empty' }, `No variant other than fp32 eager was measured on ${dev} in this mode.`)); return; }
  const models = uniq(bars.map(b => b.model)), variants = uniq(bars.map(b => b.variant)).sort((a, b) => variantOrder(a) - variantOrder(b) || a.localeCompare(b));
  const W = chartWidth(box), narrow = W < 640, legendH = narrow ? 18 * Math.ceil(variants.length / 2) + 10 : 0;
  const rowH = 12, m = { l: narrow ? 118 : 230, r: narrow ? 14 : 170, t: 30 + legendH, b: 40 };
  const H = m.t + m.b + models.length * (variants.length * rowH + 10);
  const svg = d3.select(box).append('svg').attr('viewBox', `0 0 ${W} ${H}`).attr('width', W).attr('height', H);
  const xmax = Math.min(d3.max(bars, b => b.hi ?? b.v) * 1.05, d3.max(bars, b => b.v) * 2);
  const x = d3.scaleLinear().domain([0, xmax]).nice().range([m.l, W - m.r]);
  const y0 = d3.scaleBand().domain(models).range([m.t, H - m.b]).paddingInner(0.1);
  const y1 = d3.scaleBand().domain(variants).range([0, y0.bandwidth()]).padding(0.1);
  const colour = variantColour;
  svg.append('g').attr('class', 'axis').attr('transform', `translate(0,${H - m.b})`).call(d3.axisBottom(x));
  svg.append('g').attr('class', 'axis').attr('transform', `translate(0,${m.t})`).call(d3.axisTop(x));
  svg.append('g').attr('class', 'axis').attr('transform', `translate(${m.l},0)`).call(d3.axisLeft(y0));
  svg.append('line').attr('x1', x(1)).attr('x2', x(1)).attr('y1', m.t).attr('y2', H - m.b).attr('stroke', '#333').attr('stroke-dasharray', '4 3');
  svg.append('text').attr('x', (m.l + W - m.r) / 2).attr('y', H - 8).attr('text-anchor', 'middle').text('× fp32 eager (bars: 95% CI)');
  for (const b of bars) {
    const yy = y0(b.model) + y1(b.variant);
    svg.append('rect').attr('x', x(0)).attr('y', yy).attr('width', x(b.v) - x(0)).attr('height', y1.bandwidth()).attr('fill', colour(b.variant))
      .append('title').text(`${b.model} ${b.variant}: ${fmt(b.v)}×`);
    if (b.lo != null) svg.append('line').attr('x1', x(b.lo)).attr('x2', x(Math.min(b.hi, xmax))).attr('y1', yy + y1.bandwidth() / 2).attr('y2', yy + y1.bandwidth() / 2).attr('stroke', '#222');
  }
  const lg = svg.append('g').attr('class', 'legend').attr('transform', narrow ? `translate(8,14)` : `translate(${W - m.r + 20},${m.t})`);
  variants.forEach((v, i) => {
    const [lx, ly] = narrow ? [(i % 2) * (W - 16) / 2, Math.floor(i / 2) * 18] : [0, i * 18];
    lg.append('rect').attr('x', lx).attr('y', ly - 6).attr('width', 12).attr('height', 12).attr('fill', colour(v));
    lg.append('text').attr('x', lx + 18).attr('y', ly + 4).text(v);
  });
}

// ---------- list ----------
// the figures right after the model, so that a phone shows them without scrolling; what they belong to after
const COLUMNS = [
  ['display', 'model', 'text'], ['img_s', 'img/s'], ['ci', '± (95% CI)'], ['km2s', 'km²/s'], ['days', 'time to map the land'],
  ['device', 'device', 'text'], ['family', 'family', 'text'], ['variant', 'best variant', 'text'],
  ['batch', 'batch'], ['input', 'input', 'text'], ['params_M', 'params (M)'], ['gflops', 'GFLOPs'], ['peak_mb', 'peak MiB'],
  ['source', 'file', 'text']];
const listSort = { key: 'img_s', dir: -1 };
function listRows() {
  const dev = el('ls-device').value, mode = el('ls-mode').value, gsd = +el('ls-gsd').value;
  const devs = dev === '*' ? devices() : [dev];
  return devs.flatMap(d => best(d, mode)).map(r => Object.assign({}, r, rates(r, gsd), {
    ci: r.ci_lo == null || r.ci_hi == null ? null : (r.ci_hi - r.ci_lo) / 2 }));  // an open interval (no upper end) has no ±
}
function renderList() {
  const rows = listRows(), thead = el('ls-table').querySelector('thead'), tbody = el('ls-table').querySelector('tbody');
  const empty = el('ls-empty');
  empty.hidden = rows.length > 0; empty.textContent = rows.length ? '' : `No ${MODE_NAMES[el('ls-mode').value]} rows here.`;
  const { key, dir } = listSort, text = COLUMNS.find(c => c[0] === key)[2] === 'text';
  rows.sort((a, b) => {
    const x = a[key], y = b[key];
    if (x == null && y == null) return 0; if (x == null) return 1; if (y == null) return -1;
    return text ? dir * String(x).localeCompare(String(y)) : dir * (x - y);
  });
  thead.replaceChildren(h('tr', {}, COLUMNS.map(([k, t, kind]) =>
    h('th', { class: `${kind || ''} ${k === key ? (dir > 0 ? 'sorted-asc' : 'sorted-desc') : ''}`, dataset: { key: k } }, t))));
  const cell = (r, k, kind) => {
    const v = r[k];
    const shown = kind === 'text' ? (v ?? '') : k === 'batch' ? v : k === 'days' ? timeToMap(v) : k === 'ci' ? plusMinus(r) : fmt(v);
    return h('td', { class: kind || '', dataset: kind === 'text' ? { key: k } : { key: k, value: v ?? '' } },
             String(shown ?? ''), k === 'display' && r.contended ? ' ⚠' : null);
  };
  tbody.replaceChildren(...rows.map(r => h('tr', {}, COLUMNS.map(([k, , kind]) => cell(r, k, kind)))));
  thead.querySelectorAll('th').forEach(th => th.addEventListener('click', () => {
    const k = th.dataset.key, isText = COLUMNS.find(c => c[0] === k)[2] === 'text';
    if (listSort.key === k) listSort.dir *= -1; else { listSort.key = k; listSort.dir = isText ? 1 : -1; }
    renderList();
  }));
}

// ---------- wiring ----------
function show(view) {
  for (const b of document.querySelectorAll('#tabs button')) b.classList.toggle('active', b.dataset.view === view);
  for (const v of ['race', 'explore', 'list', 'about']) el(`view-${v}`).hidden = v !== view;
  if (view === 'explore') renderExplore();
  if (view === 'list') renderList();
}
function fillDevices() {
  // a device is offered in a view only where it has rows in that view's mode
  const has = m => devices().filter(d => best(d, m).length).map(d => [d, deviceLabel(d)]);
  fillSelect('ex-device', has(el('ex-mode').value));
  fillSelect('ls-device', [['*', 'every device']].concat(has(el('ls-mode').value)));
}
function init() {
  showNotes();
  for (const b of document.querySelectorAll('#tabs button')) b.addEventListener('click', () => show(b.dataset.view));
  const gsds = (DATA ? DATA.gsds : [0.3, 1, 10, 30]).map(g => [String(g), `${g} m${g === 10 ? ' (Sentinel-2)' : g === 30 ? ' (Landsat)' : g === 1 ? ' (aerial)' : g === 0.3 ? ' (very high resolution)' : ''}`]);
  for (const id of ['race-gsd', 'ex-gsd', 'ls-gsd']) fillSelect(id, gsds, '10');
  const ms = modes().map(m => [m, MODE_NAMES[m]]);
  for (const id of ['race-mode', 'ex-mode', 'ls-mode']) fillSelect(id, ms, 'inference');
  fillDevices();
  el('about-files').textContent = DATA ? `Results files: ${DATA.files.join(', ')}. Page built ${DATA.generated}.` : 'No data.';
  if (window.d3 && window.topojson && window.GLOBE_LAND) {
    CELLS = landCells();
    race.globes = [0, 1].map(i => new Globe(el(`lane-${i}`).querySelector('canvas'), COLOURS[i]));
  }
  el('race-kind').addEventListener('change', fillRacePickers);
  el('race-mode').addEventListener('change', fillRacePickers);
  el('race-gsd').addEventListener('change', renderRace);
  el('race-speed').addEventListener('input', renderRace);
  for (const i of [0, 1]) {
    const lane = el(`lane-${i}`);
    lane.querySelector('.pick-device').addEventListener('change', () => {
      if (el('race-kind').value === 'models') { el('lane-1').querySelector('.pick-device').value = el('lane-0').querySelector('.pick-device').value; }
      fillRacePickers();
    });
    lane.querySelector('.pick-model').addEventListener('change', () => {
      if (el('race-kind').value === 'devices') el('lane-1').querySelector('.pick-model').value = el('lane-0').querySelector('.pick-model').value;
      resetRace();
    });
  }
  el('native-only').addEventListener('change', () => { fillRacePickers(); renderExplore(); renderList(); });
  el('race-start').addEventListener('click', () => { race.running = !race.running; renderRace(); });
  el('race-reset').addEventListener('click', resetRace);
  for (const id of ['ex-mode', 'ls-mode']) el(id).addEventListener('change', fillDevices);
  for (const id of ['ex-device', 'ex-mode', 'ex-kind', 'ex-x', 'ex-y', 'ex-gsd']) el(id).addEventListener('change', renderExplore);
  for (const id of ['ls-device', 'ls-mode', 'ls-gsd']) el(id).addEventListener('change', renderList);
  el('race-precision').addEventListener('change', fillRacePickers);
  if (ROWS.length) fillRacePickers(); else resetRace();
  requestAnimationFrame(tick);
}

// what the browser test (and a curious reader at the console) can drive
window.globeRace = {
  advance: (simSeconds) => advance(simSeconds),
  state: () => ({ elapsed: race.elapsed, running: race.running, lanes: [0, 1].map(laneStats) }),
  cells: () => (CELLS ? CELLS.cells.length : 0),
};
init();
