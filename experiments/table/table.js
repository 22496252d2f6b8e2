/* The table as both pages draw it: the replay page (experiments/replay) and the play page
   (experiments/serve). It lays out one scene (what one perspective shows at one moment, computed
   in Python: experiments/table/scenes.py) into the board's elements (board.html): the dice, the
   card in play, the piles, the discards, the seats and the final score, with the narration's
   sentences. It knows no rule of the game; each page says what differs (whose view it is, the bids
   so far, the score once shown). */
"use strict";
const BibliosTable = (function () {
  // The fields of a DATA.cards entry.
  const KIND = 0, CATEGORY = 1, VALUE = 2, NAME = 4, CAPTION = 5;

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

  /* The drawing functions for one game: DATA holds its "names" (per seat) and the card table
     ("cards", "categories", "colours"), as experiments/table/page_data.py writes them. */
  function create(DATA) {
    function seatName(seat) { return DATA.names[seat]; }
    function shortName(seat) { return "player_" + seat; }

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
      return h("span", { class: "category-name", colour: DATA.colours.categories[category] },
        DATA.categories[category]);
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

    /* The sentences into #narration; ``quiet`` is said when there are none. */
    function narration(lines, quiet) {
      const box = byId("narration");
      box.replaceChildren();
      for (const line of lines) {
        const classes = ["line"];
        if (line.heading) classes.push("heading");
        if (line.style) classes.push("style-" + line.style.replace(/\s+/g, "-"));
        box.append(h("p", { class: classes.join(" ") }, line.parts.map(part)));
      }
      if (!lines.length) box.append(h("p", { class: "line quiet", text: quiet }));
    }

    /* ---------------------------------------------------------------- the table */
    /* The dice; a die whose value differs from ``before`` (the dice a moment earlier) is ringed. */
    function dice(scene, before) {
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

    function auctionBlock(auction, scene, bidding, title) {
      const facts = [];
      if (auction.highBidder >= 0) {
        const bid = h("strong", { text: auction.highBid + " " + auction.unit });
        facts.push(h("div", {}, ["High bid ", bid, " by ", seatName(auction.highBidder)]));
      } else {
        facts.push(h("div", { text: "No bid yet (bids count " + auction.unit + ")" }));
      }
      const bid = ([seat, amount]) => shortName(seat) + (amount === null ? " passes" : " " + amount);
      const bids = bidding.map(bid);
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
      return [
        h("h2", { text: title || "Auction" }),
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

    /* The card in play: the church card, the card under auction (``bidding``: its bids and passes
       so far, ``[seat, amount or null]``; ``title``: the auction's heading), the gift turn. */
    function focus(scene, bidding, title) {
      const blocks = [];
      if (scene.church) blocks.push(...churchBlock(scene.church));
      if (scene.auction) blocks.push(...auctionBlock(scene.auction, scene, bidding, title));
      if (scene.gift) blocks.push(...giftBlock(scene.gift));
      byId("focus").replaceChildren(...blocks);
    }

    function piles(scene) {
      byId("common").replaceChildren(...tiles(scene.common, 0, "", "", "empty").childNodes);
      const pile = scene.auctionPile;
      byId("auction-pile-size").textContent = "(" + (pile.cards.length + (pile.hidden || 0)) + ")";
      byId("auction-pile").replaceChildren(...tiles(pile.cards, pile.hidden, "small", "secret", "empty").childNodes);
      byId("draw-pile").textContent = scene.drawPile;
    }

    function discards(scene) {
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

    function seatPanel(scene, seat, viewer, score) {
      const hand = scene.hands[seat];
      const mine = seat === viewer;
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
      if (score) badge("", score.rows[seat].vp + " VP");
      if (score && score.winners.includes(seat)) badge("winner", "winner");
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

    /* Every seat's panel, ``viewer``'s own first (null: the whole table, seat 0 first); ``score``,
       the final score once it is shown (else null), adds each seat's VP. */
    function seats(scene, viewer, score) {
      const panels = [];
      const count = DATA.names.length;
      const first = viewer === null ? 0 : viewer;
      for (let offset = 0; offset < count; offset++) panels.push(seatPanel(scene, (first + offset) % count, viewer, score));
      byId("seats").replaceChildren(...panels);
    }

    /* The final score table into #score; hidden while ``score`` is null. */
    function finalScore(score) {
      const box = byId("score");
      box.hidden = !score;
      if (!score) { box.replaceChildren(); return; }
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

    return { seatName, shortName, narration, dice, focus, piles, discards, seats, finalScore };
  }

  return { byId, h, create };
})();
