"""The JAX backend: the rules as pure ``jax.numpy`` functions, jit- and vmap-able (``docs/jax.md``).

::

    import jax
    from solitaire_env import jax as sj

    env = sj.make("RankAndFile-v0")
    state = env.init(jax.random.key(0))       # a random deal; env.init_deal(seed) deals as reset(seed=seed)
    state = env.step(state, action)           # jax.jit(jax.vmap(env.step)) for a batch
    state.observation, state.legal_action_mask, state.reward, state.terminated, state.truncated

A second implementation of :mod:`solitaire_env.engine.core`'s rules on the engine's own flat state
(:mod:`~solitaire_env.jax.layout`), tested step for step against the numba engine and the Gymnasium env
(``tests/test_jax.py``). Needs the ``jax`` extra: ``pip install "solitaire-env[jax]"``.
"""

try:
    import jax  # noqa: F401
except ImportError as err:  # pragma: no cover - only without the extra
    raise ImportError('solitaire_env.jax needs JAX: pip install "solitaire-env[jax]" (or pip install jax)') from err

from solitaire_env.jax.env import Env, State, make

__all__ = ["Env", "State", "make"]
