""":class:`MoveScorerPolicy`: a MaskablePPO policy that judges each move by what it does.

It reads the ``piles`` observation with its action features (``gym.make(id, obs_mode="piles",
action_features=True)``, :mod:`solitaire_env.engine.features`) and nothing else, so hidden cards can
never change its output. Every part shares its weights across the things of one kind:

==================  ==============================================================================
part                what it computes
==================  ==============================================================================
card slots          one vector per slot: an embedding of the card (52 cards, or empty / face down /
                    unseen) plus a linear map of its movable / to-foundation / height columns
places              per tableau pile: the sum of its slots' vectors and its pile row (length, face-down
                    cards, top run, top card), through one shared layer; per foundation slot: its row
                    (suit, cards, next rank) through another; the waste, stock and reserve: the mean
                    of their slots' vectors
context             mean and max over piles and over foundations, the three areas and the summary row,
                    through a two-layer MLP: the value head reads only this
move score          per allowed move, one shared MLP over: the embedding of the card that moves and of
                    the card it goes onto, its count, from / to areas, uncovers, empties, seen, the
                    vectors of its source and target place, and the context. Moves the observation's
                    ``allowed`` column rules out get a logit of -1e8, as the env's mask does
==================  ==============================================================================

With ``draw_card=True`` (a policy keyword) a draw's card is the one it turns face up: the stock's slot
under the cards it turns, read from the ``cards`` array (whose stock rows show the stock's order once
it has been seen: Klondike and Rainbow after the first pass), else the token of an unseen card. The
stock's slots are otherwise only pooled, so without it the policy cannot tell which card a draw
brings, which matters in draw 3, where the cards played from the waste decide which stock cards
ever come up.

Only the allowed moves are scored (about 10-30 of Rank and File's 243 action ids), so a forward
pass costs little more than the per-position part. ``MaskablePPO(MoveScorerPolicy, env)`` with the
env above; ``ortho_init`` defaults to off (the layers use PyTorch's default initialisation and the
last layer of the scorer starts small, so the first policy is close to uniform over legal moves).
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import torch
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from torch import nn

from solitaire_env.agents.policies import FastMaskablePolicy
from solitaire_env.engine import features as F

# Card tokens: 1-52 a card seen (the observation's code), 53 + state for a slot without one.
N_TOKENS = 53 + 4
# Scales that bring the integer columns to about 0..1.
_SUMMARY_SCALE = torch.tensor([104.0, 104.0, 24.0, 24.0, 2.0, 13.0, 60.0, 104.0, 10.0])
_A = {name: i for i, name in enumerate(F.ACTION_FEATURES)}


def _onehot(x: torch.Tensor, n: int) -> torch.Tensor:
    return nn.functional.one_hot(x.long().clamp(0, n - 1), n).float()


def _card_token(slots: torch.Tensor) -> torch.Tensor:
    """The token of each ``cards`` row: its card (1-52) when seen, else 53 + its state."""
    rank, suit = slots[..., F.F_RANK].long(), slots[..., F.F_SUIT].long()
    return torch.where(rank > 0, (suit - 1) * 13 + rank, 53 + slots[..., F.F_STATE].long())


class MoveScorer(BaseFeaturesExtractor):
    """The network of :class:`MoveScorerPolicy` (the module docstring says what each part does).

    ``forward`` returns ``[logits (n_actions), context (dim)]`` per observation; the policy splits them.
    """

    def __init__(self, observation_space: gym.spaces.Dict, n_actions: int, dim: int = 64, hidden: int = 128,
                 draw_card: bool = False) -> None:
        super().__init__(observation_space, n_actions + dim)
        need = {"cards", "piles", "foundations", "summary", "action_features"}
        if not isinstance(observation_space, gym.spaces.Dict) or not need <= set(observation_space.spaces):
            raise TypeError("MoveScorerPolicy needs the 'piles' observation with action features: "
                            "gym.make(id, obs_mode='piles', action_features=True)")
        self.n_actions, self.dim, self.draw_card = n_actions, dim, draw_card
        self.n_piles = observation_space["piles"].shape[0]
        self.n_found = observation_space["foundations"].shape[0]
        # The codes of "from" and "to" a game uses (free cells add one each), one-hot below.
        highs = observation_space["action_features"].high
        self.n_from, self.n_to = int(highs[..., _A["from"]].max()) + 1, int(highs[..., _A["to"]].max()) + 1
        self.token = nn.Embedding(N_TOKENS, dim)
        self.slot = nn.Linear(3, dim)
        self.pile = nn.Sequential(nn.Linear(dim + 4 + 5, dim), nn.ReLU())
        self.found = nn.Sequential(nn.Linear(5 + 2, dim), nn.ReLU())
        self.context = nn.Sequential(nn.Linear(7 * dim + 9, hidden), nn.ReLU(), nn.Linear(hidden, dim), nn.ReLU())
        # card, onto, count, from (5; 6 with free cells), to (6; 7), from a pile, uncovers, empties, seen, source,
        # target, context
        move_in = 2 * dim + 1 + self.n_from + self.n_to + 4 + 3 * dim
        self.score = nn.Sequential(nn.Linear(move_in, hidden), nn.ReLU(), nn.Linear(hidden, hidden // 2), nn.ReLU(),
                                   nn.Linear(hidden // 2, 1))
        with torch.no_grad():
            self.score[-1].weight.mul_(0.01)
            self.score[-1].bias.zero_()
        self.register_buffer("summary_scale", _SUMMARY_SCALE.clone(), persistent=False)

    def pool_slots(self, cards: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Per place, the sum of its card slots' vectors ``(b, P + 4, dim)`` and how many slots hold a
        card ``(b, P + 4, 1)``. Place 0 is unused, tableau pile p is place p + 1, the waste, stock and
        reserve places P + 1 .. P + 3."""
        b, d = cards.shape[0], self.dim
        # Card slots: only the occupied ones (a fifth to a third of them) get a vector; the empty ones
        # would add 0 to every sum below.
        rows, slots = torch.nonzero(cards[..., F.F_STATE] > 0, as_tuple=True)
        occupied = cards[rows, slots]  # (m, columns)
        token = _card_token(occupied)
        cols = torch.stack((occupied[:, F.F_MOVABLE], occupied[:, F.F_UP],
                            occupied[:, F.F_HEIGHT].clamp(max=13) / 13), -1)
        slot = torch.relu(self.token(token) + self.slot(cols))  # (m, d)
        # Pool per place: tableau pile p is group p + 1, the waste, stock and reserve groups P + 1..P + 3.
        # A slot's area and pile are fixed by its row (features.template), so one row's columns give the
        # grouping of all; the sums are one index_add over the occupied slots.
        area = cards[0, :, F.F_AREA].long()
        area = torch.where(area == F.AREA_CELL, F.AREA_RESERVE, area)  # no game has both: cells pool as a reserve
        group = torch.where(area == F.AREA_TABLEAU, cards[0, :, F.F_PILE].long(), self.n_piles + area)
        n_groups = self.n_piles + 4
        place = rows * n_groups + group[slots]
        pooled = slot.new_zeros(b * n_groups, d).index_add(0, place, slot).view(b, n_groups, d)
        counts = slot.new_zeros(b * n_groups).index_add(0, place, torch.ones_like(place, dtype=slot.dtype))
        return pooled, counts.view(b, n_groups, 1)

    def forward(self, obs: dict[str, torch.Tensor]) -> torch.Tensor:
        cards, piles, found = obs["cards"], obs["piles"], obs["foundations"]
        acts = obs["action_features"]
        b, d = cards.shape[0], self.dim
        pooled, counts = self.pool_slots(cards)
        tab = pooled[:, 1:self.n_piles + 1] / 8.0
        areas = pooled[:, self.n_piles + 1:] / counts[:, self.n_piles + 1:].clamp(min=1.0)
        pile_cols = torch.cat((piles[..., :3] / 13.0, piles[..., 3:4] / 13.0, _onehot(piles[..., 4], 5)), -1)
        pile_vec = self.pile(torch.cat((tab, pile_cols), -1))  # (b, P, d)
        found_cols = torch.cat((_onehot(found[..., 0], 5), found[..., 1:3] / 13.0), -1)
        found_vec = self.found(found_cols)  # (b, F, d)
        summary = obs["summary"] / self.summary_scale
        context = self.context(torch.cat((pile_vec.mean(1), pile_vec.amax(1), found_vec.mean(1), found_vec.amax(1),
                                          areas.reshape(b, 3 * d), summary), -1))
        # Places a move names: 0 none, 1..P the piles, P + 1.. the foundation slots.
        places = torch.cat((pile_vec.new_zeros(b, 1, d), pile_vec, found_vec), 1)
        logits = torch.full((b, self.n_actions), -1e8, dtype=pooled.dtype, device=pooled.device)
        rows, moves = torch.nonzero(acts[..., _A["allowed"]] > 0, as_tuple=True)
        if len(rows):
            a = acts[rows, moves]  # (m, 11)
            to = a[:, _A["to"]].long()
            to_index = a[:, _A["to_index"]].long()
            target = torch.where((to == F.TO_PILE) | (to == F.TO_EMPTY), to_index,
                                 torch.where(to == F.TO_FOUNDATION, self.n_piles + to_index, torch.zeros_like(to)))
            source = a[:, _A["from_pile"]].long()
            card = self.drawn_cards(cards, obs["summary"], rows, a) if self.draw_card else a[:, _A["card"]].long()
            x = torch.cat((self.token(card), self.token(a[:, _A["onto"]].long()),
                           a[:, _A["count"]:_A["count"] + 1] / 13.0, _onehot(a[:, _A["from"]], self.n_from),
                           _onehot(a[:, _A["to"]], self.n_to), (source > 0).float().unsqueeze(-1),
                           a[:, _A["uncovers"]:_A["seen"] + 1], places[rows, source], places[rows, target],
                           context[rows]), -1)
            logits = logits.index_put((rows, moves), self.score(x).squeeze(-1))
        return torch.cat((logits, context), -1)

    @staticmethod
    def drawn_cards(cards: torch.Tensor, summary: torch.Tensor, rows: torch.Tensor,
                    moves: torch.Tensor) -> torch.Tensor:
        """The card token of each move (``moves``: its action-feature rows, of observations ``rows``): the
        card column, and for a draw the token of the stock slot the drawn cards leave on top of the waste
        (stock slots lie bottom first, so depth stock size - count)."""
        token = moves[:, _A["card"]].long()
        area = cards[0, :, F.F_AREA]
        is_stock = area == F.AREA_STOCK
        if not bool(is_stock.any()):
            return token  # a game without stock rows (the stock is never shown): nothing to look up
        first = int(torch.argmax(is_stock.int()))
        draw = moves[:, _A["from"]] == F.FROM_STOCK
        depth = (summary[rows, 0] - moves[:, _A["count"]]).long().clamp(min=0)
        return torch.where(draw, _card_token(cards[rows, first + depth]), token)


class _Split(nn.Module):
    """SB3's ``mlp_extractor`` slot: the logits go to the actor as they are, the context to a value MLP."""

    def __init__(self, n_actions: int, dim: int, hidden: int) -> None:
        super().__init__()
        self.n_actions = n_actions
        self.latent_dim_pi, self.latent_dim_vf = n_actions, hidden
        self.value = nn.Sequential(nn.Linear(dim, hidden), nn.ReLU())

    def forward(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.forward_actor(features), self.forward_critic(features)

    def forward_actor(self, features: torch.Tensor) -> torch.Tensor:
        return features[:, :self.n_actions]

    def forward_critic(self, features: torch.Tensor) -> torch.Tensor:
        return self.value(features[:, self.n_actions:])


class MoveScorerPolicy(FastMaskablePolicy):
    """MaskablePPO policy over :class:`MoveScorer` (the module docstring). ``policy_kwargs``: ``dim``
    (place and context vectors, 64), ``hidden`` (the MLPs' width, 128) and ``draw_card`` (a draw's card
    is the one it turns up, off by default)."""

    def __init__(self, observation_space: gym.spaces.Space, action_space: gym.spaces.Space, lr_schedule: Any,
                 dim: int = 64, hidden: int = 128, draw_card: bool = False, **kwargs: Any) -> None:
        self._dims, self._draw_card = (dim, hidden), draw_card
        kwargs.setdefault("ortho_init", False)
        kwargs["features_extractor_class"] = MoveScorer
        kwargs["features_extractor_kwargs"] = {"n_actions": int(action_space.n), "dim": dim, "hidden": hidden,
                                               "draw_card": draw_card}
        super().__init__(observation_space, action_space, lr_schedule, **kwargs)

    def _build_mlp_extractor(self) -> None:
        dim, hidden = self._dims
        self.mlp_extractor = _Split(int(self.action_space.n), dim, hidden)

    def _build(self, lr_schedule: Any) -> None:
        super()._build(lr_schedule)
        self.action_net = nn.Identity()  # the extractor's logits are the action logits
        self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs)

    def _get_constructor_parameters(self) -> dict[str, Any]:
        data = super()._get_constructor_parameters()
        data.update(dim=self._dims[0], hidden=self._dims[1])
        if self._draw_card:  # (policies saved without the option load as before)
            data.update(draw_card=True)
        for key in ("features_extractor_class", "features_extractor_kwargs"):
            data.pop(key, None)  # set by __init__ from dim and hidden
        return data


__all__ = ["MoveScorer", "MoveScorerPolicy"]
