"""The two learning rules of the self-play trainer behind one interface, chosen once by
``--algo``: masked PPO (:class:`PPO`) and Deep Monte-Carlo as in DouZero (:class:`DMC`). Each says
how the actor picks its moves, what the returns are, which samples train and the loss of a
minibatch; :func:`update` is the gradient loop they share."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from experiments.training.rollout import Rollout
from experiments.training.tensors import masked_logits, sample_legal

#: The loss terms every update reports (a rule that has no such term reports 0).
LOSS_TERMS = ("policy_loss", "value_loss", "entropy", "approx_kl")


class LearningRule(Protocol):
    """What differs between the algorithms; everything else of the trainer is shared."""

    @property
    def epochs(self) -> int:
        """Passes over a rollout per update."""
        ...

    @property
    def monte_carlo(self) -> bool:
        """Whether a return is the Monte-Carlo return of a finished game (no bootstrap; the
        decisions of games still running wait for the next rollout)."""
        ...

    def act(self, torch: Any, logits: Any, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The actor's moves for a batch of raw network outputs and legal masks (a numpy row of
        each game's legal actions), and their log-probabilities under the policy (what PPO's
        ratio needs)."""
        ...

    def loss(
        self,
        torch: Any,
        network: Any,
        observation: Any,
        rows: np.ndarray,
        rollout: Rollout,
        advantages: np.ndarray,
        warming_up: bool,
    ) -> tuple[Any, dict[str, float]]:
        """The minibatch ``rows``'s loss and its terms (:data:`LOSS_TERMS`)."""  # fmt: skip
        ...


@dataclass(frozen=True)
class PPO:
    """Masked PPO: a clipped ratio on normalised GAE advantages, a value loss, an entropy bonus.
    ``warming_up`` (``--value-warmup``) trains the value head alone on the trunk as it is."""

    clip: float
    entropy: float
    value_weight: float
    epochs: int
    monte_carlo: bool = False

    def act(self, torch: Any, logits: Any, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return sample_legal(torch, logits, masks)

    def loss(
        self, torch: Any, network: Any, observation: Any, rows: np.ndarray, rollout: Rollout, advantages: np.ndarray,
        warming_up: bool,
    ) -> tuple[Any, dict[str, float]]:  # fmt: skip
        assert rollout.returns is not None
        logits, value = network.forward(observation)
        mask = torch.from_numpy(rollout.masks[rows])
        action = torch.from_numpy(rollout.actions[rows])
        target = torch.from_numpy(rollout.returns[rows])
        old_log_prob = torch.from_numpy(rollout.log_probs[rows])
        legal_logits = masked_logits(torch, logits, mask)
        log_softmax = torch.log_softmax(legal_logits, dim=1)
        log_prob = log_softmax.gather(1, action.unsqueeze(1)).squeeze(1)
        advantage = torch.from_numpy(advantages[rows])
        ratio = (log_prob - old_log_prob).exp()
        clipped = ratio.clamp(1 - self.clip, 1 + self.clip)
        policy_loss = -torch.min(ratio * advantage, clipped * advantage).mean()
        value_loss = ((value - target) ** 2).mean()
        # softmax, not log_softmax.exp(): exp of the masked -1e9 entries is ten times slower.
        entropy = -(torch.softmax(legal_logits, dim=1) * log_softmax).sum(dim=1).mean()
        if warming_up:
            # The critic first, on the trunk as it is: a new value head knows nothing, and
            # training it through the shared trunk would change what the policy reads.
            head = network.value(network.trunk(observation).detach()).squeeze(-1)
            loss = ((head - target) ** 2).mean()
        else:
            loss = policy_loss + self.value_weight * value_loss - self.entropy * entropy
        with torch.no_grad():
            approx_kl = ((ratio - 1) - (log_prob - old_log_prob)).mean()
        terms = {"policy_loss": float(policy_loss.detach()), "value_loss": float(value_loss.detach()),
                 "entropy": float(entropy.detach()), "approx_kl": float(approx_kl)}  # fmt: skip
        return loss, terms


@dataclass(frozen=True)
class DMC:
    """Deep Monte-Carlo (DouZero): the policy head's outputs are Q-values, regressed on the final
    return of finished games; the actors are epsilon-greedy."""

    epsilon: float
    epochs: int = 1
    monte_carlo: bool = True

    def act(self, torch: Any, logits: Any, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        legal = torch.from_numpy(masks)
        q = masked_logits(torch, logits, legal)
        greedy = q.argmax(dim=1)
        explore = torch.rand(len(q)) < self.epsilon
        noise = torch.rand(q.shape).masked_fill(legal == 0, -1.0)
        return torch.where(explore, noise.argmax(dim=1), greedy).numpy(), np.zeros(len(q), np.float32)

    def loss(
        self, torch: Any, network: Any, observation: Any, rows: np.ndarray, rollout: Rollout, advantages: np.ndarray,
        warming_up: bool,
    ) -> tuple[Any, dict[str, float]]:  # fmt: skip
        assert rollout.returns is not None
        logits, _ = network.forward(observation)
        action = torch.from_numpy(rollout.actions[rows])
        q = logits.gather(1, action.unsqueeze(1)).squeeze(1)
        loss = ((q - torch.from_numpy(rollout.returns[rows])) ** 2).mean()
        return loss, {"value_loss": float(loss.detach())}


def learning_rule(algo: str, args: Any) -> LearningRule:
    """The rule ``--algo`` names, with its settings from the trainer's ``args``."""
    if algo == "dmc":
        return DMC(args.epsilon)
    return PPO(args.clip, args.entropy, args.value_weight, args.epochs)


def update(
    rule: LearningRule, network: Any, optimizer: Any, rollout: Rollout, rng: np.random.Generator, minibatch: int,
    max_grad_norm: float, warming_up: bool,
) -> dict[str, float]:  # fmt: skip
    """The gradient steps of one update on a rollout with its returns (its valid samples only for
    a Monte-Carlo rule; ``rng`` orders the minibatches); returns the mean loss terms."""
    from experiments.training.tensors import torch_module

    torch = torch_module()
    assert rollout.returns is not None and rollout.advantages is not None and rollout.valid is not None
    advantages = rollout.advantages
    if len(advantages) > 1:  # normalised over the whole rollout (a minibatch may hold one sample)
        advantages = ((advantages - advantages.mean()) / (advantages.std() + 1e-8)).astype(np.float32)
    index = np.flatnonzero(rollout.valid) if rule.monte_carlo else np.arange(len(rollout))
    totals = dict.fromkeys(LOSS_TERMS, 0.0)
    count = 0
    for _ in range(rule.epochs):
        rng.shuffle(index)
        for start in range(0, len(index), minibatch):
            rows = index[start : start + minibatch]
            observation = rollout.observations.take(rows).tensor(torch)
            loss, terms = rule.loss(torch, network, observation, rows, rollout, advantages, warming_up)
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(network.modules.parameters(), max_grad_norm)
            optimizer.step()
            for key, value in terms.items():
                totals[key] += value
            count += 1
    return {key: total / max(count, 1) for key, total in totals.items()}


__all__ = ["DMC", "LOSS_TERMS", "PPO", "LearningRule", "learning_rule", "update"]
