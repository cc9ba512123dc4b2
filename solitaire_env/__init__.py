"""solitaire-env: Gymnasium environments for Rank and File, Number Ten, Rainbow, FreeCell and Klondike.

``import solitaire_env`` registers ``RankAndFile-v0``, ``NumberTen-v0``, ``Rainbow-v0``, ``FreeCell-v0`` and
``Klondike-v0``. The rules engine (:class:`Game`, :mod:`solitaire_env.engine.core`) has no Gymnasium
dependency.
"""

from solitaire_env.engine.game import Game
from solitaire_env.engine.games import FREECELL, KLONDIKE, NUMBER_TEN, RAINBOW, RANK_AND_FILE, VARIANTS, get_variant
from solitaire_env.engine.moves import Move
from solitaire_env.engine.variant import Variant
from solitaire_env.envs.registration import ENV_IDS, register_envs

__version__ = "0.2.0"

register_envs()

__all__ = ["ENV_IDS", "FREECELL", "Game", "KLONDIKE", "Move", "NUMBER_TEN", "RAINBOW", "RANK_AND_FILE", "VARIANTS",
           "Variant", "get_variant"]
