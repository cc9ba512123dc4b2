"""One Gymnasium env per game; :class:`~solitaire_env.envs.base.SolitaireEnv` holds what they share."""

from solitaire_env.envs.base import SolitaireEnv
from solitaire_env.envs.freecell import FreeCellEnv
from solitaire_env.envs.klondike import KlondikeEnv
from solitaire_env.envs.number_ten import NumberTenEnv
from solitaire_env.envs.rainbow import RainbowEnv
from solitaire_env.envs.rank_and_file import RankAndFileEnv

__all__ = ["FreeCellEnv", "KlondikeEnv", "NumberTenEnv", "RainbowEnv", "RankAndFileEnv", "SolitaireEnv"]
