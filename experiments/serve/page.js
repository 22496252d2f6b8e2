/* The play page's script: sets up a game, then shows the player's seat's VIEW as the server's JSON
   API sends it (docs/serve.md) and sends the move clicked. It knows no rule of the game: the server
   sends the legal moves with their labels and the seat's table as a scene, which table.js (shared
   with the replay page) draws. The game's id and token are kept for this tab (sessionStorage), so a
   reload goes on with the game, and shown as a resume link: the page's address with the id and the
   token in its fragment (#game=ID&token=TOKEN), which a browser never sends to the server. Opened,
   or pasted in the setup, it goes on with the game in any tab. While the bots think, the view says
   so and the page asks again (GET; the server answers as soon as they are done, or after a while). */
"use strict";
(function () {
  const CONFIG = JSON.parse(document.getElementById("serve-data").textContent);
  const byId = BibliosTable.byId, h = BibliosTable.h;
  const SAVED = "biblios-serve-game";
  const LARGEST_SEED = Number.MAX_SAFE_INTEGER; // a larger number would not reach the server exactly
  const COMPACT_BIDS = 12; // more bids than this: a list to choose from, so the hand stays in view
  const POLL_MS = 150; // between two questions while the bots think (each GET waits on the server too)

  let game = null; // {id, token}
  let table = null; // the table drawing for this game's seat names
  let tableNames = "";
  let current = null; // the last VIEW
  let busy = false;
  let paused = false;
  let timer = null;

  /* ---------------------------------------------------------------- the API */
  async function call(method, path, body) {
    const headers = {};
    if (game) headers.Authorization = "Bearer " + game.token;
    const options = { method: method, headers: headers };
    if (body !== undefined) {
      headers["Content-Type"] = "application/json";
      options.body = JSON.stringify(body);
    }
    const response = await fetch(path, options);
    const json = (response.headers.get("content-type") || "").includes("application/json");
    const answer = json ? await response.json() : await response.text();
    if (!response.ok) {
      const error = new Error(json && answer.error ? answer.error : "HTTP " + response.status);
      error.view = json ? answer.view : undefined; // a 409 carries the view now
      throw error;
    }
    return answer;
  }

  /* ---------------------------------------------------------------- the resume link */
  function resumeLink(saved) {
    return location.origin + location.pathname + "#game=" + encodeURIComponent(saved.id) +
      "&token=" + encodeURIComponent(saved.token);
  }

  function fromLink(text) {
    const fragment = String(text).split("#")[1] || "";
    const fields = new URLSearchParams(fragment);
    const id = fields.get("game"), token = fields.get("token");
    return id && token ? { id: id, token: token } : null;
  }

  function keep(saved) {
    sessionStorage.setItem(SAVED, JSON.stringify(saved));
    const link = byId("resume-link");
    link.href = link.textContent = resumeLink(saved);
    byId("resume").hidden = false;
  }

  function gamePath(rest) { return "/api/games/" + encodeURIComponent(game.id) + (rest || ""); }

  function showError(id, error) {
    const box = byId(id);
    box.hidden = !error;
    box.textContent = error ? error.message || String(error) : "";
  }

  /* ---------------------------------------------------------------- setting up */
  function range(count) { return Array.from({ length: count }, (_, index) => index); }

  function seatsChanged() {
    const players = Number(byId("players").value);
    const select = byId("seat");
    const seat = Math.min(Number(select.value || 0), players - 1);
    select.replaceChildren(...range(players).map((s) => h("option", { value: s, text: "player_" + s + (s ? "" : " (starts)") })));
    select.value = String(seat);
    const box = byId("opponent-inputs");
    const typed = [...box.querySelectorAll("input")].map((input) => input.value);
    const others = range(players).filter((s) => s !== seat);
    box.replaceChildren(...others.map((s, index) => h("label", {}, ["player_" + s, h("input", {
      class: "opponent", list: "agent-names", autocomplete: "off", "data-seat": s,
      value: typed[index] || CONFIG.defaultOpponent,
    })])));
  }

  function newGameRequest() {
    const request = {
      players: Number(byId("players").value),
      seat: Number(byId("seat").value),
      opponents: [...document.querySelectorAll("#opponent-inputs input")].map((input) => input.value.trim()),
    };
    const seed = byId("seed").value.trim();
    if (seed) {
      if (!/^\d+$/.test(seed) || Number(seed) > LARGEST_SEED) {
        throw new Error("the seed is a whole number from 0 to " + LARGEST_SEED + " (or empty for a random deal)");
      }
      request.seed = Number(seed);
    }
    if (byId("watch").checked) request.autoplay = byId("autoplay").value.trim();
    return request;
  }

  async function start(event) {
    event.preventDefault();
    showError("setup-error", null);
    byId("start").disabled = true;
    try {
      const request = newGameRequest();
      game = null;
      const made = await call("POST", "/api/games", request);
      game = { id: made.game_id, token: made.token };
      keep(game);
      paused = false;
      show(made.view);
    } catch (error) {
      showError("setup-error", error);
    } finally {
      byId("start").disabled = false;
    }
  }

  function newGame() {
    clearTimeout(timer);
    sessionStorage.removeItem(SAVED);
    if (location.hash) history.replaceState(null, "", location.pathname);
    game = current = table = null;
    byId("game").hidden = true;
    byId("resume").hidden = true;
    byId("setup").hidden = false;
  }

  /* ---------------------------------------------------------------- the game */
  function nextLine(view) {
    const scene = view.table;
    if (view.finished) return ["The game is over."];
    if (view.your_turn) return [h("strong", { text: "Your turn" }), ": choose below."];
    if (!scene.toAct) return [""];
    const who = scene.toAct.seat === view.seat ? "Your bot (" + view.names[view.seat] + ")" : view.names[scene.toAct.seat];
    return ["Next: ", h("strong", { text: who }), " " + scene.toAct.doing];
  }

  function actionButton(item, payable) {
    const button = h("button", { type: "button", class: "action", "data-action": item.action, text: item.label });
    if (!payable) {
      button.disabled = true;
      button.classList.add("unpayable");
      button.title = "you cannot pay this bid";
    }
    button.addEventListener("click", () => play(item.action));
    return button;
  }

  /* Bids: one button each, those you cannot pay disabled and marked; past COMPACT_BIDS a list to
     choose from and one button, so the hand stays in view on a phone. */
  function bidControl(view) {
    const pass = view.legal_actions.filter((item) => item.label === "pass");
    const bids = view.legal_actions.filter((item) => item.label !== "pass");
    const payable = (item) => Number(item.label.split(" ")[1]) <= view.can_pay;
    if (bids.length <= COMPACT_BIDS) return view.legal_actions.map((item) => actionButton(item, item.label === "pass" || payable(item)));
    const select = h("select", { id: "bid-amount", "aria-label": "Your bid" }, bids.map((item) => {
      const option = h("option", { value: item.action, text: item.label + (payable(item) ? "" : " (you cannot pay)") });
      option.disabled = !payable(item);
      return option;
    }));
    const affordable = bids.filter(payable);
    if (affordable.length) select.value = String(affordable[0].action);
    const place = h("button", { type: "button", class: "action" + (affordable.length ? "" : " unpayable"), id: "bid-button", text: "Bid" });
    place.disabled = !affordable.length;
    place.addEventListener("click", () => play(Number(select.value)));
    const note = h("span", { class: "bid-note", text: affordable.length < bids.length ? "bids above " + view.can_pay + " you cannot pay" : "" });
    return [...pass.map((item) => actionButton(item, true)), h("span", { class: "bid-picker" }, [select, place]), note];
  }

  function renderActions(view) {
    const bidding = view.can_pay !== null && view.can_pay !== undefined;
    const controls = bidding ? bidControl(view) : view.legal_actions.map((item) => actionButton(item, true));
    byId("actions").replaceChildren(...controls);
    byId("actions").classList.toggle("many", controls.length > COMPACT_BIDS);
    byId("question").textContent = view.your_turn ? view.question : "";
    byId("hint").hidden = !view.your_turn;
    byId("hint-text").textContent = "";
  }

  function renderFinal(view) {
    const box = byId("final");
    box.hidden = !view.finished;
    if (!view.finished) return;
    byId("final-scores").replaceChildren(...view.scores.map((vp, seat) => h("span", {
      class: "final-score" + (view.score.winners.includes(seat) ? " winner" : ""), text: view.names[seat] + ": " + vp + " VP",
    })));
    offerFiles();
  }

  /* The replay page and the log, fetched with the token and offered as files of this tab. */
  async function offerFiles() {
    try {
      const html = await call("GET", gamePath("/replay"));
      const replay = byId("replay-link");
      replay.href = URL.createObjectURL(new Blob([html], { type: "text/html" }));
      const log = await call("GET", gamePath("/log"));
      const link = byId("log-link");
      link.href = URL.createObjectURL(new Blob([JSON.stringify(log)], { type: "application/json" }));
      link.download = "biblios-" + game.id + ".json";
    } catch (error) {
      showError("game-error", error);
    }
  }

  function show(view) {
    current = view;
    if (!table || tableNames !== view.names.join("\n")) {
      table = BibliosTable.create(Object.assign({}, CONFIG, { names: view.names }));
      tableNames = view.names.join("\n");
    }
    byId("setup").hidden = true;
    byId("game").hidden = false;
    const scene = view.table;
    const where = [h("strong", { text: "Move " + view.moves }), " · " + CONFIG.phases[scene.phase]];
    if (view.landmark && !view.finished) where.push(" · " + view.landmark.split(":")[0]);
    where.push(" · you are " + view.names[view.seat] + (view.autoplay ? ", played by a bot" : ""));
    byId("where").replaceChildren(...where);
    table.narration(view.narration, "Nothing you can see has happened yet.");
    byId("narration").scrollTop = byId("narration").scrollHeight; // the latest news last, in sight
    byId("next").replaceChildren(...nextLine(view));
    renderActions(view);
    const auction = view.landmark.startsWith("Auction ") ? view.landmark.split(":")[0] : "Auction";
    table.dice(scene, scene.dice);
    table.focus(scene, view.bids, auction);
    table.piles(scene);
    table.discards(scene);
    table.finalScore(view.score);
    table.seats(scene, view.seat, view.score);
    renderFinal(view);
    byId("pause").hidden = byId("speed-label").hidden = !view.autoplay || view.finished;
    byId("pause").textContent = paused ? "Go on" : "Pause";
    document.title = "Biblios · move " + view.moves + (view.your_turn ? " · your turn" : "");
    showError("game-error", view.error ? new Error("The game was stopped by an error: " + view.error) : null);
    if (view.thinking) {
      byId("next").replaceChildren("The bots are thinking…");
      poll();
    } else if (view.autoplay) watch();
  }

  /* While the bots think: ask again until they are done. */
  function poll() {
    clearTimeout(timer);
    const asked = game;
    timer = setTimeout(async () => {
      if (game !== asked) return;
      try {
        show(await call("GET", gamePath()));
      } catch (error) {
        showError("game-error", error);
      }
    }, POLL_MS);
  }

  function setBusy(flag) {
    busy = flag;
    for (const button of document.querySelectorAll("#actions button, #hint")) {
      button.disabled = flag || button.classList.contains("unpayable"); // a bid you cannot pay stays disabled
    }
    if (flag) byId("next").replaceChildren("Sent; the bots are playing…");
  }

  async function play(action) {
    if (busy) return;
    setBusy(true);
    showError("game-error", null);
    try {
      show(await call("POST", gamePath("/actions"), { action: action, moves: current.moves }));
    } catch (error) {
      showError("game-error", error);
      if (error.view) show(error.view); // the game had moved on: its view now
      else byId("next").replaceChildren(...nextLine(current));
    } finally {
      setBusy(false);
    }
  }

  async function hint() {
    showError("game-error", null);
    try {
      const suggestion = await call("GET", gamePath("/hint"));
      byId("hint-text").textContent = "The " + suggestion.agent + " heuristic would play: " + suggestion.label;
      for (const button of document.querySelectorAll("#actions button")) {
        button.classList.toggle("hinted", Number(button.dataset.action) === suggestion.action);
      }
    } catch (error) {
      showError("game-error", error);
    }
  }

  /* A watched game moves one decision at a time, at the chosen speed, until it ends or is paused. */
  function watch() {
    clearTimeout(timer);
    if (paused || !current || current.finished || !game) return;
    timer = setTimeout(async () => {
      try {
        show(await call("POST", gamePath("/step")));
      } catch (error) {
        if (error.view) return show(error.view); // the bots were still moving: follow them
        paused = true;
        byId("pause").textContent = "Go on";
        showError("game-error", error);
      }
    }, Number(byId("speed").value));
  }

  function togglePause() {
    paused = !paused;
    byId("pause").textContent = paused ? "Go on" : "Pause";
    if (paused) clearTimeout(timer);
    else watch();
  }

  /* A resume link opened (or pasted), or a reload, goes on with its game if the server still has it. */
  async function resume(saved) {
    if (!saved) return;
    try {
      game = saved;
      keep(game);
      show(await call("GET", gamePath()));
    } catch (error) {
      newGame();
      showError("setup-error", new Error("The game could not be resumed: " + error.message));
    }
  }

  function pasted(event) {
    event.preventDefault();
    const saved = fromLink(byId("resume-input").value);
    if (!saved) {
      showError("setup-error", new Error("A resume link ends in #game=ID&token=TOKEN; this one does not"));
      return;
    }
    showError("setup-error", null);
    resume(saved);
  }

  function setUp() {
    byId("storage-note").textContent = CONFIG.persistent
      ? "Games are saved on the server after every move: a restarted server goes on with them."
      : "Games live in this server's memory only: they are lost when it stops (start it with --data DIR to keep them).";
    byId("agent-names").replaceChildren(...CONFIG.agents.map((name) => h("option", { value: name })));
    byId("autoplay").value = CONFIG.defaultOpponent;
    byId("players").addEventListener("change", seatsChanged);
    byId("seat").addEventListener("change", seatsChanged);
    byId("setup-form").addEventListener("submit", start);
    byId("hint").addEventListener("click", hint);
    byId("pause").addEventListener("click", togglePause);
    byId("new-game").addEventListener("click", newGame);
    byId("resume-form").addEventListener("submit", pasted);
    seatsChanged();
    const stored = sessionStorage.getItem(SAVED);
    resume(fromLink(location.hash) || (stored ? JSON.parse(stored) : null));
  }

  setUp();
})();
