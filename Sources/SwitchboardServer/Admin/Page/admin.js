// The Switchboard admin page: everything through the server API (POST /api/<method>), the key
// kept in sessionStorage and sent only in the Authorization header. Text from the server is put
// in the page as text (textContent), never as markup.
"use strict";

const KEY = "switchboard.apiKey";
const REFRESH_MS = 1000;
const BUSIEST = 10;
const ARMED_MS = 4000;

const state = {
  app: null,          // the app shown
  channel: null,      // {type, name}
  user: null,         // user id shown
  previous: null,     // last counters and when: {at, deliveries, publishes}
  armed: new Map(),   // action key -> timer, for buttons that need a second click
  rendered: new Map(),// section -> what it last showed, so unchanged data is not redrawn
  timer: null,
  refreshing: false,  // a refresh is under way
  again: false,       // another was asked for meanwhile
  rounds: 0,          // refreshes completed since the key was given
};

const $ = (id) => document.getElementById(id);

/** An element with properties, class and children (strings become text). */
function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (name === "class") node.className = value;
    else if (name === "data") for (const [k, v] of Object.entries(value)) node.dataset[k] = v;
    else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else node[name] = value;
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    node.append(typeof child === "string" || typeof child === "number" ? document.createTextNode(String(child)) : child);
  }
  return node;
}

/** Redraws `section` with `draw` only when `data` changed since the last time. */
function renderOnce(section, data, draw) {
  const text = JSON.stringify(data);
  if (state.rendered.get(section) === text) return;
  state.rendered.set(section, text);
  draw();
}

/** The state of the refreshes: when the page last read the server, or why it could not. */
function setStatus(text, isError = false) {
  const status = $("status");
  status.textContent = text;
  status.className = isError ? "error" : "muted";
}

/** What the operator's last action did; stays until the next action. */
function setNotice(text, isError = false) {
  const notice = $("notice");
  notice.textContent = text;
  notice.className = isError ? "error" : "notice";
}

// MARK: The API

class APIError extends Error {
  constructor(status, body) {
    super(body && body.reason ? body.reason : "HTTP " + status);
    this.status = status;
    this.body = body;
  }
}

/** Calls one method; answers its result or throws an APIError. */
async function api(method, params = {}) {
  const key = sessionStorage.getItem(KEY);
  if (!key) throw new APIError(401, { reason: "no API key" });
  const response = await fetch("/api/" + method, {
    method: "POST",
    headers: { "Authorization": "apikey " + key, "Content-Type": "application/json" },
    body: JSON.stringify(params),
    cache: "no-store",
    credentials: "omit",
  });
  const text = await response.text();
  let body = null;
  try { body = JSON.parse(text); } catch (_) { body = { reason: text.trim() }; }
  if (response.status === 401) { askForKey("The server refused this key."); }
  if (response.status === 404 && !text.startsWith("{")) {
    throw new APIError(404, { reason: "the server API is off: start the server with --api-key-file" });
  }
  if (!response.ok) throw new APIError(response.status, body);
  return body;
}

/** Runs `calls` ([method, params]) as one batch; answers each call's {result} or {error}. */
async function batch(calls) {
  const answer = await api("batch", { calls: calls.map(([method, params]) => ({ method, params })) });
  return answer.results.map((r) => (r.status === 200 ? { result: r.result } : { error: r.error || { reason: "HTTP " + r.status } }));
}

// MARK: The key

function askForKey(message = "") {
  sessionStorage.removeItem(KEY);
  clearTimeout(state.timer);
  $("console").hidden = true;
  $("forget-key").hidden = true;
  $("login").hidden = false;
  $("login-error").textContent = message;
  $("api-key").value = "";
  $("api-key").focus();
}

function openConsole() {
  $("login").hidden = true;
  $("console").hidden = false;
  $("forget-key").hidden = false;
  state.rendered.clear();
  state.rounds = 0;
  refresh();
}

// MARK: Refreshing

/** Reads everything shown, then again a second later; a call while one runs runs once after it. */
async function refresh() {
  if (state.refreshing) { state.again = true; return; }
  state.refreshing = true;
  clearTimeout(state.timer);
  const started = performance.now();
  try {
    await Promise.all([refreshHealth(), refreshAPI()]);
    setStatus("updated " + new Date().toLocaleTimeString());
    // How many rounds the page has shown since the key: what it shows is at most this many
    // seconds of its schedule old (a test reads it).
    document.body.dataset.refreshes = String(++state.rounds);
  } catch (error) {
    if (error.status !== 401) setStatus(error.message, true);
  } finally {
    state.refreshing = false;
  }
  if (!sessionStorage.getItem(KEY)) return;
  if (state.again) {
    state.again = false;
    refresh();
  } else {
    state.timer = setTimeout(refresh, Math.max(0, REFRESH_MS - (performance.now() - started)));
  }
}

async function refreshHealth() {
  const badge = $("health");
  try {
    const response = await fetch("/health/ready", { cache: "no-store", credentials: "omit" });
    const report = await response.json();
    const failing = Object.entries(report.checks || {}).filter(([, v]) => v !== "ok");
    badge.textContent = response.ok ? "ready" : "not ready: " + failing.map(([k, v]) => k + " " + v).join(", ");
    badge.className = "badge " + (response.ok ? "ok" : "bad");
    renderOnce("checks", report.checks, () => {
      $("checks").replaceChildren(...Object.entries(report.checks || {}).flatMap(([name, value]) =>
        [el("dt", {}, name), el("dd", {}, el("span", { class: "badge " + (value === "ok" ? "ok" : "bad") }, value))]));
    });
  } catch (_) {
    badge.textContent = "unreachable";
    badge.className = "badge bad";
  }
}

async function refreshAPI() {
  const app = state.app;
  const channel = state.channel;
  const user = state.user;
  const calls = [["counters", {}], ["info", app ? { appId: app } : {}]];
  if (app) calls.push(["channels", { appId: app, limit: 1000 }]);
  const where = channel && { appId: app, channelType: channel.type, channel: channel.name };
  if (where) calls.push(["presence", { ...where, includeState: true }], ["getChannelMetadata", where], ["getLocks", where]);
  if (app && user) calls.push(["sessions", { appId: app, userId: user }], ["whereNow", { appId: app, userId: user }]);
  const results = await batch(calls);
  let next = 0;
  const take = () => results[next++];
  showCounters(take().result);
  const info = take();
  showNodes(info);
  if (app) {
    showApp(info);
    showChannels(take());
  }
  if (where) showChannel(take(), take(), take());
  if (app && user) showUser(take(), take());
}

// MARK: Counters, nodes, apps

function sum(counts) { return Object.values(counts || {}).reduce((a, b) => a + b, 0); }
function number(n) { return Number(n).toLocaleString("en-US"); }
function rate(n) { return n >= 100 ? number(Math.round(n)) : n.toFixed(1); }

function showCounters(c) {
  const connections = c.connections.loggedIn + c.connections.awaitingLogin;
  $("count-connections").textContent = number(connections);
  $("count-connections-detail").textContent = number(c.connections.loggedIn) + " logged in, " + number(c.connections.awaitingLogin) + " not yet";
  $("count-sessions").textContent = number(c.sessions.attached + c.sessions.detached);
  $("count-sessions-detail").textContent = number(c.sessions.attached) + " connected, " + number(c.sessions.detached) + " awaiting resume";
  $("count-logins").textContent = number(c.logins);
  $("uptime").textContent = "up " + duration(c.uptimeSeconds);
  const now = performance.now();
  const deliveries = sum(c.deliveries);
  const publishes = sum(c.publishes);
  $("count-deliveries").textContent = number(deliveries) + " in all";
  $("count-publishes").textContent = number(publishes) + " in all";
  if (state.previous) {
    const seconds = (now - state.previous.at) / 1000;
    if (seconds > 0) {
      $("rate-deliveries").textContent = rate((deliveries - state.previous.deliveries) / seconds);
      $("rate-publishes").textContent = rate((publishes - state.previous.publishes) / seconds);
    }
  }
  state.previous = { at: now, deliveries, publishes };

  $("node-url").textContent = c.node.url;

  if (!state.app && c.apps.length > 0) {
    const busiest = [...c.apps].sort((a, b) => b.connections - a.connections)[0];
    selectApp(busiest.appId);
  }
  renderOnce("apps", [c.apps, state.app], () => {
    $("apps").replaceChildren(...c.apps.map((a) =>
      el("button", { type: "button", class: a.appId === state.app ? "selected" : "", data: { app: a.appId }, onclick: () => selectApp(a.appId) },
        a.appId + " · " + number(a.connections))));
  });
}

/** The nodes `info` lists: each one's health (the failing checks named), version, uptime and load. */
function showNodes(answer) {
  renderOnce("nodes", answer.error ? answer : answer.result.nodes.concat([answer.result.nodesUnavailable || ""]), () => {
    const body = $("nodes").tBodies[0];
    const note = $("nodes-note");
    if (answer.error) { body.replaceChildren(errorRow(answer.error, 6)); note.hidden = true; return; }
    const info = answer.result;
    note.hidden = !info.nodesUnavailable;
    note.textContent = info.nodesUnavailable ? "Only this node is listed: " + info.nodesUnavailable : "";
    body.replaceChildren(...info.nodes.map((n) => {
      const name = el("td", {}, el("span", { class: "mono" }, n.nodeId || n.host || "?"), n.self ? el("span", { class: "muted" }, " (this node)") : null,
        n.url ? el("div", { class: "muted mono" }, n.url) : null);
      if (n.ready === undefined) {
        return el("tr", { data: { node: n.nodeId || "", self: String(n.self) } }, name, el("td", { colSpan: 5, class: "muted" }, "no status published"));
      }
      const failing = Object.entries(n.checks || {}).filter(([, v]) => v !== "ok");
      const health = el("span", { class: "badge " + (n.ready ? "ok" : "bad") },
        n.ready ? "ready" : "not ready: " + failing.map(([k, v]) => k + " " + v).join(", "));
      return el("tr", { data: { node: n.nodeId || "", self: String(n.self), ready: String(n.ready) } }, name,
        el("td", { data: { field: "health" } }, health),
        el("td", { data: { field: "version" } }, n.version),
        el("td", { data: { field: "uptime" } }, duration(n.uptimeSeconds)),
        el("td", { data: { field: "connections" } }, number(n.connections)),
        el("td", { data: { field: "sessions" } }, number(n.sessions.attached + n.sessions.detached)));
    }));
  });
}

function duration(seconds) {
  if (seconds < 60) return seconds + " s";
  if (seconds < 3600) return Math.floor(seconds / 60) + " min";
  if (seconds < 86400) return Math.floor(seconds / 3600) + " h " + Math.floor((seconds % 3600) / 60) + " min";
  return Math.floor(seconds / 86400) + " d " + Math.floor((seconds % 86400) / 3600) + " h";
}

function showApp(answer) {
  renderOnce("app", answer, () => {
    const list = $("app-counts");
    if (answer.error) { list.replaceChildren(el("dt", {}, "error"), el("dd", { class: "error" }, answer.error.reason)); return; }
    const a = answer.result.app;
    const rows = [];
    if (a.sessions !== undefined) rows.push(["Sessions", number(a.sessions) + " (" + number(a.suspendedSessions) + " awaiting resume)"], ["Users", number(a.users)]);
    if (a.channels) {
      rows.push(["Message channels", number(a.channels.message.channels) + " with " + number(a.channels.message.members) + " members"]);
      rows.push(["Stream channels", number(a.channels.stream.channels) + " with " + number(a.channels.stream.members) + " members"]);
    }
    if (a.locks) rows.push(["Locks", number(a.locks.locks) + " (" + number(a.locks.held) + " held, " + number(a.locks.waiters) + " waiting)"]);
    if (a.acrossNodes) {
      rows.push(["On every node", number(a.acrossNodes.sessions) + " sessions, " + number(a.acrossNodes.connections) + " connections on " +
        number(answer.result.nodes.length) + " node" + (answer.result.nodes.length === 1 ? "" : "s")]);
    }
    rows.push(["Server", answer.result.version]);
    list.replaceChildren(...rows.flatMap(([name, value]) => [el("dt", {}, name), el("dd", {}, value)]));
  });
}

function applyApp(appId) {
  state.app = appId;
  state.channel = null;
  state.user = null;
  $("channel").hidden = true;
  $("user").hidden = true;
  $("channels-app").textContent = "in " + appId;
  state.rendered.clear();
}

function selectApp(appId) {
  if (state.app === appId) return;
  applyApp(appId);
  saveView();
  refresh();
}

/** What is open goes in the address (#app=…&channel=type:name&user=…; never the key), so a
 * reload or a link opens it again. */
function saveView() {
  const params = new URLSearchParams();
  if (state.app) params.set("app", state.app);
  if (state.channel) params.set("channel", state.channel.type + ":" + state.channel.name);
  if (state.user) params.set("user", state.user);
  history.replaceState(null, "", "#" + params.toString());
}

function restoreView() {
  const params = new URLSearchParams(location.hash.slice(1));
  const app = params.get("app");
  if (!app) return;
  applyApp(app);
  const channel = params.get("channel") || "";
  const colon = channel.indexOf(":");
  if (colon > 0) applyChannel(channel.slice(0, colon), channel.slice(colon + 1));
  if (params.get("user")) applyUser(params.get("user"));
}

// MARK: Channels

function showChannels(answer) {
  renderOnce("channels", [answer, state.channel], () => {
    const body = $("channels").tBodies[0];
    if (answer.error) { body.replaceChildren(el("tr", {}, el("td", { class: "error", colSpan: 4 }, answer.error.reason))); return; }
    const busiest = [...answer.result.channels].sort((a, b) => b.members - a.members || a.channel.localeCompare(b.channel)).slice(0, BUSIEST);
    $("channels-empty").hidden = busiest.length > 0;
    body.replaceChildren(...busiest.map((c) => {
      const selected = state.channel && state.channel.name === c.channel && state.channel.type === c.channelType;
      return el("tr", { class: "clickable" + (selected ? " selected" : ""), data: { channel: c.channel, channelType: c.channelType },
        onclick: () => selectChannel(c.channelType, c.channel) },
      el("td", { class: "mono" }, c.channel), el("td", {}, c.channelType), el("td", {}, number(c.members)), el("td", {}, number(c.users)));
    }));
  });
}

function applyChannel(type, name) {
  state.channel = { type, name };
  $("channel").hidden = false;
  $("channel-name").textContent = name;
  $("channel-type").textContent = type;
  $("publish-form").hidden = type !== "message";
  state.rendered.delete("channels");
}

function selectChannel(type, name) {
  applyChannel(type, name);
  saveView();
  refresh();
}

function showChannel(presence, metadata, locks) {
  const channel = state.channel;
  renderOnce("members", [presence, [...state.armed.keys()]], () => {
    const body = $("members").tBodies[0];
    if (presence.error) { body.replaceChildren(errorRow(presence.error, 3)); $("channel-occupancy").textContent = ""; return; }
    $("channel-occupancy").textContent = number(presence.result.totalOccupancy) + " members";
    body.replaceChildren(...presence.result.users.map((u) => el("tr", { data: { user: u.userId } },
      el("td", {}, el("a", { href: "#", class: "mono", onclick: (e) => { e.preventDefault(); selectUser(u.userId); } }, u.userId)),
      el("td", {}, states(u.states)),
      el("td", {}, kickButton(u.userId)))));
  });
  renderOnce("metadata", metadata, () => {
    const body = $("metadata").tBodies[0];
    if (metadata.error) {
      $("metadata-revision").textContent = "";
      body.replaceChildren(metadata.error.code === -12009 ? emptyRow("No metadata.", 4) : errorRow(metadata.error, 4));
      return;
    }
    const set = metadata.result;
    $("metadata-revision").textContent = "revision " + set.majorRevision;
    body.replaceChildren(...(set.items.length ? set.items.map((i) => el("tr", {},
      el("td", { class: "mono" }, i.key), el("td", { class: "mono" }, i.value), el("td", {}, String(i.revision)), el("td", {}, i.authorUserId || "")))
      : [emptyRow("No metadata.", 4)]));
  });
  renderOnce("locks", [locks, [...state.armed.keys()]], () => {
    const body = $("locks").tBodies[0];
    if (locks.error) { body.replaceChildren(errorRow(locks.error, 5)); return; }
    body.replaceChildren(...(locks.result.locks.length ? locks.result.locks.map((l) => el("tr", { data: { lock: l.lockName } },
      el("td", { class: "mono" }, l.lockName), el("td", {}, l.owner || "free"), el("td", {}, l.ttl + " s"), el("td", {}, String(l.fencingToken)),
      el("td", {}, l.owner ? revokeButton(channel, l.lockName, l.owner) : "")))
      : [emptyRow("No locks.", 5)]));
  });
}

function states(map) {
  const entries = Object.entries(map || {});
  return el("div", { class: "states" }, ...entries.map(([k, v]) => el("span", { class: "mono" }, k + "=" + v)));
}

function errorRow(error, columns) {
  return el("tr", {}, el("td", { class: "error", colSpan: columns }, error.reason || "error " + error.code));
}

function emptyRow(text, columns) {
  return el("tr", {}, el("td", { class: "muted", colSpan: columns }, text));
}

// MARK: Users

function applyUser(userId) {
  state.user = userId;
  $("user-id").value = userId;
  $("user").hidden = false;
  $("user-name").textContent = userId;
}

function selectUser(userId) {
  applyUser(userId);
  saveView();
  refresh();
}

function showUser(sessions, where) {
  renderOnce("user", [sessions, where, [...state.armed.keys()]], () => {
    const kick = kickButton(state.user);
    kick.id = "user-kick";
    $("user-kick").replaceWith(kick);
    const body = $("user-sessions").tBodies[0];
    if (sessions.error) body.replaceChildren(errorRow(sessions.error, 4));
    else if (!sessions.result.sessions.length) body.replaceChildren(emptyRow("No session.", 4));
    else body.replaceChildren(...sessions.result.sessions.map((s) => el("tr", {},
      el("td", { class: "mono" }, "#" + s.session),
      el("td", {}, el("span", { class: "badge " + (s.connected ? "ok" : "warn") }, s.connected ? "connected" : "awaiting resume")),
      el("td", { class: "mono" }, s.address || ""),
      el("td", {}, new Date(s.lastSeenMs).toLocaleTimeString()))));
    const list = $("user-channels");
    if (where.error) list.replaceChildren(el("li", { class: "error" }, where.error.reason));
    else if (!where.result.channels.length) list.replaceChildren(el("li", { class: "muted" }, "In no channel."));
    else list.replaceChildren(...where.result.channels.map((c) => el("li", {},
      el("a", { href: "#", class: "mono", onclick: (e) => { e.preventDefault(); selectChannel(c.channelType, c.channel); } }, c.channel),
      " ", el("span", { class: "muted" }, c.channelType))));
  });
}

// MARK: Actions

/** A button that acts on its second click within a few seconds (the first arms it). */
function twoStepButton(key, label, confirmLabel, data, action) {
  const armed = state.armed.has(key);
  return el("button", {
    type: "button", class: "danger" + (armed ? " armed" : ""), data,
    onclick: async () => {
      if (!state.armed.has(key)) {
        state.armed.set(key, setTimeout(() => { state.armed.delete(key); refresh(); }, ARMED_MS));
        refresh();
        return;
      }
      clearTimeout(state.armed.get(key));
      state.armed.delete(key);
      try {
        setNotice(await action());
      } catch (error) {
        setNotice(error.message, true);
      }
      refresh();
    },
  }, armed ? confirmLabel : label);
}

function kickButton(userId) {
  return twoStepButton("kick:" + userId, "Kick", "Confirm kick", { action: "kick", user: userId }, async () => {
    const answer = await api("disconnect", { appId: state.app, userId, reason: "kicked from the admin page" });
    return userId + ": " + answer.sessions + " session" + (answer.sessions === 1 ? "" : "s") + " ended";
  });
}

function revokeButton(channel, lockName, owner) {
  return twoStepButton("revoke:" + channel.type + ":" + channel.name + ":" + lockName, "Revoke", "Confirm revoke",
    { action: "revoke", lock: lockName }, async () => {
      await api("revokeLock", { appId: state.app, channelType: channel.type, channel: channel.name, lockName, userId: owner });
      return "lock " + lockName + " taken from " + owner;
    });
}

async function publish(event) {
  event.preventDefault();
  const channel = state.channel;
  if (!channel) return;
  const params = { appId: state.app, channel: channel.name, message: $("publish-message").value };
  const customType = $("publish-type").value;
  if (customType) params.customType = customType;
  try {
    await api("publish", params);
    setNotice("published to " + channel.name);
  } catch (error) {
    setNotice(error.message, true);
  }
}

// MARK: Start

document.addEventListener("DOMContentLoaded", () => {
  $("login-form").addEventListener("submit", (event) => {
    event.preventDefault();
    sessionStorage.setItem(KEY, $("api-key").value);
    openConsole();
  });
  $("forget-key").addEventListener("click", () => askForKey());
  $("app-form").addEventListener("submit", (event) => { event.preventDefault(); selectApp($("app-id").value.trim()); });
  $("user-form").addEventListener("submit", (event) => { event.preventDefault(); selectUser($("user-id").value.trim()); });
  $("publish-form").addEventListener("submit", publish);
  restoreView();
  if (sessionStorage.getItem(KEY)) openConsole();
  else askForKey();
});
