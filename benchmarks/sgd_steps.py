"""The training step every engine_vs_torch workload times, on each side: forward,
cross-entropy, backward and SGD with momentum on one fixed batch, returning the loss."""

from __future__ import annotations

LR, MOMENTUM = 0.05, 0.9


def engine_step(net, x, y):
    """A step of engine network `net` on NumPy arrays `x`, `y` (int64 class indices)."""
    import engine
    from engine import Tensor, nn

    loss_fn = nn.CrossEntropyLoss()
    opt = nn.SGD(net.trainable_params(), learning_rate=LR, momentum=MOMENTUM)
    net.set_train()
    x, y = Tensor(x), Tensor(y)
    grad_fn = engine.value_and_grad(lambda a, b: loss_fn(net(a), b), None, opt.parameters)

    def step():
        loss, grads = grad_fn(x, y)
        opt(grads)
        return float(loss.asnumpy())

    return step


def torch_step(net, x, y):
    """The same step of torch module `net`."""
    import torch

    x, y = torch.from_numpy(x), torch.from_numpy(y)
    loss_fn = torch.nn.CrossEntropyLoss()
    opt = torch.optim.SGD(net.parameters(), lr=LR, momentum=MOMENTUM)
    net.train()

    def step():
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(net(x), y)
        loss.backward()
        opt.step()
        return float(loss.detach())

    return step
