/* The replay page's script: draws the embedded game at one step from one perspective.
   It knows no rule of the game. Every scene (what a perspective shows at a step) and every
   sentence of the narration was computed in Python (experiments/replay), the seats' scenes from
   the engine's visibility rules; this script only lays them out and steps through them. */
"use strict";
(function () {
  const DATA = JSON.parse(document.getElementById("game-data").textContent);
  const STEPS = DATA.steps;
  const LAST = STEPS.length - 1;
  const SEATS = DATA.names.length;
  const MARKS = DATA.marks;
  // The fields of a DATA.cards entry.
  const KIND = 0, CATEGORY = 1, VALUE = 2, NAME = 4, CAPTION = 5;

  let step = 0;
  let view = Math.min(Math.max(DATA.openView || 0, 0), SEATS); // 0: the whole table; 1 + seat: that seat

  function byId(id) { return document.getElementById(id); }

  /* An element: props "class", "text", "colour" (the --c custom property) or any attribute;
     children are nodes or strings (always added as text, never parsed as HTML). */
  function h(tag, props, children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(props || {})) {
      if (value === undefined || value === null || value === false) continue;
      if (key === "class") node.className = value;
      else if (key === "text") node.textContent = String(value);
      else if (key === "colour") node.style.setProperty("--c", value);
      else node.setAttribute(key, value === true ? "" : String(value));
    }
    for (const child of [].concat(children === undefined ? [] : children)) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : String(child));
    }
    return node;
  }

  function seatName(seat) { return DATA.names[seat]; }
  function shortName(seat) { return "player_" + seat; }
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

  function cardColour(card) {
    const info = DATA.cards[card];
    if (info[KIND] === "gold") return DATA.colours.gold;
    if (info[KIND] === "church") return DATA.colours.church;
    return DATA.colours.categories[info[CATEGORY]];
  }

  /* A card tile (value big, letter or kind small), or a face-down tile for card === null. */
  function tile(card, size, extra) {
    const classes = ["tile", size || "", extra || ""];
    if (card === null) {
      classes.push("down");
      return h("span", { class: classes.join(" "), title: "a face-down card", "aria-label": "face-down card" },
        h("span", { class: "value", text: "?" }));
    }
    const info = DATA.cards[card];
    classes.push(info[KIND]);
    const church = info[KIND] === "church";
    const props = { class: classes.join(" "), colour: cardColour(card), title: info[NAME], "aria-label": info[NAME] };
    return h("span", props, [
      h("span", { class: "value", text: church ? info[CAPTION] : info[VALUE] }),
      h("span", { class: "caption", text: church ? "church" : info[CAPTION] }),
    ]);
  }

  /* Tiles in a row, then ``hidden`` face-down ones; ``extra`` is a class for every tile, or the list of
     the cards that take the folded corner. */
  function tiles(cards, hidden, size, extra, emptyText) {
    const box = h("div", { class: "tiles" });
    for (const card of cards) {
      const marked = Array.isArray(extra) ? (extra.includes(card) ? "secret" : "") : extra;
      box.append(tile(card, size, marked));
    }
    for (let i = 0; i < (hidden || 0); i++) box.append(tile(null, size));
    if (!cards.length && !hidden && emptyText) box.append(h("span", { class: "empty", text: emptyText }));
    return box;
  }

  function chip(card) {
    const name = DATA.cards[card][NAME];
    return h("span", { class: "chip", colour: cardColour(card), title: name }, name);
  }

  function categoryName(category) {
    return h("span", { class: "category-name", colour: DATA.colours.categories[category] }, DATA.categories[category]);
  }

  /* ---------------------------------------------------------------- the narration */
  function part(item) {
    if (typeof item === "string") return item;
    if (typeof item === "number") return chip(item);
    if (Array.isArray(item)) {
      const span = h("span");
      item.forEach((card, index) => { if (index) span.append(", "); span.append(chip(card)); });
      return span;
    }
    return categoryName(item.category);
  }

  function renderNarration(lines) {
    const box = byId("narration");
    box.replaceChildren();
    for (const line of lines) {
      const classes = ["line"];
      if (line.heading) classes.push("heading");
      if (line.style) classes.push("style-" + line.style.replace(/\s+/g, "-"));
      box.append(h("p", { class: classes.join(" ") }, line.parts.map(part)));
    }
    if (!lines.length) {
      const who = view === 0 ? "the table" : "this seat";
      box.append(h("p", { class: "line quiet", text: "Nothing " + who + " can see happened at this decision." }));
    }
  }

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
      const who = seat === viewerSeat() ? "You (" + shortName(seat) + ")" : seatName(seat);
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

  /* ---------------------------------------------------------------- the table */
  function renderDice(scene) {
    const before = step > 0 ? sceneAt(step - 1, view).dice : scene.dice;
    byId("dice").replaceChildren(...scene.dice.map((value, category) => {
      const changed = before[category] !== value;
      return h("div", { class: "die" + (changed ? " changed" : ""), colour: DATA.colours.categories[category] }, [
        h("div", { class: "name", text: DATA.categories[category], title: DATA.categories[category] }),
        h("div", { class: "value", text: value }),
        changed ? h("div", { class: "was", text: "was " + before[category] }) : null,
      ]);
    }));
  }

  function labelled(node, text) { return h("span", { class: "labelled" }, [node, text]); }

  function giftBlock(gift) {
    const quota = gift.quota;
    const row = h("div", { class: "focus-row" });
    if (gift.drawn !== null) row.append(labelled(tile(gift.drawn, "big"), "being placed"));
    else if (gift.drawnHidden) row.append(labelled(tile(null, "big"), "being placed"));
    if (gift.kept !== null) row.append(labelled(tile(gift.kept, "big", "secret"), "kept this turn"));
    else if (gift.keptHidden) row.append(labelled(tile(null, "big"), "kept this turn"));
    row.append(h("div", { class: "focus-text" }, [
      h("div", { class: "focus-title" }, ["Gift turn of ", seatName(gift.active)]),
      h("div", { class: "facts" }, [
        "Left to place: keep ", h("strong", { text: quota[0] }), " · auction pile ", h("strong", { text: quota[1] }),
        " · common area ", h("strong", { text: quota[2] }),
      ]),
    ]));
    return [h("h2", { text: "Gift turn" }), row];
  }

  function auctionBlock(auction, scene) {
    const facts = [];
    if (auction.highBidder >= 0) {
      const bid = h("strong", { text: auction.highBid + " " + auction.unit });
      facts.push(h("div", {}, ["High bid ", bid, " by ", seatName(auction.highBidder)]));
    } else {
      facts.push(h("div", { text: "No bid yet (bids count " + auction.unit + ")" }));
    }
    const bid = ([seat, amount]) => shortName(seat) + (amount === null ? " passes" : " " + amount);
    const bids = STEPS[step].bids.map(bid);
    if (bids.length) facts.push(h("div", { class: "bids", text: "Bidding: " + bids.join(" · ") }));
    if (auction.excluded.length) {
      facts.push(h("div", { text: "Defaulted on it: " + auction.excluded.map(shortName).join(", ") }));
    }
    const paying = scene.toAct && scene.toAct.decision === "pay";
    if (auction.payment.length) {
      const picked = h("strong", { text: auction.picked + " of " + auction.highBid + " " + auction.unit });
      facts.push(h("div", {}, ["Payment picked so far: ", picked]));
      facts.push(tiles(auction.payment, 0, "small"));
    } else if (paying) {
      facts.push(h("div", { text: shortName(auction.highBidder) + " is paying (only they see the cards picked)" }));
    }
    const mark = landmark(["auction"]);
    return [
      h("h2", { text: mark ? mark.label.split(":")[0] : "Auction" }),
      h("div", { class: "focus-row" }, [
        tile(auction.card, "big"),
        h("div", { class: "focus-text" }, [
          h("div", { class: "focus-title", text: DATA.cards[auction.card][NAME] }),
          h("div", { class: "facts" }, facts),
        ]),
      ]),
    ];
  }

  function churchBlock(church) {
    return [
      h("h2", { text: "Church card" }),
      h("div", { class: "focus-row" }, [
        tile(church.card, "big"),
        h("div", { class: "focus-text" }, [
          h("div", { class: "focus-title", text: DATA.cards[church.card][NAME] }),
          h("div", { class: "facts" }, [seatName(church.owner), " resolves it: change dice, or decline"]),
        ]),
      ]),
    ];
  }

  function renderFocus(scene) {
    const blocks = [];
    if (scene.church) blocks.push(...churchBlock(scene.church));
    if (scene.auction) blocks.push(...auctionBlock(scene.auction, scene));
    if (scene.gift) blocks.push(...giftBlock(scene.gift));
    byId("focus").replaceChildren(...blocks);
  }

  function renderPiles(scene) {
    byId("common").replaceChildren(...tiles(scene.common, 0, "", "", "empty").childNodes);
    const pile = scene.auctionPile;
    byId("auction-pile-size").textContent = "(" + (pile.cards.length + (pile.hidden || 0)) + ")";
    byId("auction-pile").replaceChildren(...tiles(pile.cards, pile.hidden, "small", "secret", "empty").childNodes);
    byId("draw-pile").textContent = scene.drawPile;
  }

  function renderDiscards(scene) {
    const rows = [];
    const up = scene.discard.faceUp;
    if (up.length) {
      const who = h("span", { class: "who", text: "face up (" + up.length + ")" });
      rows.push(h("div", { class: "discard-row" }, [who, tiles(up, 0, "small")]));
    }
    scene.discard.faceDown.forEach((pile, seat) => {
      const count = pile.cards.length + (pile.hidden || 0);
      if (!count) return;
      rows.push(h("div", { class: "discard-row" }, [
        h("span", { class: "who", text: shortName(seat) + ", face down (" + count + ")" }),
        tiles(pile.cards, pile.hidden, "small", "secret"),
      ]));
    });
    if (!rows.length) rows.push(h("p", { class: "muted", text: "None yet." }));
    byId("discards").replaceChildren(...rows);
  }

  /* ---------------------------------------------------------------- the seats */
  function sumOf(cards, kind) {
    let total = 0;
    for (const card of cards) if (DATA.cards[card][KIND] === kind) total += DATA.cards[card][VALUE];
    return total;
  }

  function categoryTotals(cards) {
    const totals = DATA.categories.map(() => 0);
    for (const card of cards) {
      const info = DATA.cards[card];
      if (info[KIND] === "category") totals[info[CATEGORY]] += info[VALUE];
    }
    return totals;
  }

  function seatPanel(scene, seat) {
    const hand = scene.hands[seat];
    const mine = seat === viewerSeat();
    const acting = scene.toAct && scene.toAct.seat === seat;
    const badges = [];
    const badge = (kind, text) => badges.push(h("span", { class: "badge " + kind, text: text }));
    const auction = scene.auction;
    if (mine) badge("", "you");
    if (acting) badge("acting", "to act");
    if (scene.gift && scene.gift.active === seat) badge("", "gift turn");
    if (auction && auction.highBidder === seat) badge("high", "high bid " + auction.highBid);
    if (auction && auction.passed.includes(seat)) badge("", "passed");
    if (auction && auction.excluded.includes(seat)) badge("defaulted", "defaulted");
    if (gameOver()) badge("", DATA.score.rows[seat].vp + " VP");
    if (gameOver() && DATA.score.winners.includes(seat)) badge("winner", "winner");
    const size = hand.cards.length + (hand.hidden || 0);
    const known = hand.hidden ? " shown" : "";
    const facts = [
      h("span", { text: size + (size === 1 ? " card" : " cards") + " in hand" }),
      h("span", { text: "gold" + known + ": " + sumOf(hand.cards, "gold") }),
    ];
    const totals = categoryTotals(hand.cards);
    const totalChips = totals.map((total, category) => {
      if (!total) return null;
      const name = DATA.categories[category];
      const colour = DATA.colours.categories[category];
      return h("span", { class: "total", colour: colour, title: name + known + " total" }, name + " " + total);
    });
    const classes = "seat" + (acting ? " acting" : "") + (mine ? " viewer" : "");
    const panel = h("article", { class: classes, "data-seat": seat }, [
      h("div", { class: "seat-head" }, [h("span", { class: "seat-name", text: seatName(seat) }), ...badges]),
      tiles(hand.cards, hand.hidden, "", hand.private || [], "no cards"),
    ]);
    if (hand.maybe && hand.maybe.length) {
      panel.append(h("div", { class: "maybe-row" }, [
        "Seen entering this hand, but it has lost cards unseen since: may be gone",
        tiles(hand.maybe, 0, "small", "maybe"),
      ]));
    }
    panel.append(h("div", { class: "totals" }, totalChips), h("div", { class: "seat-facts" }, facts));
    return panel;
  }

  function renderSeats(scene) {
    const panels = [];
    const first = view === 0 ? 0 : view - 1; // a seat's view starts with its own hand
    for (let offset = 0; offset < SEATS; offset++) panels.push(seatPanel(scene, (first + offset) % SEATS));
    byId("seats").replaceChildren(...panels);
  }

  function renderScore() {
    const box = byId("score");
    const score = DATA.score;
    box.hidden = !gameOver();
    if (box.hidden) { box.replaceChildren(); return; }
    const head = h("tr", {}, [h("th", { text: "Player" }),
      ...DATA.categories.map((name, category) => h("th", {}, [categoryName(category), "die " + score.dice[category]])),
      h("th", { text: "VP" }), h("th", { text: "Gold" })]);
    const rows = score.rows.map((row, seat) => h("tr", { class: score.winners.includes(seat) ? "winner" : "" }, [
      h("td", { text: seatName(seat) }),
      ...row.totals.map((total, category) => {
        const won = score.categoryWinners[category] === seat;
        const text = total ? (won ? "★ " : "") + total + " (" + row.letters[category] + ")" : "–";
        return h("td", { class: won ? "won" : "", colour: DATA.colours.categories[category], text: text });
      }),
      h("td", {}, h("strong", { text: row.vp })),
      h("td", { text: row.gold }),
    ]));
    const winners = score.winners.map(seatName);
    const verdict = winners.length === 1 ? winners[0] + " wins." : "Shared win: " + winners.join(", ") + ".";
    box.replaceChildren(
      h("h2", { text: "Final score" }),
      h("div", { class: "score-wrap" }, h("table", { class: "score-table" }, [
        h("thead", {}, head), h("tbody", {}, rows),
      ])),
      h("p", { class: "muted", text: "★ won the category: its die in VP. Ties: most gold, then each category." }),
      h("p", { class: "verdict", text: verdict }),
    );
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
    renderPerspectives();
    renderWhere(scene);
    renderNarration(DATA.narrations[current.lines[view]]);
    renderNotes();
    renderDice(scene);
    renderFocus(scene);
    renderPiles(scene);
    renderDiscards(scene);
    renderScore();
    renderSeats(scene);
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
