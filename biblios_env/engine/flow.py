"""The names of a game's flow, shared by every engine module: the phases, the decisions a seat
is asked to make, where play resumes after a church card, the "no card" and "no seat"
markers, the names of the chance events a game records and of the card sets a game is dealt
from."""

from __future__ import annotations

from enum import IntEnum
from typing import Final


class Phase(IntEnum):
    """The two phases of the game and its end (RULES §3, §5, §6)."""

    GIFT = 0
    AUCTION = 1
    END = 2


class Decision(IntEnum):
    """What the current player is asked to decide."""

    PLACE = 0  # put the drawn card in keep / auction pile / common area (RULES §3)
    TAKE = 1  # take a card from the common area (RULES §3)
    CHURCH = 2  # resolve an acquired church card (RULES §4)
    BID = 3  # bid or pass on the card under auction (RULES §5)
    PAY = 4  # pick the next payment card, or refuse (RULES §5)
    NONE = 5  # the game is over


class Resume(IntEnum):
    """Where play continues once a church card is resolved: church cards interrupt (RULES §4)."""

    PLACING = 0  # kept during a gift turn: draw the next card
    TAKING = 1  # taken from the common area: the next player takes
    AUCTIONING = 2  # won at auction: the next auction starts


# The members as plain ints, the values the state's fields hold and the hot code compares with:
# the same on both builds (a compiled field typed ``int`` would turn a member into a plain int
# anyway), and a compiled module reads a ``Final`` int as a C value where an enum member is an
# attribute lookup. ``Decision(state.decision).name`` still names one.
PHASE_GIFT: Final = int(Phase.GIFT)
PHASE_AUCTION: Final = int(Phase.AUCTION)
PHASE_END: Final = int(Phase.END)
DECISION_PLACE: Final = int(Decision.PLACE)
DECISION_TAKE: Final = int(Decision.TAKE)
DECISION_CHURCH: Final = int(Decision.CHURCH)
DECISION_BID: Final = int(Decision.BID)
DECISION_PAY: Final = int(Decision.PAY)
DECISION_NONE: Final = int(Decision.NONE)
RESUME_PLACING: Final = int(Resume.PLACING)
RESUME_TAKING: Final = int(Resume.TAKING)
RESUME_AUCTIONING: Final = int(Resume.AUCTIONING)

NO_CARD: Final = -1
NO_SEAT: Final = -1

# The random events a game awaits with explicit chance (``State.chance_kind``): each is answered
# by one card id, drawn uniformly from its outcomes (``rules.chance_outcomes``).
NO_CHANCE: Final = 0
#: A card removed unseen at setup (RULES §2.2): first the gold cards of each value, then any card.
CHANCE_REMOVAL: Final = 1
#: The next card of the draw pile (RULES §3).
CHANCE_DRAW: Final = 2
#: The next card of the shuffled auction pile (RULES §5).
CHANCE_REVEAL: Final = 3
#: A card the defaulter loses to a penalty, picked blindly from its hand (RULES §5).
CHANCE_PENALTY_PICK: Final = 4
CHANCE_KINDS: Final = ("none", "removal", "draw", "reveal", "penalty pick")

# Chance events recorded in ``State.chance`` (the game log's chance outcomes).
CHANCE_AUCTION_ORDER: Final = "auction_order"
CHANCE_PENALTY: Final = "penalty"

#: The card sets a game can be dealt from (the game option ``preset``; their contents and counts
#: are setup's, :data:`biblios_env.engine.setup.SETUP_RULES`): the game of the rules;
#: ``"mini"``, a two-player game so small that exact methods solve it in a few iterations; and
#: ``"small"``, a two-player game whose exact solution still takes solvers real work.
STANDARD_PRESET: Final = "standard"
MINI_PRESET: Final = "mini"
SMALL_PRESET: Final = "small"
PRESETS: Final = (STANDARD_PRESET, MINI_PRESET, SMALL_PRESET)
