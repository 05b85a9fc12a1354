// The live view: polls live/state, keeps one card per semaphore up to date, draws a one-minute
// chart per semaphore, and sends the buttons' requests. Paths are relative, so the page also works
// under a servlet context path.
'use strict';

const POLL_MS = 250;
const WINDOW_MS = 60_000;
const QUEUE_ROWS = 10;
/** Instance colours, by the instance's place in the fleet sorted by name. */
const PALETTE = ['#2563eb', '#0d9488', '#9333ea', '#db2777', '#65a30d', '#0891b2', '#c2410c', '#4f46e5'];
const UNKNOWN = '#94a3b8';
const SVG = 'http://www.w3.org/2000/svg';

const cards = new Map();        // semaphore name -> {element, history}
const firstSeen = new Map();    // waiter id -> Date.now() when this page first saw it
let colours = new Map();        // instance name -> colour
let lastState = null;
let lastAnswer = 0;

const $ = (selector, root = document) => root.querySelector(selector);

function colourOf(instance) {
  return (instance && colours.get(instance)) || UNKNOWN;
}

function threadOf(owner) {
  // host/pid/thread: the thread is what tells callers of one JVM apart
  const parts = owner.split('/');
  return parts.length > 2 ? parts.slice(2).join('/') : owner;
}

function seconds(millis) {
  return (Math.max(0, millis) / 1000).toFixed(1) + ' s';
}

// ---- polling -------------------------------------------------------------------------------

async function poll() {
  try {
    const response = await fetch('live/state', {cache: 'no-store'});
    if (!response.ok) {
      throw new Error('HTTP ' + response.status);
    }
    render(await response.json());
    lastAnswer = Date.now();
    setStatus('live', 'live');
  } catch (e) {
    setStatus('down', lastAnswer
      ? 'no answer since ' + new Date(lastAnswer).toLocaleTimeString() + ' (' + e.message + ')'
      : 'no answer (' + e.message + ')');
  } finally {
    setTimeout(poll, POLL_MS);
  }
}

function setStatus(kind, text) {
  const status = $('#status');
  status.className = 'status ' + kind;
  status.textContent = text;
}

// ---- rendering -----------------------------------------------------------------------------

function render(state) {
  const now = Date.now();
  const firstRender = lastState === null;
  lastState = state;
  colours = new Map(state.instances.map((member, i) => [member.name, PALETTE[i % PALETTE.length]]));
  renderFleet(state);
  if (firstRender) {
    fillSelects(state);
  }
  renderBursts(state.bursts);
  const present = new Set();
  state.semaphores.forEach((semaphore, i) => {
    if (i === 1 && state.exportCap) {
      renderCap(state.exportCap); // above the tenants' cards, whose keys it caps
    }
    renderSemaphore(semaphore, i === 0, state.forceReleasePath, now);
    semaphore.waiters.forEach(waiter => present.add(waiter.waiterId));
  });
  for (const id of firstSeen.keys()) {
    if (!present.has(id)) {
      firstSeen.delete(id);
    }
  }
}

function renderFleet(state) {
  $('#self').textContent = state.instance ?? '?';
  const nav = $('#fleet');
  nav.replaceChildren(...state.instances.map(member => {
    const link = document.createElement('a');
    link.href = member.url + '/';
    link.className = member.name === state.instance ? 'self' : '';
    link.title = member.name === state.instance ? 'this page' : 'open the live view of ' + member.name;
    const chip = document.createElement('span');
    chip.className = 'chip';
    chip.style.setProperty('--c', colourOf(member.name));
    chip.textContent = member.name;
    link.append(chip, ' :' + member.port);
    return link;
  }));
  nav.dataset.instances = state.instances.length;
}

function fillSelects(state) {
  $('#tenant').replaceChildren(...state.tenants.map(tenant => new Option(tenant, tenant)));
  $('#hold-semaphore').replaceChildren(...state.semaphores.map(s => new Option(s.name, s.name)));
}

function renderBursts(bursts) {
  const text = bursts.fired === 0
    ? 'No burst fired from this instance yet.'
    : `Bursts from this instance: ${bursts.fired} calls fired · ${bursts.served} served · `
      + `${bursts.rejected} rejected (429) · ${bursts.failed} failed · ${bursts.inProgress} in progress`;
  const element = $('#bursts');
  element.textContent = text;
  Object.entries(bursts).forEach(([key, value]) => element.dataset[key] = value);
}

function cardOf(semaphore, wide) {
  let card = cards.get(semaphore.name);
  if (!card) {
    const element = $('#semaphore-card').content.firstElementChild.cloneNode(true);
    element.id = 'sem-' + semaphore.name.replace(/[^A-Za-z0-9_-]/g, '-');
    element.dataset.semaphore = semaphore.name;
    element.classList.toggle('wide', wide);
    $('.name', element).textContent = semaphore.name;
    element.addEventListener('click', onRelease);
    $('#semaphores').append(element);
    card = {element, history: []};
    cards.set(semaphore.name, card);
  }
  return card;
}

function renderSemaphore(semaphore, wide, forceReleasePath, now) {
  const card = cardOf(semaphore, wide);
  const element = card.element;
  const holders = semaphore.holders;
  const waiters = semaphore.waiters;
  Object.assign(element.dataset, {
    limit: semaphore.limit, used: semaphore.used, inFlight: semaphore.inFlight,
    holders: holders.length, waiters: waiters.length,
  });
  const full = semaphore.maxWaiters > 0 && waiters.length >= semaphore.maxWaiters;
  element.classList.toggle('busy', waiters.length > 0);
  // A full queue: new callers are refused at once (429 with a Retry-After), not queued.
  element.classList.toggle('full', full);
  element.dataset.full = full;
  $('.used', element).textContent = semaphore.used;
  $('.limit', element).textContent = semaphore.limit;
  $('.waiting', element).textContent = semaphore.maxWaiters > 0
    ? `${waiters.length} of ${semaphore.maxWaiters}${full ? ' (queue full)' : ''}` : waiters.length;
  // A rate: the grants of the last window against its limit ("7 of 10 per 1 s").
  element.dataset.rateGrants = semaphore.rateGrants;
  $('.rate', element).textContent = semaphore.rateLimit > 0
    ? ` · ${semaphore.rateGrants} of ${semaphore.rateLimit} per ${semaphore.ratePeriodMillis / 1000} s` : '';

  renderBar($('.bar', element), semaphore);
  renderHolders(element, holders, semaphore.name, forceReleasePath, now);
  renderWaiters(element, waiters, now);

  card.history.push({t: now, inFlight: semaphore.inFlight, waiters: waiters.length, limit: semaphore.limit});
  while (card.history.length && card.history[0].t < now - WINDOW_MS) {
    card.history.shift();
  }
  drawChart($('svg', element), card.history, now);
}

let capCard = null;

/** The cap over all tenants: its bar, one segment per permit held, and each tenant's share beneath. */
function renderCap(cap) {
  if (!capCard) {
    capCard = $('#cap-card').content.firstElementChild.cloneNode(true);
    capCard.id = 'cap-' + cap.name.replace(/[^A-Za-z0-9_-]/g, '-');
    $('.name', capCard).textContent = cap.name;
    $('#semaphores').append(capCard);
  }
  const waiting = cap.keys.reduce((sum, key) => sum + key.waiters, 0);
  Object.assign(capCard.dataset, {limit: cap.limit, used: cap.used, waiters: waiting, keys: cap.keys.length});
  capCard.classList.toggle('busy', waiting > 0);
  $('.used', capCard).textContent = cap.used;
  $('.limit', capCard).textContent = cap.limit;
  $('.waiting', capCard).textContent = waiting;
  $('.source', capCard).textContent = cap.limitSource;
  const bar = $('.bar', capCard);
  renderBar(bar, {limit: cap.limit, used: cap.used,
    holders: cap.segments.map(segment => ({count: 1, instance: segment.instance}))});
  [...bar.children].forEach((segment, i) => {
    const held = cap.segments[i];
    segment.textContent = held ? held.key : '';
    if (held) {
      segment.title = held.key + ', held by ' + (held.instance ?? 'an unknown instance');
    }
  });
  $('.keys', capCard).textContent = cap.keys.length === 0 ? 'no tenant holds or waits'
    : cap.keys.map(key => `${key.key}: ${key.used} held, ${key.waiters} waiting`).join(' · ');
}

function renderBar(bar, semaphore) {
  const segments = [];
  semaphore.holders.forEach(holder => {
    for (let i = 0; i < holder.count; i++) {
      segments.push(holder.instance);
    }
  });
  const total = Math.max(semaphore.limit, segments.length);
  while (bar.children.length < total) {
    bar.append(document.createElement('div'));
  }
  while (bar.children.length > total) {
    bar.lastElementChild.remove();
  }
  [...bar.children].forEach((segment, i) => {
    const held = i < segments.length;
    segment.className = 'segment' + (held ? ' held' : '');
    segment.style.setProperty('--c', held ? colourOf(segments[i]) : '');
    segment.title = held ? 'held by ' + (segments[i] ?? 'an unknown instance') : 'free';
  });
  bar.setAttribute('aria-label', `${semaphore.used} of ${semaphore.limit} permits in use`);
}

/**
 * Updates table rows in place, keyed by id, so that a row (and its button) stays the same element
 * from one poll to the next and a click on it is never lost to a redraw.
 */
function syncRows(tbody, items, keyOf, create, update) {
  const existing = new Map([...tbody.children].map(row => [row.dataset.key, row]));
  items.forEach((item, index) => {
    const key = keyOf(item);
    let row = existing.get(key);
    if (row) {
      existing.delete(key);
    } else {
      row = create(item);
      row.dataset.key = key;
    }
    update(row, item, index);
    if (tbody.children[index] !== row) {
      tbody.insertBefore(row, tbody.children[index] ?? null);
    }
  });
  existing.forEach(row => row.remove());
}

function row(cells) {
  const tr = document.createElement('tr');
  cells.forEach(className => {
    const td = document.createElement('td');
    td.className = className;
    tr.append(td);
  });
  return tr;
}

function instanceCell(td, instance) {
  td.replaceChildren();
  const chip = document.createElement('span');
  chip.className = 'chip';
  chip.style.setProperty('--c', colourOf(instance));
  chip.textContent = instance ?? 'other';
  td.append(chip);
}

function renderHolders(element, holders, name, forceReleasePath, now) {
  syncRows($('.holders tbody', element), holders, holder => holder.permitId,
    () => row(['instance', 'token', 'lease num', 'thread', 'action']),
    (tr, holder) => {
      instanceCell(tr.cells[0], holder.instance);
      tr.cells[1].textContent = holder.fencingToken;
      tr.cells[3].textContent = threadOf(holder.owner);
      tr.cells[3].title = holder.owner;
      // The lease counts down between polls (see tick); a renewal moves the deadline out again.
      tr.dataset.deadline = now + holder.leaseRemainingMillis;
      tr.cells[2].textContent = seconds(holder.leaseRemainingMillis);
      const action = tr.cells[4];
      if (forceReleasePath && !action.firstChild) {
        const button = document.createElement('button');
        button.type = 'button';
        button.className = 'release';
        button.textContent = 'Release';
        button.title = 'force-release this lease (DELETE ' + forceReleasePath + '/{name}/{permitId})';
        Object.assign(button.dataset, {semaphore: name, permitId: holder.permitId, path: forceReleasePath});
        action.append(button);
      } else if (!forceReleasePath) {
        action.replaceChildren();
      }
    });
  $('.holders-empty', element).hidden = holders.length > 0;
}

function renderWaiters(element, waiters, now) {
  waiters.forEach(waiter => {
    if (!firstSeen.has(waiter.waiterId)) {
      firstSeen.set(waiter.waiterId, now);
    }
  });
  const shown = waiters.slice(0, QUEUE_ROWS);
  syncRows($('.waiters tbody', element), shown, waiter => waiter.waiterId,
    () => row(['position num', 'instance', 'waited num', 'thread']),
    (tr, waiter, index) => {
      tr.cells[0].textContent = index + 1;
      instanceCell(tr.cells[1], waiter.instance);
      tr.dataset.since = firstSeen.get(waiter.waiterId);
      tr.cells[2].textContent = seconds(now - firstSeen.get(waiter.waiterId));
      tr.cells[3].textContent = threadOf(waiter.owner);
      tr.cells[3].title = waiter.owner;
    });
  $('.waiters-empty', element).hidden = waiters.length > 0;
  const more = $('.more', element);
  more.hidden = waiters.length <= QUEUE_ROWS;
  more.textContent = `… and ${waiters.length - QUEUE_ROWS} more`;
}

/** Lease left and time waited move on between polls. */
function tick() {
  const now = Date.now();
  document.querySelectorAll('tr[data-deadline]').forEach(tr => {
    tr.cells[2].textContent = seconds(Number(tr.dataset.deadline) - now);
  });
  document.querySelectorAll('tr[data-since]').forEach(tr => {
    tr.cells[2].textContent = seconds(now - Number(tr.dataset.since));
  });
}

// ---- chart ---------------------------------------------------------------------------------

function svg(name, attributes) {
  const node = document.createElementNS(SVG, name);
  Object.entries(attributes).forEach(([key, value]) => node.setAttribute(key, value));
  return node;
}

/** A step line through the samples: a value holds until the next sample. */
function steps(history, x, y, value) {
  return history.map((point, i) => {
    const px = x(point.t).toFixed(1);
    const py = y(value(point)).toFixed(1);
    if (i === 0) {
      return `M${px},${py}`;
    }
    return `H${px}V${py}`;
  }).join('');
}

/**
 * Two panels on one time axis: calls in flight against the limit above (its own scale, so the
 * limit line stays readable however long the queue gets), callers waiting below.
 */
function drawChart(chart, history, now) {
  const width = chart.clientWidth || 600;
  const height = chart.clientHeight || 130;
  const left = 28, right = 6, axis = 16, gap = 12;
  const x = t => left + (width - left - right) * (1 - (now - t) / WINDOW_MS);
  const plotHeight = height - axis - gap;
  const upper = {top: 4, bottom: 4 + plotHeight * 0.55, label: 'in flight · limit',
    max: Math.max(1, ...history.map(p => Math.max(p.limit, p.inFlight)))};
  const lower = {top: upper.bottom + gap, bottom: height - axis, label: 'waiting',
    max: Math.max(1, ...history.map(p => p.waiters))};
  const nodes = [];

  for (const panel of [upper, lower]) {
    const top = panel.max + Math.max(1, Math.round(panel.max * 0.15));
    panel.y = v => panel.bottom - (panel.bottom - panel.top) * (v / top);
    [0, panel.max].forEach(v => {
      nodes.push(svg('line', {class: 'grid', x1: left, x2: width - right, y1: panel.y(v), y2: panel.y(v)}));
      const tick = svg('text', {class: 'tick', x: left - 5, y: panel.y(v) + 3, 'text-anchor': 'end'});
      tick.textContent = v;
      nodes.push(tick);
    });
    const label = svg('text', {class: 'panel-label', x: left + 4, y: panel.top + 9});
    label.textContent = panel.label;
    nodes.push(label);
  }
  [[WINDOW_MS, '−60 s', 'start'], [WINDOW_MS / 2, '−30 s', 'middle'], [0, 'now', 'end']].forEach(([ago, text, anchor]) => {
    const label = svg('text', {class: 'tick', x: x(now - ago), y: height - 3, 'text-anchor': anchor});
    label.textContent = text;
    nodes.push(label);
  });

  if (history.length > 1) {
    const end = `H${x(now).toFixed(1)}`;
    const inFlight = steps(history, x, upper.y, p => p.inFlight) + end;
    nodes.push(svg('path', {class: 'in-flight-area',
      d: inFlight + `V${upper.y(0)}H${x(history[0].t).toFixed(1)}Z`}));
    nodes.push(svg('path', {class: 'in-flight-line', d: inFlight}));
    nodes.push(svg('path', {class: 'limit-line', d: steps(history, x, upper.y, p => p.limit) + end}));
    const waiting = steps(history, x, lower.y, p => p.waiters) + end;
    nodes.push(svg('path', {class: 'waiting-area', d: waiting + `V${lower.y(0)}H${x(history[0].t).toFixed(1)}Z`}));
    nodes.push(svg('path', {class: 'waiting-line', d: waiting}));
    chart.dataset.points = history.length;
  }
  chart.setAttribute('viewBox', `0 0 ${width} ${height}`);
  chart.replaceChildren(...nodes);
}

// ---- buttons -------------------------------------------------------------------------------

function say(text, error = false) {
  const message = $('#message');
  message.textContent = text;
  message.classList.toggle('error', error);
}

async function post(path) {
  const response = await fetch(path, {method: 'POST'});
  const body = await response.json().catch(() => ({}));
  if (!response.ok) {
    throw new Error(body.detail || body.message || 'HTTP ' + response.status);
  }
  return body;
}

function fleetNames() {
  return lastState ? lastState.instances.map(member => member.name).join(', ') : 'the fleet';
}

$('#burst-reports').addEventListener('submit', async event => {
  event.preventDefault();
  const calls = $('#report-calls').value;
  try {
    await post('live/bursts/reports?calls=' + encodeURIComponent(calls));
    say(`Fired ${calls} POST /reports at once, spread over ${fleetNames()}.`);
  } catch (e) {
    say('The burst was refused: ' + e.message, true);
  }
});

$('#burst-exports').addEventListener('submit', async event => {
  event.preventDefault();
  const tenant = $('#tenant').value;
  const calls = $('#export-calls').value;
  try {
    await post(`live/bursts/exports?tenant=${encodeURIComponent(tenant)}&calls=${encodeURIComponent(calls)}`);
    say(`Fired ${calls} POST /tenants/${tenant}/exports at once, spread over ${fleetNames()}: one runs, the others get 429.`);
  } catch (e) {
    say('The burst was refused: ' + e.message, true);
  }
});

$('#hold').addEventListener('submit', async event => {
  event.preventDefault();
  const semaphore = $('#hold-semaphore').value;
  const secondsHeld = $('#hold-seconds').value;
  say(`Asking for a permit of ${semaphore}…`);
  try {
    const held = await post(`live/holds?semaphore=${encodeURIComponent(semaphore)}&seconds=${encodeURIComponent(secondsHeld)}`);
    say(`Holding a permit of ${held.semaphore} (fencing token ${held.fencingToken}) for ${held.seconds} s.`);
  } catch (e) {
    say('No permit: ' + e.message, true);
  }
});

async function onRelease(event) {
  const button = event.target.closest('button.release');
  if (!button) {
    return;
  }
  const {semaphore, permitId, path} = button.dataset;
  button.disabled = true;
  try {
    const url = path.replace(/^\//, '') + '/' + encodeURIComponent(semaphore) + '/' + encodeURIComponent(permitId);
    const response = await fetch(url, {method: 'DELETE'});
    if (!response.ok) {
      throw new Error('HTTP ' + response.status);
    }
    const body = await response.json();
    say(body.released
      ? `Released a permit of ${semaphore}; its holder finds it lost at its next renewal.`
      : `That permit of ${semaphore} was no longer held.`);
  } catch (e) {
    say('Could not release: ' + e.message, true);
    button.disabled = false;
  }
}

poll();
setInterval(tick, 100);
