/* The replay page's script: draws the embedded game at one step from one perspective.
   It knows no rule of the game. Every scene (what a perspective shows at a step) and every
   sentence of the narration was computed in Python (experiments/replay), the seats' scenes from
   the engine's visibility rules; the table is drawn by table.js (BibliosTable, shared with the
   play page), and this script steps through the timeline and switches the perspective. */
"use strict";
(function () {
  const DATA = JSON.parse(document.getElementById("game-data").textContent);
  const STEPS = DATA.steps;
  const LAST = STEPS.length - 1;
  const SEATS = DATA.names.length;
  const MARKS = DATA.marks;
  const TABLE = BibliosTable.create(DATA);
  const byId = BibliosTable.byId, h = BibliosTable.h, seatName = TABLE.seatName, shortName = TABLE.shortName;

  let step = 0;
  let view = Math.min(Math.max(DATA.openView || 0, 0), SEATS); // 0: the whole table; 1 + seat: that seat

  function viewerSeat() { return view === 0 ? null : view - 1; }
  /* The final score is shown at the last step of a finished game (there is a score only then). */
  function gameOver() { return DATA.score !== null && step === LAST; }
  /* A scene unpacked: its fields' values from DATA.pieces (a hand per seat). */
  const unpacked = new Map();
  function unpackScene(number) {
    let found = unpacked.get(number);
    if (!found) {
      found = {};
      DATA.sceneFields.forEach((field, index) => {
        const piece = DATA.scenes[number][index];
        found[field] = Array.isArray(piece) ? piece.map((hand) => DATA.pieces[hand]) : DATA.pieces[piece];
      });
      unpacked.set(number, found);
    }
    return found;
  }
  function sceneAt(index, perspective) { return unpackScene(STEPS[index].scenes[perspective]); }

  /* ---------------------------------------------------------------- the narration */
  function landmark(kinds) {
    let found = null;
    for (const mark of MARKS) if (mark.step <= step && kinds.includes(mark.kind)) found = mark;
    return found;
  }

  function renderWhere(scene) {
    const current = STEPS[step];
    const parts = [h("strong", { text: step === 0 ? "The deal" : "Decision " + step + " of " + LAST })];
    parts.push(" · " + DATA.phases[scene.phase]);
    const mark = landmark(["turn", "auction"]);
    if (mark && !gameOver()) parts.push(" · " + mark.label.split(":")[0]);
    if (current.action !== null) {
      parts.push(" · played by " + seatName(current.seat) + (current.forced ? " (its only choice)" : ""));
    }
    byId("where").replaceChildren(...parts);
    const next = byId("next");
    if (scene.toAct) {
      const seat = scene.toAct.seat;
      const who = seat === viewerSeat() ? shortName(seat) + " (you)" : seatName(seat); // "(you) places", never "You places"
      next.replaceChildren("Next: ", h("strong", { text: who }), " " + scene.toAct.doing);
    } else {
      next.replaceChildren(gameOver() ? "The game is over." : "");
    }
  }

  /* An agent's notes on its decision are its own: shown to the whole table and to its own seat. */
  function renderNotes() {
    const shown = view === 0 || view - 1 === STEPS[step].seat;
    const note = shown ? DATA.annotations[String(step)] : undefined;
    const aside = byId("notes");
    aside.hidden = !note;
    const list = byId("notes-list");
    list.replaceChildren();
    if (!note) return;
    for (const [name, text] of note) list.append(h("dt", { text: name }), h("dd", { text: text }));
  }

  /* ---------------------------------------------------------------- perspective and timeline */
  function renderPerspectives() {
    const buttons = DATA.perspectives.map((label, index) => {
      const title = index === 0 ? "Every card (key T)" : "What this seat knows (key " + (index - 1) + ")";
      const pressed = index === view ? "true" : "false";
      const button = h("button", { type: "button", "aria-pressed": pressed, "data-view": index, title: title }, label);
      button.addEventListener("click", () => setView(index));
      return button;
    });
    byId("perspectives").replaceChildren(...buttons);
    const note = byId("perspective-note");
    if (view === 0) {
      note.replaceChildren(h("strong", { text: "Whole table: " }),
        "every hand, the card being placed, the kept cards, the auction pile and the face-down discards are shown. " +
        "A folded corner marks a card the other players have not seen. No player knows all this.");
    } else {
      note.replaceChildren(h("strong", { text: seatName(view - 1) + "'s view: " }),
        "only what this seat knows. Cards hidden from it are drawn face down; other players' cards shown face up " +
        "are those it saw them take; a folded corner marks its own cards the others have not seen.");
    }
  }

  function render() {
    const current = STEPS[step];
    const scene = sceneAt(step, view);
    const score = gameOver() ? DATA.score : null;
    const auction = landmark(["auction"]);
    renderPerspectives();
    renderWhere(scene);
    const who = view === 0 ? "the table" : "this seat";
    TABLE.narration(DATA.narrations[current.lines[view]], "Nothing " + who + " can see happened at this decision.");
    renderNotes();
    TABLE.dice(scene, step > 0 ? sceneAt(step - 1, view).dice : scene.dice);
    TABLE.focus(scene, current.bids, auction ? auction.label.split(":")[0] : "Auction");
    TABLE.piles(scene);
    TABLE.discards(scene);
    TABLE.finalScore(score);
    TABLE.seats(scene, viewerSeat(), score);
    byId("slider").value = String(step);
    let selected = 0;
    MARKS.forEach((mark, index) => { if (mark.step <= step) selected = index; });
    byId("jump").selectedIndex = selected;
    const where = step === 0 ? "the deal" : "decision " + step;
    document.title = "Biblios replay · " + where + " · " + DATA.perspectives[view];
    writeHash();
  }

  function go(target) {
    const next = Math.min(Math.max(Math.round(Number(target) || 0), 0), LAST);
    if (next !== step) { step = next; render(); }
  }

  function setView(index) {
    if (index !== view && index >= 0 && index <= SEATS) { view = index; render(); }
  }

  function nextMark() {
    for (const mark of MARKS) if (mark.step > step) return mark.step;
    return LAST;
  }

  function previousMark() {
    let found = 0;
    for (const mark of MARKS) if (mark.step < step) found = mark.step;
    return found;
  }

  /* The address remembers the step and the perspective (#step=40&view=1): a link can point at a decision. */
  function writeHash() {
    const hash = "#step=" + step + "&view=" + (view === 0 ? "table" : view - 1);
    if (location.hash !== hash) {
      try { location.replace(hash); } catch (error) { /* a browser that refuses: the page works without it */ }
    }
  }

  function readHash() {
    const match = /^#step=(\d+)&view=(table|\d+)$/.exec(location.hash);
    if (!match) return;
    step = Math.min(Number(match[1]), LAST);
    const seat = match[2] === "table" ? -1 : Number(match[2]);
    if (seat < SEATS) view = seat + 1;
  }

  function setUp() {
    byId("subtitle").textContent = DATA.title + " · " + DATA.source;
    const slider = byId("slider");
    slider.max = String(LAST);
    slider.addEventListener("input", () => go(slider.value));
    byId("ticks").replaceChildren(...MARKS.map((mark) => {
      const left = "left:" + (LAST ? (100 * mark.step) / LAST : 0) + "%";
      return h("span", { class: "tick " + mark.kind, style: left, title: mark.label });
    }));
    const jump = byId("jump");
    jump.replaceChildren(...MARKS.map((mark) => h("option", { value: mark.step, text: mark.label })));
    jump.addEventListener("change", () => go(jump.value));
    byId("first").addEventListener("click", () => go(0));
    byId("previous").addEventListener("click", () => go(step - 1));
    byId("next-step").addEventListener("click", () => go(step + 1));
    byId("last").addEventListener("click", () => go(LAST));
    byId("previous-mark").addEventListener("click", () => go(previousMark()));
    byId("next-mark").addEventListener("click", () => go(nextMark()));
    document.addEventListener("keydown", onKey);
    window.addEventListener("hashchange", () => { readHash(); render(); });
    readHash();
    render();
  }

  function onKey(event) {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    if (event.target && event.target.tagName === "SELECT") return;
    const key = event.key;
    if (key === "ArrowRight") go(step + 1);
    else if (key === "ArrowLeft") go(step - 1);
    else if (key === "PageDown") go(nextMark());
    else if (key === "PageUp") go(previousMark());
    else if (key === "Home") go(0);
    else if (key === "End") go(LAST);
    else if (key === "t" || key === "T") setView(0);
    else if (/^[0-9]$/.test(key) && Number(key) < SEATS) setView(Number(key) + 1);
    else return;
    event.preventDefault();
  }

  setUp();
})();
