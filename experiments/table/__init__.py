"""How a table reads as text, for the terminal game and the replays alike: card names and styles
(:mod:`.cards`), the narration of each move as a seat sees it (:mod:`.narration`), the drawn table
(:mod:`.screen`) and the menus of legal moves (:mod:`.menus`)."""
