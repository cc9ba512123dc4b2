"""Play a game in the terminal: :func:`play`.

Each turn shows the table (:func:`solitaire_env.envs.render.render_text`) and the legal moves, numbered
from 1, each with its short notation. Type a move's number or its notation, or a command::

    d             draw from the stock to the waste (one card, or three in Klondike's draw 3)
    rd            redeal: turn the waste over into a new stock (Rainbow, Klondike)
    t3 t7         tableau pile 3 onto pile 7 (the run that fits there)
    t3 f          top card of pile 3 to a foundation
    t3 e 2        the top 2 cards of pile 3 into an empty pile (the count only when more than one fits)
    w t2 / w f / w e    the waste's top card onto pile 2 / to a foundation / into an empty pile
    r t1 / r f    the reserve's top card (Rainbow) onto pile 1 / to a foundation
    t3 c / c0 t2  into the lowest free cell / free cell 0's card onto pile 2 (FreeCell)
    f1 t4 / f1 e  foundation 1's top card back onto pile 4 / into an empty pile (Klondike)
    undo, hint, save FILE, moves, show, help, quit

Piles are numbered from **0**, as the table shows them (``t0`` ... ``t9``, ``t0`` ... ``t3`` in
Rainbow), and as the engine and the envs number them. Foundations and empty piles need no number:
a card goes to the lowest-numbered foundation that takes it and into the lowest-numbered empty pile
(``docs/rules.md``), so ``t5`` as a target that is empty means the same as ``e``.

The functions :func:`notation` and :func:`parse_move` convert between moves and this notation.
"""

from __future__ import annotations

import json
import os
import random
import re
import sys
from typing import TextIO

from solitaire_env.engine.game import Game
from solitaire_env.engine.games import OPTION_VARIANTS, VARIANTS, game_options, get_variant
from solitaire_env.engine.moves import Move
from solitaire_env.engine.notation import describe, notation, parse_move
from solitaire_env.engine.variant import Variant
from solitaire_env.envs.registration import ENV_IDS

HELP = """\
Moves (piles are numbered from 0, as on the table: t0, t1, ...):
  N             the move numbered N in the list of legal moves
  d             draw from the stock to the waste (three cards in Klondike's draw 3)
  rd            redeal: turn the waste over into a new stock (Rainbow, Klondike; the stock is empty)
  t3 t7         pile 3 onto pile 7 (the run that fits there moves)
  t3 f          the top card of pile 3 to a foundation
  t3 e          the top card or run of pile 3 into an empty pile; if runs of different lengths
  t3 e 2          could go, give the number of cards: 't3 e 2' moves the top 2
  w t2  w f  w e   the waste's top card onto pile 2 / to a foundation / into an empty pile
  r t1  r f     the reserve's top card onto pile 1 / to a foundation (Rainbow)
  t3 c  c0 t2   pile 3's top card into a free cell / free cell 0's card onto pile 2 (FreeCell)
  f1 t4  f1 e   foundation 1's top card back onto pile 4 / into an empty pile (Klondike)
  A card goes to the lowest-numbered foundation that takes it and into the lowest-numbered empty
  pile, so an empty pile as a target (t5) means the same as 'e'.
Commands:
  undo          take back the last move (as often as you like)
  hint          the heuristic agent's suggestion for this position
  save FILE     write the position to FILE as JSON (load it with --state FILE)
  moves         list the legal moves again     show   draw the table again
  help          this text                      quit   leave (end of input does the same)"""

_QUIT_WORDS = {"q", "quit", "exit"}


# --- variants ---------------------------------------------------------------------------------------


def _squash(name: str) -> str:
    name = name.strip().lower()
    if name.endswith("-v0"):
        name = name[:-3]
    return re.sub(r"[\s_\-]", "", name)


def resolve_variant(name: str | Variant) -> Variant:
    """A variant from its state name (``rank_and_file``), env id (``RankAndFile-v0``) or a loose spelling."""
    if isinstance(name, Variant):
        return name
    if not isinstance(name, str):
        raise ValueError(f"unknown game {name!r}; known games: {', '.join(VARIANTS)}")
    wanted = _squash(name)
    for variant in (*VARIANTS.values(), *OPTION_VARIANTS.values()):  # (freecell_2cells: FreeCell, 2 cells)
        if wanted == _squash(variant.name):
            return variant
    for env_id, (_, variant) in ENV_IDS.items():
        if wanted == _squash(env_id):
            return variant
    raise ValueError(f"unknown game {name!r}; known games: {', '.join(VARIANTS)} "
                     f"(or the env ids {', '.join(ENV_IDS)})")


def env_id_of(variant: str | Variant) -> str:
    """The registered env id that plays ``variant`` (``rainbow`` -> ``Rainbow-v0``)."""
    v = game_options(get_variant(variant))[0]
    for env_id, (_, var) in ENV_IDS.items():
        if var is v:
            return env_id
    raise ValueError(f"no env plays {v.title}")  # pragma: no cover - every variant is registered


# --- the session ------------------------------------------------------------------------------------


class _Hinter:
    """The heuristic agent, asked about one position at a time through a gym env set to that position."""

    def __init__(self, variant: Variant) -> None:
        self.env_id, self.variant = env_id_of(variant), variant
        self.options = game_options(variant)[1]  # FreeCell's cells
        self.env = None
        self.agent = None
        self.error: str | None = None

    def _setup(self) -> bool:
        if self.agent is not None:
            return True
        if self.error is not None:
            return False
        try:
            import gymnasium as gym

            try:
                from solitaire_env.agents import make_agent

                agent = make_agent("heuristic", self.env_id, 0) if not self.options else None
            except (ImportError, AttributeError):
                agent = None
            if agent is None:
                from solitaire_env.agents.heuristic import HeuristicAgent

                agent = HeuristicAgent(self.variant, seed=0)
            self.env = gym.make(self.env_id, **self.options).unwrapped
            self.agent = agent
            return True
        except Exception as exc:  # noqa: BLE001 - any failure only means: no hint
            self.error = f"{type(exc).__name__}: {exc}"
            return False

    def suggest(self, state: dict) -> int | None:
        """The agent's action id for ``state``, or None when no agent is available."""
        if not self._setup():
            return None
        obs, info = self.env.set_state(state)
        self.agent.reset(seed=0)
        return int(self.agent.act(obs, info))


def _isatty(stream) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except (ValueError, OSError):  # a closed stream
        return False


class _Session:
    def __init__(self, game: Game, stdin: TextIO, stdout: TextIO, color: bool) -> None:
        self.game, self.stdin, self.stdout, self.color = game, stdin, stdout, color
        self.history: list[Game] = []
        self.hinter = _Hinter(game.variant)
        self.moves: list[Move] = []
        self.interactive = stdin is sys.stdin and stdout is sys.stdout and _isatty(stdin) and _isatty(stdout)
        if self.interactive:
            try:
                import readline  # noqa: F401 - gives input() editing and history where available
            except ImportError:  # pragma: no cover - e.g. Windows
                pass

    def say(self, text: str = "") -> None:
        self.stdout.write(text + "\n")

    def score(self) -> str:
        return f"{self.game.foundation_cards}/{self.game.variant.n_cards}"

    def show(self) -> None:
        self.say()
        self.say(self.game.render_text(color=self.color))
        self.say(f"on the foundations: {self.score()}   moves played: {len(self.history)}")
        self.list_moves()

    def list_moves(self) -> None:
        game = self.game
        self.moves = game.legal_moves()
        state = game.get_state()
        if game.is_won():
            self.say(f"*** You won! All {self.score()} cards are on the foundations. ***")
        elif not self.moves:
            self.say(f"*** No legal moves left: the game is lost. Score: {self.score()} cards on the foundations. ***")
        if game.is_over():
            self.say("Type 'undo' to take moves back, 'save FILE' to keep the position, or 'quit'.")
            return
        self.say("legal moves:")
        width = max(len(notation(m, game, state)) for m in self.moves)
        for k, m in enumerate(self.moves, 1):
            self.say(f"  {k:>2}) {notation(m, game, state):<{width}}   {describe(m, game, state)}")

    def prompt(self) -> str | None:
        if self.interactive:  # a person at a terminal: input() gives line editing and history
            try:
                return input("> ").strip()
            except EOFError:
                return None
        self.stdout.write("> ")
        self.stdout.flush()
        line = self.stdin.readline()
        if not line:
            return None
        return line.strip()

    def do(self, move: Move) -> None:
        state = self.game.get_state()
        played = f"{notation(move, self.game, state)}: {describe(move, self.game, state)}"
        self.history.append(self.game.copy())
        self.game.play(move)
        self.say(f"played {played}")
        self.show()

    def command(self, line: str) -> bool:
        """Handle one line; False to end the session."""
        word, _, rest = line.partition(" ")
        word = word.lower()
        if word in _QUIT_WORDS:
            return False
        if word in {"help", "h", "?"}:
            self.say(HELP)
        elif word in {"show", "table", "board"}:
            self.show()
        elif word in {"moves", "list", "ls", "m"}:
            self.list_moves()
        elif word in {"undo", "u"}:
            if not self.history:
                self.say("nothing to undo: this is the starting position")
            else:
                self.game = self.history.pop()
                self.say("took back one move")
                self.show()
        elif word == "hint":
            self.hint()
        elif word == "save":
            self.save(rest.strip())
        elif line.isdigit():
            k = int(line)
            if self.game.is_over():
                self.say("the game is over: no moves left to play (try 'undo' or 'quit')")
            elif not 1 <= k <= len(self.moves):
                self.say(f"there is no move {k}: the legal moves are numbered 1 to {len(self.moves)}")
            else:
                self.do(self.moves[k - 1])
        else:
            try:
                move = parse_move(line, self.game)
            except ValueError as exc:
                self.say(str(exc))
            else:
                self.do(move)
        return True

    def hint(self) -> None:
        if self.game.is_over():
            self.say("no hint available: the game is over")
            return
        try:
            action = self.hinter.suggest(self.game.get_state())
        except Exception as exc:  # noqa: BLE001 - a broken agent must not end the game
            self.say(f"no hint available (the agent failed: {type(exc).__name__}: {exc})")
            return
        if action is None:
            self.say(f"no hint available (the heuristic agent could not be loaded: {self.hinter.error})")
            return
        move = self.game.decode(action)
        if move not in self.moves:
            self.moves = self.game.legal_moves()
        if move not in self.moves:
            self.say(f"no hint available (the agent suggested an illegal move: {move})")
            return
        k = self.moves.index(move) + 1
        state = self.game.get_state()
        self.say(f"hint: {k}) {notation(move, self.game, state)}   {describe(move, self.game, state)}")

    def save(self, path: str) -> None:
        if not path:
            self.say("usage: save FILE")
            return
        path = os.path.expanduser(path)
        try:
            with open(path, "w", encoding="utf-8") as f:
                json.dump(self.game.get_state(), f, indent=1)
                f.write("\n")
        except OSError as exc:
            self.say(f"could not save to {path}: {exc.strerror or exc}")
        else:
            self.say(f"saved the position to {path}")

    def run(self) -> int:
        self.show()
        while True:
            line = self.prompt()
            if line is None:
                self.say()
                self.say(f"end of input: leaving the game. Score: {self.score()} cards on the foundations.")
                return 0
            if not line:
                continue
            if not self.command(line):
                self.say(f"bye. Score: {self.score()} cards on the foundations.")
                return 0


def load_state_file(path: str) -> dict:
    """Read a JSON position (``docs/state_format.md``); ``ValueError`` with a clear message if it cannot be used."""
    try:
        with open(os.path.expanduser(path), encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        raise ValueError(f"state file {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"cannot read state file {path}: {exc}") from None
    try:
        state = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"state file {path} is not valid JSON: {exc}") from None
    try:
        Game.from_state(state)
    except (ValueError, TypeError, KeyError) as exc:
        raise ValueError(f"state file {path} is not a valid position: {exc}") from None
    return state


def play(
    variant: str | None,
    seed: int | None = None,
    state_file: str | None = None,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    color: bool | None = None,
) -> int:
    """Play ``variant`` (deal number ``seed``, random if None) or the position in ``state_file``.

    ``variant`` may be a state name (``rank_and_file``), an env id (``RankAndFile-v0``) or None when
    ``state_file`` is given (the file names its game; a different ``variant`` is an error). ``color``:
    ANSI colours; None means colour when ``stdout`` is a terminal and ``NO_COLOR`` is not set.
    Returns the exit code: 0 after quit or end of input, 2 for a bad game, seed or state file.
    """
    stdin, stdout = stdin or sys.stdin, stdout or sys.stdout  # looked up now, so redirection works
    if color is None:
        color = _isatty(stdout) and not os.environ.get("NO_COLOR")
    try:
        if state_file is not None:
            state = load_state_file(state_file)
            game = Game.from_state(state)
            if variant is not None and resolve_variant(variant) is not game.variant:
                raise ValueError(f"the state file holds a {game.variant.title} position, not "
                                 f"{resolve_variant(variant).title}")
            if seed is not None:
                raise ValueError("give a seed or a state file, not both")
            intro = f"{game.variant.title}, from the position in {state_file}"
        else:
            if variant is None:
                raise ValueError(f"say which game to play: {', '.join(VARIANTS)}")
            v = resolve_variant(variant)
            if seed is None:
                seed = random.SystemRandom().randrange(2**31)
            game = Game(v, seed=seed)
            intro = f"{v.title}, deal number {seed}"
    except (ValueError, TypeError) as exc:
        stdout.write(f"error: {exc}\n")
        return 2
    stdout.write(f"{intro}. Type 'help' for the notation and commands.\n")
    session = _Session(game, stdin, stdout, bool(color))
    try:
        return session.run()
    except KeyboardInterrupt:
        stdout.write("\ninterrupted: leaving the game.\n")
        return 130


__all__ = ["HELP", "describe", "env_id_of", "load_state_file", "notation", "parse_move", "play", "resolve_variant"]
