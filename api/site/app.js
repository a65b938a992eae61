// The live slate page: the day's games from /site/slate, then every game's and market's Wire
// topic over the socket (/v1/wire, subprotocol svc.v1) with a `session` ticket from /site/ticket.
// The session cookie rides along by itself (HttpOnly: this script never sees it). Snapshots and
// deltas are applied by seq; a gap asks for a fresh snapshot; a dropped socket (an API process
// restarted, a network blip) resumes the Wire session, so missed deltas replay without a reload.
"use strict";

(() => {
  const params = new URLSearchParams(location.search);
  const mode = params.get("mode") === "test" ? "test" : "live";
  const day = /^\d{4}-\d{2}-\d{2}$/.test(params.get("date") || "") ? params.get("date") : null;
  const tz = Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
  const MAIN_TYPES = ["h2h", "spreads", "totals"]; // the game lines shown, in this order
  const TYPE_NAMES = { h2h: "Moneyline", spreads: "Spread", totals: "Total" };

  const games = new Map(); // game ID -> {slate item, state (game.state data)}
  const markets = new Map(); // market ID -> {ref, data (header + lines by key), rg_line}
  const seqs = {}; // topic -> last seq applied
  let topics = [];
  let session = null; // {session_id, resume_token} of the Wire session
  let socket = null;
  let backoff = 500;
  let rgLine = "";

  const $ = (id) => document.getElementById(id);
  const kickoffFormat = new Intl.DateTimeFormat(undefined, {
    weekday: "short", hour: "numeric", minute: "2-digit", timeZoneName: "short",
  });
  const dayFormat = new Intl.DateTimeFormat(undefined, {
    weekday: "long", year: "numeric", month: "long", day: "numeric", timeZone: "UTC",
  });

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      node.setAttribute(name, value === true ? "" : String(value));
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  function status(text, down) {
    const node = $("status");
    if (node.textContent !== text) node.textContent = text;
    node.classList.toggle("down", Boolean(down));
  }

  // ---- numbers as people read them --------------------------------------------------------

  function american(decimal) {
    if (!(decimal > 1)) return "";
    const value = decimal >= 2 ? (decimal - 1) * 100 : -100 / (decimal - 1);
    const rounded = Math.round(value);
    return rounded > 0 ? `+${rounded}` : String(rounded);
  }

  function signed(point) {
    if (point === null || point === undefined) return "";
    return point > 0 ? `+${point}` : String(point);
  }

  function percent(p) {
    return p === null || p === undefined ? "–" : `${(p * 100).toFixed(1)}%`;
  }

  // ---- rendering ---------------------------------------------------------------------------

  function teamName(item, side) {
    const team = item[`${side}_team`];
    return team ? team.abbreviation || team.name : side;
  }

  function mainLine(market) {
    const lines = Object.values(market.lines);
    return lines.find((l) => l.is_main) || (lines.length === 1 ? lines[0] : null);
  }

  function outcomeLabel(market, outcome) {
    if (market.type === "totals") return `${outcome.name} ${outcome.point ?? ""}`.trim();
    if (market.type === "spreads") return `${outcome.name} ${signed(outcome.point)}`.trim();
    return outcome.name;
  }

  function marketTable(gameId, ref) {
    const entry = markets.get(ref.id);
    const title = TYPE_NAMES[ref.type] || ref.type;
    if (!entry) return null;
    const line = mainLine(entry.data);
    const suspended = entry.data.status === "suspended";
    const table = el("table", { class: `market${suspended ? " suspended" : ""}`, "data-market": ref.id },
      el("caption", {}, title));
    if (!line || line.basis === "too_few_books") {
      table.append(el("tbody", {}, el("tr", {}, el("td", { colspan: 4 }, "No consensus line yet"))));
    } else {
      table.append(el("thead", {}, el("tr", {},
        el("th", { scope: "col" }, "Selection"),
        el("th", { scope: "col", class: "num" }, "Price"),
        el("th", { scope: "col", class: "num" }, "US"),
        el("th", { scope: "col", class: "num" }, "No-vig"))));
      const body = el("tbody");
      for (const o of line.outcomes) {
        const p = o.probability ? o.probability.multiplicative : null;
        body.append(el("tr", {},
          el("th", { scope: "row" }, outcomeLabel(entry.data, o)),
          el("td", { class: "num price" }, o.price === null ? "–" : Number(o.price).toFixed(2)),
          el("td", { class: "num" }, o.price === null ? "" : american(Number(o.price))),
          el("td", { class: "num prob" }, percent(p))));
      }
      table.append(body);
    }
    const rg = el("p", { class: "rg" }, entry.rg_line || rgLine);
    const books = line && line.books ? el("p", { class: "none" }, `${line.books} books in consensus`) : null;
    return el("div", { class: "market-block", id: `m-${gameId}-${ref.id}` }, table, books, rg);
  }

  function renderGame(id, flash) {
    const entry = games.get(id);
    if (!entry) return;
    const item = entry.item;
    const g = { ...item, ...entry.state };
    const st = g.status || "scheduled";
    const kickoff = g.kickoff_at ? new Date(g.kickoff_at) : null;
    const score = g.score && (g.score.home !== null || g.score.away !== null)
      ? `${teamName(item, "away")} ${g.score.away ?? "–"} – ${g.score.home ?? "–"} ${teamName(item, "home")}`
      : null;
    const clock = st === "live" ? [g.period, g.clock].filter(Boolean).join(" ") : "";
    const shown = item.markets.filter((m) => m.kind === "game" && m.period === "full" && MAIN_TYPES.includes(m.type))
      .sort((a, b) => MAIN_TYPES.indexOf(a.type) - MAIN_TYPES.indexOf(b.type));
    const tables = shown.map((m) => marketTable(id, m)).filter(Boolean);
    const article = el("article", { class: "game", id: `g-${id}`, "data-game": id, "data-status": st,
      "aria-labelledby": `h-${id}` },
      el("h2", { id: `h-${id}` }, g.name || `${teamName(item, "away")} at ${teamName(item, "home")}`),
      el("p", { class: "meta" },
        el("span", { class: `state ${st}` }, st.replace("_", " ")),
        kickoff ? el("time", { datetime: kickoff.toISOString() }, kickoffFormat.format(kickoff))
          : (g.kickoff_date ? el("time", { datetime: g.kickoff_date }, g.kickoff_date) : null),
        g.venue ? el("span", {}, g.venue) : null),
      score ? el("p", { class: "score" }, el("span", { class: "points" }, score),
        clock ? el("span", { class: "clock" }, clock) : null) : null,
      tables.length ? tables : el("p", { class: "none" }, "No lines yet"));
    const old = $(`g-${id}`);
    if (old) {
      // a delta that changes what is shown flashes; snapshots (loading, catching up) do not
      if (flash && old.textContent !== article.textContent) article.classList.add("changed");
      old.replaceWith(article);
    } else {
      $("games").append(article);
    }
  }

  function gameOfTopic(topic) {
    const [kind, id] = topic.split(/:(.*)/s);
    if (kind === "game") return id;
    const entry = markets.get(id);
    return entry ? entry.ref.game_id : null;
  }

  // ---- applying the Wire: snapshots, then deltas by seq ---------------------------------------

  function applyMarket(id, data, whole, rg) {
    let entry = markets.get(id);
    if (!entry) return;
    const lines = whole ? {} : entry.data.lines;
    for (const line of data.lines || []) lines[line.line_key] = line;
    for (const key of data.removed_lines || []) delete lines[key];
    entry.data = { ...data, lines };
    if (rg) entry.rg_line = rg;
  }

  function apply(msg, whole) {
    const [kind, id] = msg.topic.split(/:(.*)/s);
    if (kind === "game") {
      const entry = games.get(id);
      if (entry) entry.state = { ...msg.data };
    } else if (kind === "market") {
      applyMarket(id, msg.data, whole, msg.rg_line);
    }
    seqs[msg.topic] = msg.seq;
    const gameId = gameOfTopic(msg.topic);
    if (gameId) renderGame(gameId, !whole);
  }

  function send(message) {
    if (socket && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(message));
  }

  function onMessage(event) {
    const msg = JSON.parse(event.data);
    switch (msg.op) {
      case "hello":
        session = { session_id: msg.session_id, resume_token: msg.resume_token };
        if (msg.rg_line) rgLine = msg.rg_line;
        backoff = 500;
        status(`Live · updated as it happens (${mode === "test" ? "sandbox" : "live"} data)`);
        if (!socket.resuming) send({ op: "subscribe", topics, request_id: "page" });
        break;
      case "snapshot":
        apply(msg, true);
        break;
      case "delta": {
        const last = seqs[msg.topic];
        if (last !== undefined && msg.seq <= last) break; // a duplicate
        if (last !== undefined && msg.seq !== last + 1) { // a gap: start the topic over
          delete seqs[msg.topic];
          send({ op: "subscribe", topics: [msg.topic], request_id: "gap" });
          break;
        }
        apply(msg, false);
        break;
      }
      case "ping":
        send({ op: "pong", ts: msg.ts });
        break;
      case "drain":
        socket.close(4200, "drain");
        break;
      case "error":
        if (msg.topic && msg.code === "not_found") break; // a game or market gone from the day
        status(`Live updates: ${msg.detail}`, true);
        break;
      default: // ack, feed, resume_failed (snapshots follow), warning
        break;
    }
  }

  async function ticket() {
    const r = await fetch("/site/ticket", {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", Accept: "application/json" },
      body: JSON.stringify({ mode }),
    });
    if (!r.ok) throw new Error(`ticket ${r.status}`);
    return r.json();
  }

  function socketUrl() {
    return `${location.protocol === "https:" ? "wss:" : "ws:"}//${location.host}/v1/wire`;
  }

  async function connect() {
    let first;
    let url = socketUrl();
    try {
      if (session) {
        first = { op: "resume", session_id: session.session_id, resume_token: session.resume_token, last_seq: { ...seqs } };
      } else {
        const t = await ticket();
        url = t.url;
        first = { op: "auth", ticket: t.ticket };
      }
    } catch (err) {
      retry();
      return;
    }
    const ws = new WebSocket(url, ["svc.v1"]);
    ws.resuming = first.op === "resume";
    socket = ws;
    ws.onopen = () => ws.send(JSON.stringify(first));
    ws.onmessage = onMessage;
    ws.onclose = (event) => {
      if (socket !== ws) return;
      socket = null;
      // the session is gone (expired, or its credential refused): start over with a new ticket
      if (event.code === 4011 || event.code === 4001 || event.code === 4030 || event.code === 4013) session = null;
      retry();
    };
  }

  function retry() {
    status("Reconnecting… the page keeps what it shows and catches up when back.", true);
    const wait = backoff;
    backoff = Math.min(backoff * 2, 5000);
    setTimeout(connect, wait);
  }

  // ---- start ---------------------------------------------------------------------------------

  async function start() {
    $("tz").textContent = tz;
    $(mode === "test" ? "link-test" : "link-live").setAttribute("aria-current", "page");
    $("mode-badge").hidden = mode !== "test";
    const query = new URLSearchParams({ mode, tz });
    if (day) query.set("date", day);
    let slate;
    try {
      const r = await fetch(`/site/slate?${query}`, { credentials: "same-origin", headers: { Accept: "application/json" } });
      if (!r.ok) throw new Error(`slate ${r.status}`);
      slate = await r.json();
    } catch (err) {
      status("The slate could not be loaded; reload the page to try again.", true);
      $("games").setAttribute("aria-busy", "false");
      return;
    }
    rgLine = slate.rg_line || "";
    $("rg-footer").textContent = rgLine;
    $("day").textContent = `${dayFormat.format(new Date(`${slate.date}T00:00:00Z`))} · ${slate.game_count} games`;
    for (const item of slate.data) {
      games.set(item.id, { item, state: {} });
      for (const m of item.markets) markets.set(m.id, { ref: { ...m, game_id: item.id }, data: { lines: {} }, rg_line: "" });
      renderGame(item.id);
    }
    if (!slate.data.length) $("games").append(el("p", { class: "empty" }, "No games on this day."));
    $("games").setAttribute("aria-busy", "false");
    const shown = new Set();
    for (const item of slate.data) {
      shown.add(`game:${item.id}`);
      for (const m of item.markets) {
        if (m.kind === "game" && m.period === "full" && MAIN_TYPES.includes(m.type)) shown.add(`market:${m.id}`);
      }
    }
    topics = [...shown];
    if (topics.length) connect();
    else status("Nothing to follow today.");
  }

  start();
})();
