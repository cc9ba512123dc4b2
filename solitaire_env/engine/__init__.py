"""The rules engine: cards, the game variants, the compiled rules, moves, deals and the JSON state.

No Gymnasium and no agents in here: the envs, the solver, the agents and the tools import the engine,
never the reverse. :class:`~solitaire_env.engine.game.Game` is its Python face.
"""
