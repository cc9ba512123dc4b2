"""``RankAndFile-v0``: Rank and File (Dress Parade), two decks, ten piles of three down and one up."""

from __future__ import annotations

from solitaire_env.engine.games import RANK_AND_FILE
from solitaire_env.envs.base import SolitaireEnv


class RankAndFileEnv(SolitaireEnv):
    """Rank and File: move all 104 cards to eight foundations built up in suit from Ace to King.

    Rules: ``docs/rules.md`` and :mod:`solitaire_env.engine.games.rank_and_file`. Piles build down in
    alternating colours; a packed run or its top part moves as a unit; an empty pile takes any card
    or run; one pass through the stock, one card at a time.

    ## Action space

    ``Discrete(243)``. Piles are numbered 0-9. Which foundation slot, which empty pile and how many
    cards a tableau-to-tableau move takes are decided by the position (the canonical move of
    ``docs/rules.md``), so each id is one move; ``env.unwrapped.decode_action(a)`` shows it.

    | id              | move                                                            |
    |-----------------|-----------------------------------------------------------------|
    | 0               | draw: stock -> waste                                            |
    | 1               | waste -> foundation (lowest accepting slot)                     |
    | 2 + j           | waste -> tableau pile j (j = 0..9, not empty)                   |
    | 12              | waste -> lowest empty pile                                      |
    | 13 + i          | top of tableau pile i -> foundation                             |
    | 23 + 9i + jj    | tableau pile i -> tableau pile j: the one run that fits there   |
    | 113 + 13i + k-1 | top k cards (k = 1..13) of pile i -> lowest empty pile           |

    (``jj`` is ``j``, or ``j - 1`` when ``j > i``.) Moving a whole pile into an empty pile only
    relabels piles, so those ids are never legal.

    ## Observation

    Default ``obs_mode="codes"``: ``MultiDiscrete`` of 233 ``int16`` entries. A card code is
    ``suit*13 + rank + 1`` (1..52; suits c d h s, rank 0 = Ace), 53 is a face-down card, 0 is nothing.

    | entries  | field        | values                                                        |
    |----------|--------------|---------------------------------------------------------------|
    | 0-159    | tableau      | pile p, position k (bottom first) at 16p + k: 0 / card / 53   |
    | 160-223  | waste        | the whole waste, bottom first (every card was seen): 0 / card |
    | 224-231  | foundations  | top card of each slot, 0 if empty (the slot's cards follow)   |
    | 232      | stock_size   | cards left in the stock, 0-64 (their order is never shown)    |

    ``obs_mode="dict"`` gives these fields as a ``Dict`` plus ``"action_mask"``; ``obs_mode="onehot"``
    a flat float32 ``Box`` one-hot of every entry (12,521 values).

    ``obs_mode="piles"``: features a network can share weights over, a ``Dict`` of ``int8`` ``Box``
    arrays (the summary ``int16``) computed from the observation above, so just as blind to hidden
    cards; 0 always means none or unknown. Every column is documented in
    :mod:`solitaire_env.engine.features`.

    | key           | shape      | columns                                                            |
    |---------------|------------|--------------------------------------------------------------------|
    | cards         | (224, 10)  | one row per card slot (160 tableau, 64 waste): state (1 up, 2 down, |
    |               |            | 3 unseen), rank, suit, colour, area, pile, depth, height (cards on |
    |               |            | it), movable (a move can take it), to_foundation (a foundation     |
    |               |            | takes it now)                                                      |
    | piles         | (10, 5)    | length, face-down cards, run on top, top card's rank and suit      |
    | foundations   | (8, 3)     | suit, cards on it, rank it takes next                              |
    | summary       | (9,)       | stock, waste, reserve, reserve face-down, redeals left, base rank, |
    |               |            | face-down cards, foundation cards, empty piles                     |
    | action_mask   | (243,)     | as ``info["action_mask"]``                                         |

    ``action_features=True`` adds a table of what each move does, ``(243, 11)`` ``int8``, so a policy
    can score moves by what they do rather than by their id: in the observation when it is a
    ``Dict`` (``"dict"``, ``"piles"``), else in ``info["action_features"]``. A row is all 0 for a move
    the rules do not allow; its columns: allowed (in the mask), card (code of the card that moves, the
    bottom one of a run), onto (code of the card it lands on), count, from (1 stock, 2 waste, 3
    reserve, 4 tableau), to (1 stock, 2 waste, 3 pile, 4 empty pile, 5 foundation), from_pile,
    to_index (pile or foundation slot + 1), uncovers (turns a face-down card up), empties (takes a
    whole pile), seen (leads to a position seen this episode; the option keeps the positions, as
    ``track_revisits`` does).

    ## Rewards

    Cards moved to the foundations by the step / cards not on them at the start (an episode
    returns 1.0 when the game is won), plus ``reveal_bonus`` per face-down card turned up, plus
    ``win_bonus`` on winning, minus ``step_penalty`` every step, minus ``illegal_penalty`` for a
    masked-out action (which changes nothing).

    ## Episode end

    ``terminated``: all 104 cards on the foundations, or no legal move left (with ``no_revisit``: no
    move left that the mask allows, ``info["stuck"]``). ``truncated``: after ``max_episode_steps``
    (registered default 2000; random play can loop forever, unless ``no_revisit``).

    ## Info

    Every ``reset`` and ``step`` returns the same keys with the same types, so a vector env or a
    replay buffer can stack them (the optional keys are there on every call when their option is on):

    | key              | type                | value                                                    |
    |------------------|---------------------|----------------------------------------------------------|
    | action_mask      | ``int8`` (243,)     | 1 for each legal action (the mask ``no_revisit`` narrows) |
    | foundation_cards | ``int``             | cards on the foundations                                 |
    | is_won           | ``bool``            | all cards on the foundations                             |
    | illegal_action   | ``bool``            | the step's action was masked out (False on a reset)      |
    | move             | ``int``             | the action id played, -1 for none (reset, illegal action) |
    | deal_seed        | ``int``             | the deal being played, -1 for a position given as JSON   |
    | revisit          | ``bool``            | with ``track_revisits``, ``no_revisit``, ``action_features`` |
    | stuck            | ``bool``            | with ``no_revisit`` (below)                              |
    | action_features  | ``int8`` (243, 11)  | with ``action_features`` when the observation is not a ``Dict`` |

    The :class:`~solitaire_env.engine.moves.Move` of an id is ``env.unwrapped.decode_action(a)``
    (decode it before the step: ids name moves of the position they are played in).

    ## Positions seen (``track_revisits``, ``no_revisit``)

    ``track_revisits=True`` keeps the positions of the episode: ``info["revisit"]`` is true when the
    position after the step had been seen before in this episode (after an illegal action too, which
    changes nothing). ``no_revisit=True`` does the same and also removes from the mask every move
    whose resulting position was already seen; ``terminated`` is then also true when no other move is
    left, with ``info["stuck"] = True``, so an episode ends without a time limit.

    Positions are the same when they differ only by which of the piles without face-down cards holds
    which cards, or which foundation slot holds which; a pile with face-down cards keeps its number.
    The key is a hash of the observation, so hidden cards never change the mask.

    This never removes a win. Within one episode, a position seen twice is the same true position both
    times: face-down cards only leave a pile by turning up and the unseen stock is dealt in a fixed
    order, so the same face-down counts and stock size hide the same cards. A line of play that passes
    a position twice can therefore be cut at the repeat, skipping the loop between, and still wins; so
    every deal that can be won has a winning line without repeats, which the mask never blocks. And the
    player knows exactly as much at both visits: every card seen is still in view, and the unseen ones
    are the same. (The guarantee is for the episode from its start: after leaving a position, a way
    back through it is closed.) Each env keeps at most 3,072 positions of one stretch of play without
    progress (``solitaire_env.engine.history``, 32 KiB an env); beyond that it records no more until a card
    moves for good, and the time limit ends the episode.

    ## Arguments

    | argument         | default      | meaning                                                   |
    |------------------|--------------|-----------------------------------------------------------|
    | render_mode      | None         | ``"ansi"`` (text table) or ``"rgb_array"`` (picture)      |
    | obs_mode         | "codes"      | ``"codes"``, ``"dict"`` (with action_mask), ``"onehot"`` or ``"piles"`` |
    | illegal_action   | "penalize"   | ``"penalize"``: no change and a penalty; ``"raise"``: ValueError |
    | illegal_penalty  | 0.01         | subtracted for an illegal action                          |
    | win_bonus        | 0.0          | added on the winning step                                 |
    | step_penalty     | 0.0          | subtracted every step                                     |
    | reveal_bonus     | 0.0          | added per face-down card turned up                        |
    | ansi_color       | False        | ANSI colours in the ``"ansi"`` rendering                  |
    | deals            | None         | which deals resets play (below)                           |
    | track_revisits   | False        | keep the episode's positions: ``info["revisit"]`` (above) |
    | no_revisit       | False        | also mask moves back to a seen position: ``info["stuck"]`` |
    | action_features  | False        | the table of what each move does (Observation, above)     |

    ## Deals and starting positions

    With ``deals=None``, ``reset(seed=s)`` deals deal number ``s`` (``Game(variant, seed=s)``) and a
    seedless ``reset()`` a random deal. ``deals="train"`` draws every deal at random from the train
    split; ``"validation"``, ``"test"``, ``"A:B"`` or a list play their deals in order, ``reset(seed=k)``
    starting at the ``k``-th (:mod:`solitaire_env.engine.deals` has the splits). ``info["deal_seed"]`` names
    the deal. ``reset(options={"state": position})`` starts from a JSON position instead. A bad
    position raises ``ValueError`` and leaves the game as it was; under ``gym.make``'s ``TimeLimit``,
    though, the time limit's count has already restarted (Gymnasium zeroes it before the env sees the
    call): ``env.unwrapped.check_reset_options(options)`` validates without touching anything.

    ## Version history

    - v0: the first version. Added since without changing any default (same deals, observations
      and rewards): the ``deals``, ``track_revisits``, ``no_revisit`` and ``action_features`` arguments
      and ``obs_mode="piles"``. The info holds the same keys and types on every reset and step (the
      Info table): ``move`` is the action id or -1 (it was a ``Move``, and absent after an illegal
      action), ``deal_seed`` is on every step and -1 (not ``None``) for a given position. The id stays
      ``-v0``: deals, observations, rewards and episode ends are unchanged.
    """

    variant = RANK_AND_FILE
